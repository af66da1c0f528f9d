"""The eval report of a run log: rich tables on the console, and ``report.md`` +
``report.html`` through the shared renderer, with plots.

Reads the log only. Tables: overall retrieval metrics, per tool (pass counts, metrics,
latency), per derived case family (accuracy, answers about another product, misses), per source
organisation, calibration of the published confidence (overall, per tool and family:
evals/read/calibration.py), the hybrid / vector / keyword ablation, ragas, failures.
Plots: metric bars per tool with bootstrap intervals, reliability diagrams and risk-coverage
curves, the ablation, latency per tool against its p50/p95 targets.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from evals import registry, render
from evals.read import calibration, calibration_report, plots, slo, stats
from evals.read.families import family_stats
from evals.render import Table as Section
from evals.run import aggregates
from evals.run.metrics import METRIC_NAMES, aggregate, metrics_frame
from evals.run.runlog import DEFAULT_MODE, RunLog, ScenarioRecord
from ocm_common.percentiles import DEFINITION

ABLATION_MODES = ("hybrid", "vector", "keyword")
MAX_FAILING_ROWS = 200
MISSES_PER_FAMILY = 10
PLOTTED = ("nDCG@10", "R@5", "RR@10")
label = registry.label


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, int | float):
        return f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    return str(value)


def _metric_rows(frame: pd.DataFrame) -> list[list[str]]:
    return [
        [str(index), str(int(row["queries"])), *(_num(row[m]) for m in METRIC_NAMES)]
        for index, row in frame.iterrows()
    ]


def build_tables(log: RunLog, cal: calibration.Calibration | None = None) -> list[Section]:
    """Every table of the report, computed from the run log's records (``cal``: its
    calibration, when already computed)."""
    records = log.records
    main = log.by_mode(DEFAULT_MODE)
    frame = metrics_frame(records)
    main_frame = frame[frame["mode"] == DEFAULT_MODE]
    metric_cols = [label(m) for m in METRIC_NAMES]
    sections: list[Section] = []

    sections.append(
        Section(
            ["", "queries", *metric_cols],
            _metric_rows(aggregate(main_frame)),
            "Overall retrieval (main pass)",
        )
    )

    latency = aggregates.latency(records)["per_tool"]
    per_tool_metrics = aggregate(main_frame, "tool")
    # tools with judged scenarios whose descriptor names no ids: retrieval not measured, not 0
    unmeasured = {r.tool for r in main if r.relevant and not r.ids_measured}
    rows = []
    for tool in sorted({r.tool for r in main}):
        tool_records = [r for r in main if r.tool == tool]
        passed = sum(r.passed for r in tool_records)
        metrics_row = per_tool_metrics.loc[tool] if tool in per_tool_metrics.index else None
        lat = latency.get(tool, {})
        queries = "not measured" if tool in unmeasured else "0"
        rows.append(
            [
                tool,
                f"{passed}/{len(tool_records)}",
                str(int(metrics_row["queries"])) if metrics_row is not None else queries,
                *(_num(metrics_row[m]) if metrics_row is not None else "-" for m in METRIC_NAMES),
                _num(lat.get("p50_ms"), 1),
                _num(lat.get("p95_ms"), 1),
            ]
        )
    sections.append(
        Section(
            ["tool", "passed", "queries", *metric_cols, "p50 ms", "p95 ms"],
            rows,
            "Per tool",
            note=f"p50/p95: {DEFINITION}."
            + (
                f" Retrieval not measured for {', '.join(sorted(unmeasured))} "
                "(no ids in the tool descriptor)."
                if unmeasured
                else ""
            ),
        )
    )

    sections += family_sections(main)

    sections.append(
        Section(
            ["org", "queries", *metric_cols],
            _metric_rows(aggregate(main_frame, "org")),
            "Per source organisation",
        )
    )
    sections.append(calibration_report.table(cal or calibration.from_log(log)))

    by_mode = aggregate(frame, "mode")
    ablation_rows = [
        [
            mode,
            str(int(by_mode.loc[mode]["queries"])),
            *(_num(by_mode.loc[mode][m]) for m in METRIC_NAMES),
        ]
        for mode in ABLATION_MODES
        if mode in by_mode.index
    ]
    note = ""
    if {"hybrid", "vector", "keyword"} <= set(by_mode.index):
        ndcg = "nDCG@10"
        best_single = max(by_mode.loc["vector"][ndcg], by_mode.loc["keyword"][ndcg])
        note = f"hybrid nDCG@10 minus best single mode: {by_mode.loc['hybrid'][ndcg] - best_single:+.3f}"
    elif not ablation_rows:
        note = "no ablation in this run (use --ablation)"
    sections.append(
        Section(["mode", "queries", *metric_cols], ablation_rows, "Search-mode ablation", note)
    )

    ragas = aggregates.build(records)["ragas"]
    names = sorted({name for values in ragas["per_tool"].values() for name in values})
    ragas_rows = [["all", *(_num(ragas["overall"].get(n)) for n in names)]] if names else []
    ragas_rows += [
        [tool, *(_num(values.get(n)) for n in names)] for tool, values in ragas["per_tool"].items()
    ]
    sections.append(Section(["", *names], ragas_rows, "ragas"))

    failing = [r for r in main if not r.passed]
    shown = failing[:MAX_FAILING_ROWS]
    note = "none" if not failing else ""
    if len(failing) > len(shown):
        note = f"first {len(shown)} of {len(failing)}; every miss is in scenarios.jsonl"
    sections.append(
        Section(
            ["scenario", "tool", "status", "reason"],
            [
                [r.id, r.tool, r.status + (" (critical)" if r.critical else ""), r.reason()[:200]]
                for r in shown
            ],
            "Failing scenarios",
            note,
        )
    )
    return sections


def family_sections(records: Sequence[ScenarioRecord]) -> list[Section]:
    """Accuracy per derived case family, and each family's first misses (none for golden runs)."""
    stats = family_stats(records)
    if not stats:
        return []
    table = Section(
        ["family", "tool", "cases", "right", "accuracy", "another product, unsaid"],
        [
            [
                s.family,
                s.tool,
                str(s.cases),
                str(s.passed),
                f"{s.accuracy:.1%}",
                str(s.wrong_product),
            ]
            for s in stats.values()
        ],
        "Per case family",
    )
    misses = Section(
        ["family", "case", "reason"],
        [
            [s.family, r.id, r.reason()[:200]]
            for s in stats.values()
            for r in s.misses[:MISSES_PER_FAMILY]
        ],
        f"Misses by family (first {MISSES_PER_FAMILY} each)",
        "" if any(s.misses for s in stats.values()) else "none",
    )
    return [table, misses]


def header_lines(log: RunLog) -> list[str]:
    s = log.summary
    commit = (s.git.get("commit") or "uncommitted")[:12]
    counts = s.counts
    return [
        f"target: {s.target}  commit: {commit}{' (dirty)' if s.git.get('dirty') else ''}  "
        f"started: {s.started_at}  duration: {s.duration_s:.1f}s  status: {s.status}",
        f"scenarios: {counts.get('passed', 0)}/{counts.get('scenarios', 0)} passed, "
        f"{counts.get('failed', 0)} failed, {counts.get('errors', 0)} errors; "
        f"retrieval queries: {counts.get('retrieval_queries', 0)}"
        + (
            f" ({counts['retrieval_not_measured']} more not measured: no ids, or only the"
            " backend's own)"
            if counts.get("retrieval_not_measured")
            else ""
        )
        + (
            f"; {counts['checks_not_checked']} check(s) not checked (nothing to judge)"
            if counts.get("checks_not_checked")
            else ""
        )
        + (
            f"; {counts['passed_judging_no_fact']} passed with no fact judged (every fact"
            " check read something this backend does not publish)"
            if counts.get("passed_judging_no_fact")
            else ""
        )
        + f"; modes: {', '.join(s.modes)}",
    ]


def print_report(log: RunLog, console: Console | None = None) -> None:
    # Wide enough for the per-tool table when stdout is a CI log rather than a terminal.
    console = console or Console(width=None if sys.stdout.isatty() else 180)
    for line in header_lines(log):
        console.print(line)
    for section in build_tables(log):
        table = Table(title=section.title, title_justify="left")
        for column in section.columns:
            table.add_column(
                column,
                justify="left"
                if column in ("", "tool", "org", "mode", "scenario", "reason")
                else "right",
            )
        for row in section.rows:
            table.add_row(*row)
        if section.rows:
            console.print(table)
        else:
            console.print(f"[bold]{section.title}[/]: {section.note or 'nothing to show'}")
            continue
        if section.note:
            console.print(f"  {section.note}")


def _estimates(
    frame: pd.DataFrame, by: str, metrics: Sequence[str]
) -> dict[str, dict[str, plots.Estimate]]:
    """Mean and bootstrap 95% interval of each metric per group (tool or mode)."""
    out: dict[str, dict[str, plots.Estimate]] = {}
    for key, group in frame.groupby(by, sort=True):
        out[str(key)] = {}
        for metric in metrics:
            values = group[metric].astype(float).tolist()
            low, high = stats.bootstrap_ci(values)
            out[str(key)][label(metric)] = plots.Estimate(sum(values) / len(values), low, high)
    return out


def build_figures(log: RunLog) -> list[render.Figure]:
    """Metric bars per tool, the ablation and latency per tool, from the run log's records."""
    frame = metrics_frame(log.records)
    main_frame = frame[frame["mode"] == DEFAULT_MODE]
    series = [label(m) for m in PLOTTED]
    figures: list[render.Figure] = []
    if not main_frame.empty:
        figures.append(
            render.Figure(
                "metrics_per_tool",
                plots.grouped_bars(
                    _estimates(main_frame, "tool", PLOTTED),
                    series,
                    title="Retrieval metrics per tool",
                ),
                "Mean over the tool's judged scenarios; whiskers are bootstrap 95% intervals.",
            )
        )
    modes = frame[frame["mode"].isin(ABLATION_MODES)]
    if not modes.empty:
        per_mode = _estimates(modes, "mode", PLOTTED)
        ordered = {m: per_mode[m] for m in ABLATION_MODES if m in per_mode}
        figures.append(
            render.Figure(
                "ablation",
                plots.grouped_bars(
                    ordered, series, title="Search-mode ablation: hybrid, vector, keyword"
                ),
                "The retrieval scenarios run again with one path forced off (whiskers: 95% intervals).",
            )
        )
    samples: dict[str, list[float]] = {}
    for record in log.by_mode(DEFAULT_MODE):
        if record.latency_ms is not None:
            samples.setdefault(record.tool, []).append(record.latency_ms)
    if samples:
        ordered_samples = dict(sorted(samples.items()))
        figures.append(
            render.Figure(
                "latency_per_tool",
                plots.latency_distribution(
                    ordered_samples,
                    title="Latency per call by tool (eval run)",
                    targets={t: slo.targets_for(t) for t in ordered_samples},
                ),
                "Each dot is one call; bars mark p50 and p95; triangles are the tool's p50/p95 "
                f"targets ({slo.source()}).",
            )
        )
    return figures


def document(log: RunLog) -> render.Document:
    doc = render.Document("Eval report", meta=header_lines(log))
    counts = log.summary.counts
    passed, total = counts.get("passed", 0), counts.get("scenarios", 0)
    doc.verdict = render.Paragraph(
        f"{passed}/{total} scenarios passed", "good" if passed == total else "warn"
    )
    figures = {f.name: f for f in build_figures(log)}
    cal = calibration.from_log(log)
    for table in build_tables(log, cal):
        section = doc.section(table.title, render.Table(table.columns, table.rows, note=table.note))
        if table.title == calibration_report.TITLE:
            section.add(*calibration_report.figures(cal))
        if table.title == "Per tool" and "metrics_per_tool" in figures:
            section.add(figures["metrics_per_tool"])
        if table.title == "Per tool" and "latency_per_tool" in figures:
            section.add(figures["latency_per_tool"])
        if table.title == "Search-mode ablation" and "ablation" in figures:
            section.add(figures["ablation"])
    return doc


def to_markdown(log: RunLog) -> str:
    return render.to_markdown(document(log), "report_figures")


def write_report(run_dir: Path, console: Console | None = None) -> Path:
    """Print the report of ``run_dir`` and write ``report.md`` + ``report.html`` next to the log."""
    log = RunLog.read(run_dir)
    print_report(log, console)
    return render.write(document(log), run_dir, "report")["markdown"]
