"""The bench's judgement, made once where the measurements are: each profile's figures against
its bars (raw and scaled by the run's reference workload), the per-tool table, the CPU per call
over one embedding, the stage table and the parallel guarantees' misses; the report only renders
what `judge_bench` decided (evals/read/bench_sections.py)."""

from __future__ import annotations

from collections.abc import Sequence

from load.bar_verdicts import bar_verdicts, setup_errors
from load.calibrate import DEFAULT_WORKLOAD
from load.calibration import Factor, factor
from load.slo import (
    LATENCY_METRICS,
    Miss,
    Slo,
    cpu_reference_ratio,
    evaluate,
    evaluate_saturation,
)
from ocm_common.bench_summary import (
    BarPair,
    BenchSummary,
    CalibrationUsed,
    CpuPerCall,
    MachineLoad,
    ProfileBars,
    ToolLatency,
)
from ocm_common.latency_records import LatencyRecord
from ocm_common.profile_results import LocustResult, StageFigure

# the locust profiles of the default profiles file, for callers that judge without one
LOCUST_PROFILES = ("latency", "paced", "saturation")


def tight_profiles(slo: Slo) -> list[str]:
    """The profiles with a latency bar of their own: their bars are shown raw and scaled per
    tool."""
    return [p for p, bars in slo.profiles.items() if any(m in LATENCY_METRICS for m in bars)]


def reference_workload(slo: Slo) -> str:
    """The reference workload the SLO file's bars were set with (its calibration block)."""
    return slo.calibration.workload if slo.calibration else DEFAULT_WORKLOAD


def bar_factor(slo: Slo, *machines: MachineLoad | None) -> Factor:
    """How much the tight bars are scaled for this machine, from the reference timings."""
    return factor([m.reference_ms if m else None for m in machines], slo.calibration)


def _bar_table(raw: Slo, scaled: Slo, tools: list[str]) -> dict[str, ProfileBars]:
    """{profile: {tool: {metric: {raw, calibrated}}}} for the tight profiles, and saturation."""
    table: dict[str, ProfileBars] = {
        profile: {
            tool: {
                metric: BarPair(raw=bound, calibrated=scaled.bars(profile, tool)[metric])
                for metric, bound in raw.bars(profile, tool).items()
            }
            for tool in tools
        }
        for profile in tight_profiles(raw)
    }
    table["saturation"] = {
        metric: BarPair(raw=bound, calibrated=scaled.profiles.get("saturation", {}).get(metric))
        for metric, bound in raw.profiles.get("saturation", {}).items()
    }
    return table


def _cpu_per_call_ratio(summary: BenchSummary, slo: Slo) -> None:
    """The server's CPU per call over the mean of the run's two reference readings: reported,
    not judged (its expected value depends on the CPU's kernels; `make bench BASE=` judges it)."""
    if slo.cpu_per_call is None:
        return
    readings = [
        float(m.reference_ms)
        for m in (summary.machine_at_start, summary.machine_at_end)
        if m is not None and m.reference_ms
    ]
    reference = round(sum(readings) / len(readings), 3) if readings else None
    run = summary.locust_run(slo.cpu_per_call.profile)
    cpu = run.server_cpu_ms_per_call if run else None
    summary.cpu_per_call = CpuPerCall(
        profile=slo.cpu_per_call.profile,
        server_cpu_ms=cpu,
        reference_ms=reference,
        ratio=cpu_reference_ratio(cpu, reference),
    )


def _run_misses(
    summary: BenchSummary, records: list[LatencyRecord], slo: Slo, locust: Sequence[str]
) -> list[Miss]:
    """What a locust run's own verdict held beyond its records: calls that failed before any
    tool (initialize, tools/list) and a run that recorded no tool at all."""
    misses = [
        Miss(name, "initialize/tools/list", "errors", setup, slo.max_errors)
        for name, setup in setup_errors(summary, records, locust).items()
        if setup > slo.max_errors
    ]
    for name, run in summary.locust_runs().items():
        if name.split("_")[0] not in locust or run.is_empty:
            continue
        if not run.calls:
            misses.append(Miss(name, "all tools", "min_calls", 0, 1))
    return misses


def tool_table(records: list[LatencyRecord]) -> dict[str, ToolLatency]:
    """Per tool: the latency profile's figures, the paced and in-process ones beside, and the
    errors of every profile."""
    latency = {r.tool: r for r in records if r.profile == "latency"}
    paced = {r.tool: r for r in records if r.profile == "paced"}
    inproc = {r.tool: r for r in records if r.profile == "inprocess"}
    return {
        tool: ToolLatency(
            p50_ms=r.p50_ms,
            p95_ms=r.p95_ms,
            p99_ms=r.p99_ms,
            rps=r.rps,
            errors=sum(x.errors for x in records if x.tool == tool),
            paced_p95_ms=paced[tool].p95_ms if tool in paced else None,
            paced_p99_ms=paced[tool].p99_ms if tool in paced else None,
            inprocess_p50_ms=inproc[tool].p50_ms if tool in inproc else None,
            inprocess_p95_ms=inproc[tool].p95_ms if tool in inproc else None,
        )
        for tool, r in sorted(latency.items())
    }


def judge_bench(
    summary: BenchSummary,
    records: list[LatencyRecord],
    codes: dict[str, int],
    raw_slo: Slo,
    *,
    locust_profiles: Sequence[str] = LOCUST_PROFILES,
    calibrated: bool = True,
) -> list[Miss]:
    """Scale the bars by the bench's factor, judge every record and run, and set the
    figures and verdicts on ``summary``; the SLO misses returned for the console table.
    With ``calibrated`` off (short runs), only the absolute bars are judged; the calibrated
    ones are reported. ``locust_profiles``: the profiles locust ran (each must have run clean)."""
    used = bar_factor(raw_slo, summary.machine_at_start, summary.machine_at_end)
    slo = raw_slo.scaled(used.value)
    judged = slo if calibrated else slo.hard_only()
    cal = raw_slo.calibration
    summary.calibration = CalibrationUsed(
        factor=used.to_json(),
        workload=reference_workload(raw_slo),
        reference=cal.as_json() if cal else None,
    )
    summary.bars = _bar_table(raw_slo, slo, sorted({r.tool for r in records}))
    misses = evaluate(records, judged) + _run_misses(summary, records, slo, locust_profiles)
    summary.saturation_rps = _saturation_rps(summary.locust_run("saturation"))
    if calibrated:
        misses += evaluate_saturation(summary.saturation_rps, slo)
    _cpu_per_call_ratio(summary, raw_slo)
    summary.saturation_rps_by_workers = {
        str(summary.server_workers): summary.saturation_rps,
        **{
            key.split("_")[1]: _saturation_rps(run)
            for key, run in summary.locust_runs().items()
            if key.startswith("saturation_") and key.endswith("_worker")
        },
    }
    summary.tools = tool_table(records)
    for miss in misses:
        if miss.tool in summary.tools:
            summary.tools[miss.tool].missed = True
    for figures in summary.tools.values():
        if figures.errors:  # an error in any profile marks the tool's row (ToolLatency.missed)
            figures.missed = True
    summary.cache_hit_rate = {
        name: p.cache_hit_rate
        for name, p in summary.locust_runs().items()
        if p.wrote_cache_hit_rate
    }
    summary.stages = stage_table(summary.locust_runs())
    parallel = summary.parallel_run()
    summary.misses = [m.text for m in misses] + parallel_misses(summary)
    summary.slo_pass = (
        not summary.misses
        and bool(parallel and parallel.passed)
        and all(codes.get(k, 1) == 0 for k in (*locust_profiles, "inprocess"))
        and codes.get("cpu_per_call", 0) == 0
    )
    summary.exit_codes = codes
    summary.verdicts = bar_verdicts(
        summary,
        records,
        raw_slo,
        slo,
        codes,
        setup_profiles=locust_profiles,
        calibrated=calibrated,
    )
    exit_code = 0 if summary.slo_pass and summary.gate_pass else 1
    if summary.harness_errors and exit_code == 0:
        exit_code = 2
    if "interrupted" in codes:
        exit_code = 130
    summary.exit_code = exit_code
    return misses


def stage_table(
    runs: dict[str, LocustResult],
) -> dict[str, dict[str, dict[str, StageFigure]]]:
    """{profile: {tool: {stage: figure}}} from the locust runs that saw stage timers."""
    return {name: run.stages for name, run in runs.items() if run.stages}


def _saturation_rps(run: LocustResult | None) -> float:
    """A saturation run's highest sustained calls/s, 0 when it has none."""
    return run.saturation_rps if run and run.saturation_rps is not None else 0.0


def parallel_misses(summary: BenchSummary) -> list[str]:
    parallel = summary.parallel_run()
    return [
        f"parallel ({f.check}) {f.subject}: {f.detail}"
        for f in (parallel.findings if parallel else [])
        if not f.passed
    ]
