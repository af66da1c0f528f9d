"""Run-level aggregates written into the run record's summary (recomputable from the records)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from evals.run.metrics import PerTool, retrieval_aggregates
from evals.run.ragas_metrics import ragas_aggregates
from evals.run.runlog import DEFAULT_MODE, ScenarioRecord
from ocm_common.percentiles import pct

# Checks on an answer's form, not its facts: passing only these judged nothing.
FORM_CHECKS = frozenset({"no_tool_error", "schema_valid", "citations_resolve"})


def judged_no_fact(record: ScenarioRecord) -> bool:
    """A passed scenario with fact checks, none of which found anything to judge (each reads
    something this backend does not publish): it passed on form alone."""
    facts = [c for c in record.checks if c.check not in FORM_CHECKS]
    return record.status == "passed" and bool(facts) and not any(c.checked for c in facts)


def counts(records: Sequence[ScenarioRecord]) -> dict[str, int]:
    """Scenario outcome counts for the main pass."""
    main = [r for r in records if r.mode == DEFAULT_MODE]
    not_measured = sum(bool(r.relevant) and not r.ids_measured for r in main)
    not_checked = sum(not c.checked for r in main for c in r.checks)
    no_fact = sum(judged_no_fact(r) for r in main)
    return {
        "scenarios": len(main),
        "passed": sum(r.status == "passed" for r in main),
        "failed": sum(r.status == "failed" for r in main),
        "errors": sum(r.status == "error" for r in main),
        "critical": sum(r.critical for r in main),
        "critical_failed": sum(r.critical and not r.passed for r in main),
        "retrieval_queries": sum(bool(r.relevant) and r.ids_measured for r in main),
        "ablation_records": len(records) - len(main),
        # judged scenarios of tools that name no ids: retrieval not measured (only when any)
        **({"retrieval_not_measured": not_measured} if not_measured else {}),
        # checks that found nothing to judge (not passes): said, never folded into "passed"
        **({"checks_not_checked": not_checked} if not_checked else {}),
        # passed scenarios whose every fact check was not checked: said, not hidden in "passed"
        **({"passed_judging_no_fact": no_fact} if no_fact else {}),
    }


def scenario_rates(records: Sequence[ScenarioRecord]) -> PerTool:
    """Pass rate overall and per tool (main pass): the gate's ``pass_rate`` metric."""
    main = [r for r in records if r.mode == DEFAULT_MODE]
    if not main:
        return {"overall": {}, "per_tool": {}}
    frame = pd.DataFrame([{"tool": r.tool, "pass_rate": float(r.passed)} for r in main])
    per_tool = frame.groupby("tool", sort=True)["pass_rate"].agg(["mean", "size"])
    return {
        "overall": {"pass_rate": float(frame["pass_rate"].mean()), "scenarios": float(len(frame))},
        "per_tool": {
            str(tool): {"pass_rate": float(row["mean"]), "scenarios": float(row["size"])}
            for tool, row in per_tool.iterrows()
        },
    }


def latency(records: Sequence[ScenarioRecord]) -> PerTool:
    """Client-measured latency percentiles and mean server path timings, per tool."""
    rows = []
    for r in records:
        if r.mode != DEFAULT_MODE or r.latency_ms is None:
            continue
        row: dict[str, str | float | None] = {"tool": r.tool, "latency_ms": r.latency_ms}
        for key in ("sql", "vector", "total"):
            row[f"{key}_ms"] = r.timings_ms.get(key)
        rows.append(row)
    if not rows:
        return {"overall": {}, "per_tool": {}}
    frame = pd.DataFrame(rows)
    for column in ("sql_ms", "vector_ms", "total_ms"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")

    def summarise(group: pd.DataFrame) -> dict[str, float]:
        out = {
            "calls": float(len(group)),
            "p50_ms": pct(group["latency_ms"].to_numpy(), 50),
            "p95_ms": pct(group["latency_ms"].to_numpy(), 95),
            "max_ms": float(group["latency_ms"].max()),
        }
        for column in ("sql_ms", "vector_ms", "total_ms"):
            mean = group[column].mean()
            if not pd.isna(mean):
                out[f"server_{column.removesuffix('_ms')}_mean_ms"] = float(mean)
        return out

    return {
        "overall": summarise(frame),
        "per_tool": {
            str(tool): summarise(group) for tool, group in frame.groupby("tool", sort=True)
        },
    }


def build(records: Sequence[ScenarioRecord]) -> dict[str, Any]:
    """Every aggregate the summary carries: {scenarios, latency and ragas: :class:`PerTool`,
    retrieval: :class:`RetrievalAggregates`} (typed as ``RunSummary.aggregates`` is)."""
    return {
        "scenarios": scenario_rates(records),
        "retrieval": retrieval_aggregates(records),
        "ragas": ragas_aggregates(records),
        "latency": latency(records),
    }
