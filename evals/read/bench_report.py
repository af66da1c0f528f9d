"""The bench report: a ``bench`` run record (``reports/bench/<ts>/bench.record.json``, the
typed :class:`BenchSummary`) and the locust CSVs and latency records beside it, through the shared
renderer as ``bench.md`` + ``bench.html``: the one rendering of a bench.

Reads files only. Shows the SLO and gate verdicts with every miss, the machine, the reference
workload's readings and the factor the tight bars were scaled by (and whether this machine's
kernels differ from the calibration machine's), per-tool p50/p95/p99, calls/s and errors against
the targets (raw -> calibrated), latency records per profile, saturation per worker count,
cache hit rates, server CPU per call and steal per profile, where each tool's time goes (the
server's stage timers per profile, tools x stages) beside the transport floor, the parallel guarantees, and
throughput and p95 over time from locust's ``*_stats_history.csv``. A ``make bench BASE=``
record (kind ``regression``) is rendered by :mod:`evals.read.regression_report`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals import render
from evals.read import plots, regression_report, slo
from ocm_common.bench_summary import DISTINCT_KIND, BenchSummary
from ocm_common.latency_records import RECORDS_FILE, LatencyRecord, read_records
from ocm_common.machine import lacking, one_line, relevant_flags
from ocm_common.percentiles import DEFINITION
from ocm_common.run_record import RunRecord, RunRecordError, locate, read_record


class BenchReportError(RuntimeError):
    """A bench directory without a readable bench record."""


def _num(value: Any, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def read_bench(directory: Path) -> RunRecord:
    """The directory's bench (or regression) record."""
    try:
        record = read_record(locate(directory))
    except RunRecordError as exc:
        raise BenchReportError(str(exc)) from None
    if record.kind not in ("bench", "regression"):
        raise BenchReportError(f"{directory}: a {record.kind} record, not a bench")
    return record


def latency_records(directory: Path) -> list[LatencyRecord]:
    path = directory / RECORDS_FILE
    return read_records(path) if path.is_file() else []


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


def _bar_cell(summary: BenchSummary, profile: str, tool: str, metric: str) -> str:
    """`15 -> 16.5` (raw bar, scaled bar), or `-` when the profile has no such bar."""
    bar = summary.bar(profile, tool, metric)
    return f"{_fmt(bar['raw'])} -> {_fmt(bar['calibrated'])}" if bar else "-"


def kernel_note(machine: Mapping[str, Any], reference: Mapping[str, Any]) -> list[str]:
    """Whether this machine's kernels differ from the calibration machine's, in words."""
    flags = reference.get("flags") or {}
    if flags and not set(relevant_flags(dict(machine))) & set(flags):
        return [
            f"This machine ({machine.get('arch')}) is of another architecture than the "
            "calibration machine: the factor measured here, not the calibration's machine, sets "
            "the bars."
        ]
    more, fewer = lacking(dict(machine), flags)
    if not more and not fewer:
        return []
    parts = []
    if more:
        parts.append(f"has {', '.join(more)}, which the calibration machine lacks")
    if fewer:
        parts.append(f"lacks {', '.join(fewer)}, which the calibration machine has")
    return [
        f"This machine {' and '.join(parts)}: other kernels run, so the factor measured here, "
        "not the calibration's machine, sets the bars."
    ]


def calibration_lines(summary: BenchSummary) -> list[str]:
    """The machine, the reference readings and the factor the tight bars were scaled by."""
    end = summary.machine_at_end
    cal = summary.calibration
    lines = []
    if summary.machine:
        lines.append(f"Machine: {one_line(summary.machine)}.")
    lines.append(
        f"Reference workload ({cal.workload if cal else 'embedding'}, load/calibrate.py): "
        f"{_fmt(summary.machine_at_start.reference_ms)} ms at the start, "
        f"{_fmt(end.reference_ms if end else None)} ms at the end; slower than usual means the "
        "machine, not only the server, was slow."
    )
    if cal and cal.factor:
        ref = cal.reference or {}
        where = (
            f"{_fmt(ref.get('reference_ms'))} ms on {ref.get('cpu_model') or '?'} "
            f"(flags {', '.join(k for k, v in (ref.get('flags') or {}).items() if v) or '-'}, "
            f"onnxruntime {ref.get('onnxruntime') or '-'})"
            if ref
            else "no calibration recorded"
        )
        lines.append(
            f"Tight bars scaled by **{_fmt(cal.factor.get('value'))}** "
            f"({cal.factor.get('note')}); calibration: {where}. Spec ceilings, errors and the "
            "parallel guarantees are never scaled."
        )
        if ref and summary.machine:
            lines.extend(kernel_note(summary.machine, ref))
    cpu = summary.cpu_per_call
    if cpu:
        lines.append(
            f"Server CPU per call ({cpu.profile} profile): {_fmt(cpu.server_cpu_ms)} ms, "
            f"**{_fmt(cpu.ratio)}x** the reference workload's {_fmt(cpu.reference_ms)} ms "
            "(reported, not judged: its expected value depends on the CPU's kernels; "
            "`make bench BASE=` judges its regressions)."
        )
    return lines


def _tool_section(doc: render.Document, summary: BenchSummary) -> None:
    """Per tool: latency p50/p95/p99 against the bars (raw -> calibrated), paced and
    in-process figures with theirs, errors; and the percentiles as a figure."""
    targets = {t: slo.targets_for(t, "latency") for t in summary.tools}
    for t in summary.tools:  # the bench's own (calibrated) bars when it recorded them
        p50, p95 = summary.bar("latency", t, "p50_ms"), summary.bar("latency", t, "p95_ms")
        if p50 or p95:
            targets[t] = (
                p50["calibrated"] if p50 else targets[t][0],
                p95["calibrated"] if p95 else targets[t][1],
            )
    rows, tones = [], []
    for tool, v in summary.tools.items():
        p50_bar, p95_bar = targets[tool]
        missed = bool(v.errors) or any(
            value is not None and bound is not None and value > bound
            for value, bound in ((v.p50_ms, p50_bar), (v.p95_ms, p95_bar))
        )
        tones.append("bad" if missed else "neutral")
        rows.append(
            [
                tool,
                _num(v.p50_ms),
                _bar_cell(summary, "latency", tool, "p50_ms"),
                _num(v.p95_ms),
                _bar_cell(summary, "latency", tool, "p95_ms"),
                _num(v.p99_ms),
                _num(v.rps),
                _num(v.paced_p95_ms),
                _bar_cell(summary, "paced", tool, "p95_ms"),
                _num(v.inprocess_p50_ms),
                _bar_cell(summary, "inprocess", tool, "p50_ms"),
                _num(v.inprocess_p95_ms),
                _bar_cell(summary, "inprocess", tool, "p95_ms"),
                str(v.errors),
            ]
        )
    section = doc.section(
        "Per tool (latency profile)",
        render.Table(
            [
                "tool",
                "latency p50 ms",
                "bar",
                "latency p95 ms",
                "bar",
                "latency p99 ms",
                "calls/s",
                "paced p95 ms",
                "bar",
                "in-process p50 ms",
                "bar",
                "in-process p95 ms",
                "bar",
                "errors",
            ],
            rows,
            tones=tones,  # type: ignore[arg-type]
            note=f"Bars are `raw -> calibrated` (ms), or {slo.source('latency')} when the bench "
            f"recorded none; p50/p95/p99: {DEFINITION}",
        ),
    )
    percentiles = {
        t: {
            k: float(getattr(v, k))
            for k in ("p50_ms", "p95_ms", "p99_ms")
            if getattr(v, k) is not None
        }
        for t, v in summary.tools.items()
    }
    section.add(
        render.Figure(
            "latency_per_tool",
            plots.percentile_bars(
                percentiles, title="Latency per tool, latency profile", targets=targets
            ),
            "p50/p95/p99 per tool over HTTP; the red line is the tool's p95 target.",
        )
    )


# The server's stages in the order a call runs them, then the handler and the client's share;
# a stage a run reported that is not listed here follows, by name.
STAGE_ORDER = (
    "validation",
    "parse",
    "sql",
    "vector",
    "embed",
    "embed_stored",
    "embed_cached",
    "merge",
    "sub_calls",
    "score",
    "respond",
    "serialise",
    "handler",
    "mcp_http",
)


def _distinct_cpu_section(doc: render.Document, summary: BenchSummary) -> None:
    """CPU per distinct call per tool and kind, in process, as ratios to the reference."""
    figures = sorted(summary.distinct_call_cpu.values(), key=lambda f: (f.tool, f.kind))
    if not figures:
        return
    doc.section(
        "CPU per distinct call",
        render.Table(
            ["tool", "calls", "calls made", "median CPU ms", "mean CPU ms", "median / reference"],
            [
                [
                    f.tool,
                    f.kind.replace("_", " "),
                    str(f.calls),
                    _num(f.median_ms, 2),
                    _num(f.mean_ms, 2),
                    _num(f.median_ratio, 2),
                ]
                for f in figures
            ],
            note="In process (`tests/bench_cpu`, pytest-benchmark on the process clock): each "
            "call the next of the tool's distinct calls, with free text (a question) or without "
            "(a DIN, a brand and strength, an id), never repeated. The reference is the same "
            f"session's one query embedding ({figures[0].reference_ms:.2f} CPU ms): the ratio "
            "is the figure that holds across machines.",
        ),
    )


def _stage_section(doc: render.Document, summary: BenchSummary) -> None:
    """One table per profile, tools x stages (median / p95 ms), and the transport floor."""
    blocks: list[render.Block] = [
        render.Paragraph(
            "Server-side wall time per stage from each reply's `_meta.timings_ms.stages` "
            "(exclusive: a stage nested in another is not counted in it; SQL and vector run at "
            "the same time, so the stages add up to more than `handler`). `embed`: the query "
            "embedding model ran; `embed_stored`: a vector the index stored for a text known in advance "
            "(a DIN, a brand and strength) answered; `embed_cached`: the cache answered. `handler`: the server's "
            "whole handling of the call; `mcp_http`: the client's latency less `handler` "
            "(transport, JSON-RPC, FastMCP dispatch, the load client). Cells: median / p95 ms "
            "over the calls that reported the stage (means are in the record)."
        )
    ]
    floor = summary.transport_floor
    if floor is not None:
        blocks.append(
            render.Paragraph(
                f"Transport floor: a bare FastMCP tool returning a constant over the same HTTP "
                f"stack, {floor.workers} worker(s), {floor.profile} profile: p50 "
                f"{_num(floor.p50_ms, 2)} ms, p95 {_num(floor.p95_ms, 2)} ms over {floor.calls} "
                f"calls ({floor.errors} errors)."
            )
        )
    for profile, tools in summary.stages.items():
        seen = {stage for stages in tools.values() for stage in stages}
        columns = [s for s in STAGE_ORDER if s in seen] + sorted(seen - set(STAGE_ORDER))
        rows = [
            [
                tool,
                *(
                    f"{_num(f.median_ms, 2)} / {_num(f.p95_ms, 2)}" if (f := stages.get(c)) else "-"
                    for c in columns
                ),
            ]
            for tool, stages in sorted(tools.items())
        ]
        blocks += [
            render.Paragraph(f"Profile `{profile}`:"),
            render.Table(["tool", *columns], rows),
        ]
    doc.section("Where the time goes", *blocks)


def _throughput_lines(summary: BenchSummary) -> list[str]:
    """Saturation floor and per worker count, cache hit rates, server CPU and steal."""
    lines = []
    sat_bars = summary.bars.get("saturation") or {}
    if sat_bars.get("min_rps"):
        step = sat_bars.get("step_p95_ms") or {}
        lines.append(
            f"Saturation floor: {_fmt(sat_bars['min_rps']['raw'])} -> "
            f"{_fmt(sat_bars['min_rps']['calibrated'])} calls/s (divided by the factor); step "
            f"p95 bar {_fmt(step.get('raw'))} -> {_fmt(step.get('calibrated'))} ms."
        )
    by_workers = ", ".join(
        f"{w} worker(s): {rps:g} calls/s"
        for w, rps in sorted(summary.saturation_rps_by_workers.items())
    )
    steal = {
        name: f"{p['machine_cpu']['steal']:.1%}"
        for name, p in summary.profiles.items()
        if p.get("machine_cpu")
    }
    cpu = {
        name: p.get("server_cpu_ms_per_call")
        for name, p in summary.profiles.items()
        if p.get("server_cpu_ms_per_call")
    }
    return [
        *lines,
        f"Saturation (highest sustained, 0 errors): {by_workers}.",
        f"Server cache hit rate by profile: {summary.cache_hit_rate}.",
        f"Server CPU ms per call by profile (all server processes): {cpu}.",
        f"CPU time the hypervisor took (steal) by profile: {steal or 'not readable here'}; "
        "a few % is usual, more means another guest ran on these cores and latency misses "
        "are partly the machine's.",
    ]


def _mix_section(doc: render.Document, summary: BenchSummary) -> None:
    """Golden and the distinct-query mix side by side, per profile run on both: throughput,
    errors, the server's embedding-cache hit rate and CPU per call, then p95 per tool."""
    pairs = [
        (name, summary.profiles[name], summary.profiles[f"{name}-{DISTINCT_KIND}"])
        for name in ("latency", "paced", "saturation")
        if name in summary.profiles and f"{name}-{DISTINCT_KIND}" in summary.profiles
    ]
    if not pairs:
        return
    rows = [
        [
            name,
            mix,
            _num(run.get("rps")),
            _num(run.get("saturation_rps")) if "saturation_rps" in run else "",
            str(run.get("errors", "")),
            _num(run.get("cache_hit_rate"), 2) if run.get("cache_hit_rate") is not None else "",
            _num(run.get("server_cpu_ms_per_call"), 2),
        ]
        for name, golden, distinct in pairs
        for mix, run in (("golden", golden), (DISTINCT_KIND, distinct))
    ]
    tools = sorted({t for _, g, d in pairs for t in (*g.get("tools", {}), *d.get("tools", {}))})
    p95 = [
        [tool]
        + [
            _num(run.get("tools", {}).get(tool, {}).get("p95_ms"))
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


def _records_section(doc: render.Document, records: list[LatencyRecord]) -> None:
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
                    _num(r.p50_ms),
                    _num(r.p95_ms),
                    _num(r.p99_ms),
                    _num(r.rps),
                    str(r.errors),
                ]
                for r in records
            ],
        ),
    )


def _history_section(doc: render.Document, directory: Path) -> None:
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


VERDICT_CLASSES = {
    "absolute": "the same on any machine",
    "calibrated": "scaled by the reference workload timed in this run; its margin set from "
    "A/A spread (load/slo.yaml aa_spread)",
    "reported": "depends on the CPU's kernels: shown, not judged here (`make bench BASE=` "
    "judges its regressions on one machine)",
}


def _verdict_section(doc: render.Document, summary: BenchSummary) -> None:
    """Every bar with its class: absolute, calibrated (with its A/A margin) or reported."""
    if not summary.verdicts:
        return
    rows, tones = [], []
    for v in summary.verdicts:
        result = "-" if v.passed is None else "held" if v.passed else "MISSED"
        tones.append("bad" if v.passed is False else "neutral")
        bar = f"{v.op} {_fmt(v.bar)}" if v.bar is not None else ""
        if v.raw_bar is not None and v.bar is not None and v.raw_bar != v.bar:
            bar += f" (written {_fmt(v.raw_bar)})"
        margin = f"{v.spread_sigmas:g} sd; {v.spread}" if v.spread_sigmas is not None else v.spread
        rows.append(
            [
                v.bar_class,
                v.name + (f" [{v.subject}]" if v.subject else ""),
                _fmt(v.measured),
                bar,
                result,
                margin or v.note,
            ]
        )
    doc.section(
        "Verdict by bar",
        render.Table(
            ["class", "bar", "measured", "target", "result", "A/A margin / note"],
            rows,
            tones=tones,  # type: ignore[arg-type]
            note="; ".join(f"{k}: {v}" for k, v in VERDICT_CLASSES.items()),
        ),
    )


def bench_document(directory: Path, record: RunRecord) -> render.Document:
    """Every figure and verdict of one bench record."""
    summary = BenchSummary.model_validate(record.body)
    doc = render.Document(f"Bench {summary.timestamp}", meta=[f"bench directory: {directory}"])
    doc.meta.append(
        f"{summary.server_workers} server workers; {summary.elapsed_s:.0f} s; commit "
        f"{(record.header.commit or '?')[:12]}{' (dirty)' if record.header.dirty else ''}"
    )
    doc.verdict = render.Paragraph(
        f"SLO {'PASS' if summary.slo_pass else 'MISS'}, gate "
        f"{'PASS' if summary.gate_pass else 'MISS'}; saturation "
        f"{summary.saturation_rps:.0f} calls/s; exit {summary.exit_code}",
        "good" if summary.slo_pass and summary.gate_pass else "bad",
    )
    if summary.misses or summary.harness_errors:
        doc.section(
            "What missed",
            render.Bullets(summary.misses + [f"harness: {e}" for e in summary.harness_errors]),
        )
    _verdict_section(doc, summary)
    doc.section(
        "Machine and calibration",
        *[render.Paragraph(text) for text in calibration_lines(summary)],
    )
    if summary.tools:
        _tool_section(doc, summary)
    _mix_section(doc, summary)
    if summary.stages or summary.transport_floor:
        _stage_section(doc, summary)
    _distinct_cpu_section(doc, summary)
    records = latency_records(directory)
    if records:
        _records_section(doc, records)
    doc.section(
        "Saturation and cost",
        render.Bullets(_throughput_lines(summary)),
        render.Table(
            ["server workers", "highest sustained calls/s"],
            [[str(k), _num(v)] for k, v in summary.saturation_rps_by_workers.items()],
        ),
    )
    findings = summary.profiles.get("parallel", {}).get("findings") or []
    if findings:
        doc.section(
            "Parallel guarantees",
            render.Table(
                ["parallel check", "subject", "held", "detail"],
                [
                    [f"({f['check']})", f["subject"], "yes" if f["passed"] else "NO", f["detail"]]
                    for f in findings
                ],
                tones=["neutral" if f["passed"] else "bad" for f in findings],
            ),
        )
    _history_section(doc, directory)
    scalar_rows = [
        [name, key, json.dumps(value) if not isinstance(value, str) else value]
        for name, values in summary.profiles.items()
        for key, value in _scalars(values)
    ]
    if scalar_rows:
        doc.section("Profiles", render.Table(["profile", "measure", "value"], scalar_rows))
    return doc


def document(directory: Path) -> render.Document:
    """The report of a bench directory's record: a bench, or a ``make bench BASE=`` verdict."""
    record = read_bench(directory)
    if record.kind == "regression":
        return regression_report.document(directory, record)
    return bench_document(directory, record)


def _scalars(values: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A profile's scalar measures, one level of nesting flattened (`machine_cpu.steal`)."""
    out: list[tuple[str, Any]] = []
    for key, value in values.items():
        if isinstance(value, int | float | str | bool):
            out.append((prefix + key, value))
        elif isinstance(value, dict) and not prefix:
            out += _scalars(value, f"{key}.")
    return out


def write(directory: Path) -> dict[str, Path]:
    """Render ``directory``'s bench results to ``bench.md`` and ``bench.html`` beside them."""
    return render.write(document(directory), directory, "bench")
