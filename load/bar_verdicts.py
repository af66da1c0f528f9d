"""The bench's verdict as rows: every bar `make bench` judges on its own, with its class.

- absolute: the same on any machine (errors, calls made, the seeds' ceilings, the parallel
  guarantees, the in-process steps' tool failures, the golden gate);
- calibrated: our tight bars, scaled by the reference workload timed in the same run, each with
  the A/A spread its margin was set from (`aa_spread` in load/slo.yaml);
- reported: figures whose expected value depends on which kernels the CPU has (the server's CPU
  per call over one embedding, CPU per distinct call, the transport floor), shown and never
  judged here: `make bench BASE=` judges their regressions on one machine.

The rows explain the verdict; `load/bench.py` decides it from the same bars (a test holds the
two to the same failures).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from ocm_common.bench_summary import BarVerdict, BenchSummary
from ocm_common.latency_records import LatencyRecord
from ocm_common.slo_file import LATENCY_METRICS, AaSpread, Slo

# The calibrated bars: `<profile>.<metric>`, per tool (the worst tool is the reading) for every
# latency bar a profile names (load/profiles.yaml), or, for the saturation floor, one figure for
# the server.
SATURATION_KEY = "saturation.min_rps"


def calibrated_latency(slo: Slo) -> list[tuple[str, str]]:
    """(profile, metric) of every profile's latency bar, in the profiles file's order."""
    return [
        (profile, metric)
        for profile, bars in slo.profiles.items()
        for metric in LATENCY_METRICS
        if metric in bars
    ]


def key(profile: str, metric: str) -> str:
    return f"{profile}.{metric}"


def spread_margin(
    spread: AaSpread | None, bar_key: str, raw_bar: float
) -> tuple[float | None, str]:
    """(how many standard deviations the raw bar sits beyond the level, in words).

    The level is the highest mean of any machine's readings (the lowest, for a floor): the
    calibration machine's own readings count even when they are few. The spread is the largest
    coefficient of variation of a machine with `min_runs` readings or more, so a machine whose
    A/A runs were measured lends its relative spread to the level of one whose were not."""
    if spread is None:
        return None, "no A/A spread recorded"
    floor = bar_key.endswith(".min_rps")
    means = [
        (statistics.fmean(values), runs.machine, len(values))
        for runs in spread.machines
        if (values := runs.readings.get(bar_key) or [])
    ]
    spreads = [
        (statistics.stdev(values) / statistics.fmean(values), runs.machine, len(values))
        for runs in spread.machines
        if len(values := runs.readings.get(bar_key) or []) >= spread.min_runs
        and statistics.fmean(values) > 0
    ]
    if not means or not spreads:
        return None, f"no A/A readings for {bar_key}"
    level = min(means) if floor else max(means)
    cv = max(spreads)
    gap = (level[0] - raw_bar) if floor else (raw_bar - level[0])
    sd = level[0] * cv[0]
    sigmas = gap / sd if sd > 0 else float("inf") if gap > 0 else float("-inf")
    text = (
        f"level {level[0]:.3g} ({level[2]} run(s) on {level[1]}), spread {cv[0]:.1%} "
        f"({cv[2]} runs on {cv[1]})"
    )
    return round(sigmas, 2), text


def _worst(
    records: Iterable[LatencyRecord], profile: str, metric: str, slo: Slo
) -> tuple[str, float, float] | None:
    """(tool, reading, bar) of the tool nearest its bar (reading / bar largest)."""
    rows = [
        (r.tool, float(getattr(r, metric)), bar)
        for r in records
        if r.profile == profile
        and r.n > 0
        and (bar := slo.bars(profile, r.tool).get(metric)) is not None
    ]
    return max(rows, key=lambda row: row[1] / row[2]) if rows else None


def calibrated_rows(
    summary: BenchSummary, records: list[LatencyRecord], raw: Slo, scaled: Slo
) -> list[BarVerdict]:
    rows = []
    for profile, metric in calibrated_latency(raw):
        raw_bar = raw.profiles.get(profile, {}).get(metric)
        if raw_bar is None:
            continue
        worst = _worst(records, profile, metric, scaled)
        sigmas, text = spread_margin(raw.aa_spread, key(profile, metric), raw_bar)
        rows.append(
            BarVerdict(
                name=f"{profile} {metric} (worst tool)",
                bar_class="calibrated",
                measured=worst[1] if worst else None,
                bar=worst[2] if worst else scaled.profiles.get(profile, {}).get(metric),
                raw_bar=raw_bar,
                op="<=",
                passed=(worst[1] <= worst[2]) if worst else None,
                subject=worst[0] if worst else "",
                spread_sigmas=sigmas,
                spread=text,
                note="" if worst else "no calls recorded for this profile: not judged",
            )
        )
    raw_floor = raw.profiles.get("saturation", {}).get("min_rps")
    if raw_floor is not None:
        bar = scaled.saturation.min_rps
        sigmas, text = spread_margin(raw.aa_spread, SATURATION_KEY, raw_floor)
        rows.append(
            BarVerdict(
                name="saturation calls/s",
                bar_class="calibrated",
                measured=summary.saturation_rps,
                bar=bar,
                raw_bar=raw_floor,
                op=">=",
                passed=summary.saturation_rps >= bar,
                spread_sigmas=sigmas,
                spread=text,
            )
        )
    return rows


def setup_errors(
    summary: BenchSummary, records: list[LatencyRecord], profiles: Iterable[str]
) -> dict[str, int]:
    """Per judged locust profile, the calls that failed before any tool (initialize,
    tools/list): the run's errors less its tools' errors."""
    wanted = set(profiles)
    return {
        name: int(run.errors or 0) - sum(r.errors for r in records if r.profile == name)
        for name, run in summary.locust_runs().items()
        if name in wanted and not run.is_empty
    }


def absolute_rows(
    summary: BenchSummary,
    records: list[LatencyRecord],
    raw: Slo,
    codes: dict[str, int],
    setup_profiles: Iterable[str],
) -> list[BarVerdict]:
    errors = sum(r.errors for r in records)
    setup = sum(max(0, n) for n in setup_errors(summary, records, setup_profiles).values())
    ceilings = [
        (f"{r.profile} {r.tool} {metric}", float(getattr(r, metric)), bound)
        for r in records
        if r.n > 0 and not r.profile.startswith("saturation")
        for metric, bound in raw.ceiling(r.tool).items()
    ]
    worst_ceiling = max(ceilings, key=lambda c: c[1] / c[2]) if ceilings else None
    parallel = summary.parallel_run()
    rows = [
        BarVerdict(
            name="errors (every profile, tools and set-up)",
            bar_class="absolute",
            measured=float(errors + setup),
            bar=float(raw.max_errors),
            raw_bar=float(raw.max_errors),
            op="<=",
            passed=errors + setup <= raw.max_errors,
        ),
        BarVerdict(
            name="seeds' latency ceilings (nearest tool)",
            bar_class="absolute",
            measured=worst_ceiling[1] if worst_ceiling else None,
            bar=worst_ceiling[2] if worst_ceiling else None,
            raw_bar=worst_ceiling[2] if worst_ceiling else None,
            op="<=",
            passed=(worst_ceiling[1] <= worst_ceiling[2]) if worst_ceiling else None,
            subject=worst_ceiling[0] if worst_ceiling else "",
            note="" if worst_ceiling else "no latency recorded: not judged",
        ),
        BarVerdict(
            name="parallel guarantees (a)-(d)",
            bar_class="absolute",
            passed=bool(parallel.passed) if parallel else None,
            note="" if parallel else "the parallel profile did not run",
        ),
    ]
    for step, name in (
        ("inprocess", "in-process benchmark: no tool failure, schema and ceilings held"),
        ("cpu_per_call", "CPU per distinct call: every call answered without a tool error"),
    ):
        if step in codes:
            rows.append(BarVerdict(name=name, bar_class="absolute", passed=codes[step] == 0))
    rows.append(
        BarVerdict(
            name="golden gate (answers, evals/gate.yaml)",
            bar_class="absolute",
            passed=summary.gate_pass if "gate" in codes else None,
            note="" if "gate" in codes else "the gate did not run",
        )
    )
    return rows


def reported_rows(summary: BenchSummary) -> list[BarVerdict]:
    rows = []
    cpu = summary.cpu_per_call
    if cpu is not None:
        rows.append(
            BarVerdict(
                name=f"server CPU per call / one query embedding ({cpu.profile} profile)",
                bar_class="reported",
                measured=cpu.ratio,
                note="depends on the CPU's kernels (VNNI, AMX speed the embedding only): "
                "regressions are judged by `make bench BASE=`",
            )
        )
    ratios = [f for f in summary.distinct_call_cpu.values() if f.median_ratio is not None]
    if ratios:
        worst = max(ratios, key=lambda f: f.median_ratio or 0.0)
        rows.append(
            BarVerdict(
                name="CPU per distinct call / one query embedding (highest)",
                bar_class="reported",
                measured=worst.median_ratio,
                subject=f"{worst.tool} {worst.kind}",
                note="depends on the CPU's kernels; judged by `make bench BASE=`",
            )
        )
    floor = summary.transport_floor
    if floor is not None:
        rows.append(
            BarVerdict(
                name="transport floor p95 ms (bare FastMCP tool)",
                bar_class="reported",
                measured=floor.p95_ms,
            )
        )
    for workers, rps in sorted(summary.saturation_rps_by_workers.items()):
        if workers != str(summary.server_workers):
            rows.append(
                BarVerdict(
                    name=f"saturation calls/s on {workers} worker(s)",
                    bar_class="reported",
                    measured=rps,
                )
            )
    return rows


def bar_verdicts(
    summary: BenchSummary,
    records: list[LatencyRecord],
    raw: Slo,
    scaled: Slo,
    codes: dict[str, int],
    *,
    setup_profiles: Iterable[str] = (),
    calibrated: bool = True,
) -> list[BarVerdict]:
    """Every row; with ``calibrated`` off (short runs), the calibrated rows are reported."""
    tight = calibrated_rows(summary, records, raw, scaled)
    if not calibrated:
        tight = [
            row.model_copy(
                update={
                    "passed": None,
                    "note": "short runs (judge_calibrated: false): reported, not judged",
                }
            )
            for row in tight
        ]
    absolute = absolute_rows(summary, records, raw, codes, setup_profiles)
    return [*absolute, *tight, *reported_rows(summary)]


def verdict_table(rows: list[BarVerdict]) -> str:
    """Plain text for the console: class, bar, reading, result, margin from A/A spread."""
    lines = [f"  {'class':10} {'bar':58} {'measured':>9} {'target':>10}  result  A/A margin"]
    for row in rows:
        target = f"{row.op}{row.bar:g}" if row.bar is not None else ""
        result = "-" if row.passed is None else "ok" if row.passed else "MISS"
        margin = f"{row.spread_sigmas:g} sd" if row.spread_sigmas is not None else ""
        measured = f"{row.measured:9.4g}" if row.measured is not None else f"{'':9}"
        name = row.name + (f" [{row.subject}]" if row.subject else "")
        lines.append(
            f"  {row.bar_class:10} {name[:58]:58} {measured} {target:>10}  {result:6}  {margin}"
        )
    return "\n".join(lines)
