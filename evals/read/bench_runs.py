"""The bench report's sections read from the runs' own files and the distinct-query mix: locust's
history CSVs (rate and p95 over time), the latency records, and the mix's figures."""

from __future__ import annotations

import csv
from pathlib import Path

from evals import render
from evals.read import plots
from evals.read.bench_sections import num
from ocm_common.bench_summary import DISTINCT_KIND, BenchSummary
from ocm_common.latency_records import LatencyRecord


def history(path: Path) -> tuple[list[float], list[float], list[float]]:
    """Seconds since start, aggregated calls/s and aggregated p95 from a locust history CSV."""
    times: list[float] = []
    rps: list[float] = []
    p95: list[float] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row.get("Name") != "Aggregated":
                continue
            try:
                stamp = float(row["Timestamp"])
                rate = float(row.get("Requests/s") or 0.0)
                p = row.get("95%") or "0"
                high = float(p) if p not in ("N/A", "") else float("nan")
            except (KeyError, ValueError):
                continue
            times.append(stamp)
            rps.append(rate)
            p95.append(high)
    start = times[0] if times else 0.0
    return [t - start for t in times], rps, p95


def _profile_name(path: Path, directory: Path) -> str:
    """``latency`` for ``<dir>/latency_stats_history.csv``, ``sub/x`` one folder down."""
    return str(path.relative_to(directory)).removesuffix("_stats_history.csv")


def mix_section(doc: render.Document, summary: BenchSummary) -> None:
    """Golden and the distinct-query mix side by side, per profile run on both: throughput,
    errors, the server's embedding-cache hit rate and CPU per call, then p95 per tool."""
    runs = summary.locust_runs()
    pairs = [
        (name, runs[name], runs[f"{name}-{DISTINCT_KIND}"])
        for name in ("latency", "paced", "saturation")
        if name in runs and f"{name}-{DISTINCT_KIND}" in runs
    ]
    if not pairs:
        return
    rows = [
        [
            name,
            mix,
            num(run.rps),
            num(run.saturation_rps) if run.saturation_rps is not None else "",
            "" if run.errors is None else str(run.errors),
            num(run.cache_hit_rate, 2) if run.cache_hit_rate is not None else "",
            num(run.server_cpu_ms_per_call, 2),
        ]
        for name, golden, distinct in pairs
        for mix, run in (("golden", golden), (DISTINCT_KIND, distinct))
    ]
    tools = sorted({t for _, g, d in pairs for t in (*g.tools, *d.tools)})
    p95 = [
        [tool]
        + [
            num(figures.p95_ms if (figures := run.tools.get(tool)) is not None else None)
            for _, golden, distinct in pairs
            for run in (golden, distinct)
        ]
        for tool in tools
    ]
    doc.section(
        "Golden and distinct-query traffic",
        render.Table(
            [
                "profile",
                "mix",
                "calls/s",
                "saturation calls/s",
                "errors",
                "cache hit rate",
                "server CPU ms/call",
            ],
            rows,
            note="The golden mix repeats about 180 calls, so the server's embedding cache "
            "answers many; the distinct mix (`make distinct-mix`) does not repeat a call in a "
            "run. The distinct runs are judged on errors and the spec's ceilings only.",
        ),
        render.Table(
            ["tool"]
            + [f"{name} {mix} p95 ms" for name, _, _ in pairs for mix in ("golden", DISTINCT_KIND)],
            p95,
        ),
    )


def records_section(doc: render.Document, records: list[LatencyRecord]) -> None:
    doc.section(
        "Latency records",
        render.Table(
            ["profile", "tool", "source", "n", "p50 ms", "p95 ms", "p99 ms", "calls/s", "errors"],
            [
                [
                    r.profile,
                    r.tool,
                    r.source,
                    str(r.n),
                    num(r.p50_ms),
                    num(r.p95_ms),
                    num(r.p99_ms),
                    num(r.rps),
                    str(r.errors),
                ]
                for r in records
            ],
        ),
    )


def history_section(doc: render.Document, directory: Path) -> None:
    series = {}
    p95_series = {}
    for path in sorted(directory.rglob("*_stats_history.csv")):
        times, rps, p95 = history(path)
        if times:
            series[_profile_name(path, directory)] = (times, rps)
            p95_series[_profile_name(path, directory)] = (times, p95)
    if series:
        doc.section(
            "Load over time",
            render.Figure(
                "throughput",
                plots.time_series(
                    series, title="Throughput over time (all tools)", ylabel="calls/s"
                ),
                "Aggregated calls per second as locust recorded them, one line per load run.",
            ),
            render.Figure(
                "p95_over_time",
                plots.time_series(
                    p95_series, title="p95 latency over time (all tools)", ylabel="ms"
                ),
            ),
        )
