"""The bench report's sections, one function each (per-tool figures, CPU per distinct call,
stage times, throughput, the distinct-query mix, latency records, history, verdicts): each reads
the bench summary's figures and verdicts as bench.py judged them and only renders them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evals import render
from evals.read import plots, slo
from ocm_common.bench_summary import BenchSummary
from ocm_common.machine import lacking, one_line, relevant_flags
from ocm_common.percentiles import DEFINITION
from ocm_common.profile_results import InProcessResult, LocustResult


def num(value: Any, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def fmt(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _bar_cell(summary: BenchSummary, profile: str, tool: str, metric: str) -> str:
    """`15 -> 16.5` (raw bar, scaled bar), or `-` when the profile has no such bar."""
    bar = summary.bar(profile, tool, metric)
    return f"{fmt(bar['raw'])} -> {fmt(bar['calibrated'])}" if bar else "-"


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
        f"{fmt(summary.machine_at_start.reference_ms)} ms at the start, "
        f"{fmt(end.reference_ms if end else None)} ms at the end; slower than usual means the "
        "machine, not only the server, was slow."
    )
    if cal and cal.factor:
        ref = cal.reference or {}
        where = (
            f"{fmt(ref.get('reference_ms'))} ms on {ref.get('cpu_model') or '?'} "
            f"(flags {', '.join(k for k, v in (ref.get('flags') or {}).items() if v) or '-'}, "
            f"onnxruntime {ref.get('onnxruntime') or '-'})"
            if ref
            else "no calibration recorded"
        )
        lines.append(
            f"Tight bars scaled by **{fmt(cal.factor.get('value'))}** "
            f"({cal.factor.get('note')}); calibration: {where}. Spec ceilings, errors and the "
            "parallel guarantees are never scaled."
        )
        if ref and summary.machine:
            lines.extend(kernel_note(summary.machine, ref))
    cpu = summary.cpu_per_call
    if cpu:
        lines.append(
            f"Server CPU per call ({cpu.profile} profile): {fmt(cpu.server_cpu_ms)} ms, "
            f"**{fmt(cpu.ratio)}x** the reference workload's {fmt(cpu.reference_ms)} ms "
            "(reported, not judged: its expected value depends on the CPU's kernels; "
            "`make bench BASE=` judges its regressions)."
        )
    return lines


def tool_section(doc: render.Document, summary: BenchSummary) -> None:
    """Per tool: latency p50/p95/p99 against the bars (raw -> calibrated), paced and
    in-process figures with theirs, errors; and the percentiles as a figure. A row is marked
    missed only as the bench judged it (`ToolLatency.missed`), never judged again here."""
    # the bars the plot draws: the bench's own (calibrated) ones where it recorded them
    targets = {t: slo.targets_for(t, "latency") for t in summary.tools}
    for t in summary.tools:
        p50, p95 = summary.bar("latency", t, "p50_ms"), summary.bar("latency", t, "p95_ms")
        if p50 or p95:
            targets[t] = (
                p50["calibrated"] if p50 else targets[t][0],
                p95["calibrated"] if p95 else targets[t][1],
            )
    rows, tones = [], []
    for tool, v in summary.tools.items():
        tones.append("bad" if v.missed else "neutral")  # as the bench judged
        rows.append(
            [
                tool,
                num(v.p50_ms),
                _bar_cell(summary, "latency", tool, "p50_ms"),
                num(v.p95_ms),
                _bar_cell(summary, "latency", tool, "p95_ms"),
                num(v.p99_ms),
                num(v.rps),
                num(v.paced_p95_ms),
                _bar_cell(summary, "paced", tool, "p95_ms"),
                num(v.inprocess_p50_ms),
                _bar_cell(summary, "inprocess", tool, "p50_ms"),
                num(v.inprocess_p95_ms),
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


def distinct_cpu_section(doc: render.Document, summary: BenchSummary) -> None:
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
                    num(f.median_ms, 2),
                    num(f.mean_ms, 2),
                    num(f.median_ratio, 2),
                ]
                for f in figures
            ],
            note="In process (load/cpu_per_call.py, on the process clock): each "
            "call the next of the tool's distinct calls, with free text (a question) or without "
            "(a DIN, a brand and strength, an id), never repeated. The reference is the same "
            f"session's one query embedding ({figures[0].reference_ms:.2f} CPU ms): the ratio "
            "is the figure that holds across machines.",
        ),
    )


def stage_section(doc: render.Document, summary: BenchSummary) -> None:
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
                f"{num(floor.p50_ms, 2)} ms, p95 {num(floor.p95_ms, 2)} ms over {floor.calls} "
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
                    f"{num(f.median_ms, 2)} / {num(f.p95_ms, 2)}" if (f := stages.get(c)) else "-"
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


def throughput_lines(summary: BenchSummary) -> list[str]:
    """Saturation floor and per worker count, cache hit rates, server CPU and steal."""
    lines = []
    sat_bars = summary.bars.get("saturation") or {}
    if sat_bars.get("min_rps"):
        step = sat_bars.get("step_p95_ms") or {}
        lines.append(
            f"Saturation floor: {fmt(sat_bars['min_rps']['raw'])} -> "
            f"{fmt(sat_bars['min_rps']['calibrated'])} calls/s (divided by the factor); step "
            f"p95 bar {fmt(step.get('raw'))} -> {fmt(step.get('calibrated'))} ms."
        )
    by_workers = ", ".join(
        f"{w} worker(s): {rps:g} calls/s"
        for w, rps in sorted(summary.saturation_rps_by_workers.items())
    )
    steal = {
        name: f"{p.machine_cpu['steal']:.1%}"
        for name, p in summary.profiles.items()
        if isinstance(p, LocustResult | InProcessResult) and p.machine_cpu
    }
    cpu = {
        name: p.server_cpu_ms_per_call
        for name, p in summary.locust_runs().items()
        if p.server_cpu_ms_per_call
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


VERDICT_CLASSES = {
    "absolute": "the same on any machine",
    "calibrated": "scaled by the reference workload timed in this run; its margin set from "
    "A/A spread (load/slo.yaml aa_spread)",
    "reported": "depends on the CPU's kernels: shown, not judged here (`make bench BASE=` "
    "judges its regressions on one machine)",
}


def verdict_section(doc: render.Document, summary: BenchSummary) -> None:
    """Every bar with its class: absolute, calibrated (with its A/A margin) or reported."""
    if not summary.verdicts:
        return
    rows, tones = [], []
    for v in summary.verdicts:
        result = "-" if v.passed is None else "held" if v.passed else "MISSED"
        tones.append("bad" if v.passed is False else "neutral")
        bar = f"{v.op} {fmt(v.bar)}" if v.bar is not None else ""
        if v.raw_bar is not None and v.bar is not None and v.raw_bar != v.bar:
            bar += f" (written {fmt(v.raw_bar)})"
        margin = f"{v.spread_sigmas:g} sd; {v.spread}" if v.spread_sigmas is not None else v.spread
        rows.append(
            [
                v.bar_class,
                v.name + (f" [{v.subject}]" if v.subject else ""),
                fmt(v.measured),
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
