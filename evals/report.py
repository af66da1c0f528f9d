"""Human-readable report of a run log: rich tables on the console and ``report.md``.

Reads the log only. Tables: overall retrieval metrics, per tool (pass counts, metrics,
latency), per source organisation, the hybrid / vector / keyword ablation, ragas, failures.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from evals import aggregates
from evals.metrics import METRIC_NAMES, aggregate, label, metrics_frame
from evals.runlog import DEFAULT_MODE, RunLog

ABLATION_MODES = ("hybrid", "vector", "keyword")


@dataclass(frozen=True)
class Section:
    """One titled table: header and rows of already formatted cells."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


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


def build_sections(log: RunLog) -> list[Section]:
    """Every table of the report, computed from the run log's records."""
    records = log.records
    main = log.by_mode(DEFAULT_MODE)
    frame = metrics_frame(records)
    main_frame = frame[frame["mode"] == DEFAULT_MODE]
    metric_cols = [label(m) for m in METRIC_NAMES]
    sections: list[Section] = []

    sections.append(
        Section(
            "Overall retrieval (main pass)",
            ["", "queries", *metric_cols],
            _metric_rows(aggregate(main_frame)),
        )
    )

    latency = aggregates.latency(records)["per_tool"]
    per_tool_metrics = aggregate(main_frame, "tool")
    rows = []
    for tool in sorted({r.tool for r in main}):
        tool_records = [r for r in main if r.tool == tool]
        passed = sum(r.passed for r in tool_records)
        metrics_row = per_tool_metrics.loc[tool] if tool in per_tool_metrics.index else None
        lat = latency.get(tool, {})
        rows.append(
            [
                tool,
                f"{passed}/{len(tool_records)}",
                str(int(metrics_row["queries"])) if metrics_row is not None else "0",
                *(_num(metrics_row[m]) if metrics_row is not None else "-" for m in METRIC_NAMES),
                _num(lat.get("p50_ms"), 1),
                _num(lat.get("p95_ms"), 1),
            ]
        )
    sections.append(
        Section("Per tool", ["tool", "passed", "queries", *metric_cols, "p50 ms", "p95 ms"], rows)
    )

    sections.append(
        Section(
            "Per source organisation",
            ["org", "queries", *metric_cols],
            _metric_rows(aggregate(main_frame, "org")),
        )
    )

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
        Section("Search-mode ablation", ["mode", "queries", *metric_cols], ablation_rows, note)
    )

    ragas = aggregates.build(records)["ragas"]
    names = sorted({name for values in ragas["per_tool"].values() for name in values})
    ragas_rows = [["all", *(_num(ragas["overall"].get(n)) for n in names)]] if names else []
    ragas_rows += [
        [tool, *(_num(values.get(n)) for n in names)] for tool, values in ragas["per_tool"].items()
    ]
    sections.append(Section("ragas", ["", *names], ragas_rows))

    failing = [r for r in main if not r.passed]
    sections.append(
        Section(
            "Failing scenarios",
            ["scenario", "tool", "status", "reason"],
            [
                [r.id, r.tool, r.status + (" (critical)" if r.critical else ""), r.reason()[:200]]
                for r in failing
            ],
            "" if failing else "none",
        )
    )
    return sections


def header_lines(log: RunLog) -> list[str]:
    s = log.summary
    commit = (s.git.get("commit") or "uncommitted")[:12]
    counts = s.counts
    return [
        f"target: {s.target}  commit: {commit}{' (dirty)' if s.git.get('dirty') else ''}  "
        f"started: {s.started_at}  duration: {s.duration_s:.1f}s  status: {s.status}",
        f"scenarios: {counts.get('passed', 0)}/{counts.get('scenarios', 0)} passed, "
        f"{counts.get('failed', 0)} failed, {counts.get('errors', 0)} errors; "
        f"retrieval queries: {counts.get('retrieval_queries', 0)}; modes: {', '.join(s.modes)}",
    ]


def print_report(log: RunLog, console: Console | None = None) -> None:
    # Wide enough for the per-tool table when stdout is a CI log rather than a terminal.
    console = console or Console(width=None if sys.stdout.isatty() else 180)
    for line in header_lines(log):
        console.print(line)
    for section in build_sections(log):
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


def to_markdown(log: RunLog, sections: Sequence[Section] | None = None) -> str:
    lines = ["# Eval report", ""] + [f"- {line}" for line in header_lines(log)] + [""]
    for section in sections or build_sections(log):
        lines += [f"## {section.title}", ""]
        if section.rows:
            lines.append("| " + " | ".join(section.columns) + " |")
            lines.append("| " + " | ".join("---" for _ in section.columns) + " |")
            lines += [
                "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
                for row in section.rows
            ]
            lines.append("")
        if section.note:
            lines += [section.note, ""]
    return "\n".join(lines)


def write_report(run_dir: Path, console: Console | None = None) -> Path:
    """Print the report of ``run_dir`` and write ``report.md`` next to the log."""
    log = RunLog.read(run_dir)
    print_report(log, console)
    path = run_dir / "report.md"
    path.write_text(to_markdown(log), encoding="utf-8")
    return path
