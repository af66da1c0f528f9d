"""Rank-aware retrieval metrics, computed by ir-measures with the pytrec_eval backend.

Plain shapes in, plain shapes out: qrels ``{query_id: {doc_id: grade}}`` and runs
``{query_id: {doc_id: score}}``. Scores are ``n - rank`` so they strictly decrease within a
query (libraries break ties differently). Only scenarios with graded judgments are queries; a
query with judgments and no results is scored 0, never dropped; a query whose tool names no ids
(``ids_measured`` false) is not measured at all. nDCG uses the grade itself as
the gain (pytrec_eval / trec_eval convention).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict

import ir_measures
import pandas as pd

from evals import registry
from evals.run.public_keys import public_judgments, public_ranking
from evals.run.runlog import DEFAULT_MODE, ScenarioRecord

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


class PerTool(TypedDict):
    """A run-level aggregate: its values overall and per tool (main pass)."""

    overall: dict[str, float]
    per_tool: dict[str, dict[str, float]]


class RetrievalAggregates(PerTool):
    """Retrieval metrics overall, per tool and per organisation (main pass), per mode (all)."""

    per_org: dict[str, dict[str, float]]
    per_mode: dict[str, dict[str, float]]


METRIC_NAMES: tuple[str, ...] = registry.RETRIEVAL_METRICS
# The ir-measures measure behind each registered retrieval metric (its canonical name parses).
MEASURES: dict[str, ir_measures.Measure] = {
    name: ir_measures.parse_measure(name) for name in METRIC_NAMES
}


def ranked_run(ranked_ids: Sequence[str]) -> dict[str, float]:
    """A ranked id list as a run entry: score ``n - rank`` (strictly decreasing)."""
    total = len(ranked_ids)
    return {doc: float(total - rank) for rank, doc in enumerate(ranked_ids)}


def qrels_and_run(records: Iterable[ScenarioRecord]) -> tuple[Qrels, Run]:
    """qrels and run for the retrieval queries among ``records`` (those with judgments), both
    keyed by public keys where an id names one."""
    qrels: Qrels = {}
    run: Run = {}
    for record in records:
        if record.relevant and record.ids_measured:
            qrels[record.id] = public_judgments(record.relevant)
            run[record.id] = ranked_run(public_ranking(record.retrieved_ids))
    return qrels, run


def per_query(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] = METRIC_NAMES,
) -> dict[str, dict[str, float]]:
    """Metric values for every query in ``qrels``; queries missing from ``run`` score 0.

    Inputs are not modified.
    """
    if not qrels:
        return {}
    measures = [MEASURES[registry.canonical(name)] for name in metrics]
    names = [str(m) for m in measures]
    full_run = {qid: dict(run.get(qid, {})) for qid in qrels}
    scores: dict[str, dict[str, float]] = {qid: dict.fromkeys(names, 0.0) for qid in qrels}
    judged = {qid: dict(docs) for qid, docs in qrels.items()}
    evaluator = ir_measures.pytrec_eval.evaluator(measures, judged)
    for metric in evaluator.iter_calc(full_run):
        if metric.query_id in scores:
            scores[metric.query_id][str(metric.measure)] = float(metric.value)
    return scores


def mean_scores(values: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over queries (the usual macro average)."""
    if not values:
        return {}
    frame = pd.DataFrame.from_dict(dict(values), orient="index")
    return {str(k): float(v) for k, v in frame.mean().items()}


def score_records(records: Sequence[ScenarioRecord]) -> list[ScenarioRecord]:
    """Copies of ``records`` with per-query retrieval metrics attached, one mode at a time."""
    scored: dict[tuple[str, str], dict[str, float]] = {}
    for mode in sorted({r.mode for r in records}):
        qrels, run = qrels_and_run(r for r in records if r.mode == mode)
        for qid, values in per_query(qrels, run).items():
            scored[(mode, qid)] = values
    return [
        record.model_copy(update={"metrics": scored[(record.mode, record.id)]})
        if (record.mode, record.id) in scored
        else record
        for record in records
    ]


def metrics_frame(records: Iterable[ScenarioRecord]) -> pd.DataFrame:
    """One row per retrieval query and mode: id, tool, org, mode, critical + metric columns."""
    rows = [
        {
            "id": r.id,
            "tool": r.tool,
            "org": r.org,
            "mode": r.mode,
            "critical": r.critical,
            **{name: r.metrics.get(name, 0.0) for name in METRIC_NAMES},
        }
        for r in records
        if r.relevant and r.ids_measured
    ]
    columns = ["id", "tool", "org", "mode", "critical", *METRIC_NAMES]
    return pd.DataFrame(rows, columns=columns)


def aggregate(frame: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Mean of every metric (and the query count), overall or grouped by ``by``."""
    if frame.empty:
        index = pd.Index([], name=by) if by else pd.Index([])
        return pd.DataFrame(columns=["queries", *METRIC_NAMES], index=index)
    metric_cols = list(METRIC_NAMES)
    if by is None:
        row = frame[metric_cols].mean().to_dict()
        row["queries"] = len(frame)
        return pd.DataFrame([row], index=pd.Index(["all"]), columns=["queries", *metric_cols])
    grouped = frame.groupby(by, sort=True)
    out = grouped[metric_cols].mean()
    out.insert(0, "queries", grouped.size())
    return out


def frame_to_dict(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """A metrics table as ``{row: {metric: value}}`` for JSON."""
    return {
        str(index): {str(col): float(value) for col, value in row.items()}
        for index, row in frame.iterrows()
    }


def retrieval_aggregates(records: Sequence[ScenarioRecord]) -> RetrievalAggregates:
    """Overall / per tool / per organisation (main pass) and per mode (all passes)."""
    frame = metrics_frame(records)
    main = frame[frame["mode"] == DEFAULT_MODE]
    overall = frame_to_dict(aggregate(main)).get("all", {})
    return {
        "overall": overall,
        "per_tool": frame_to_dict(aggregate(main, "tool")),
        "per_org": frame_to_dict(aggregate(main, "org")),
        "per_mode": frame_to_dict(aggregate(frame, "mode")),
    }
