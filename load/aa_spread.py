"""A/A spread: how much the calibrated bars' readings move between benches of unchanged code.

`ocm load aa-spread <bench folder> ...` reads the bench records of the same code benched
several times on one machine, restates each calibrated bar's reading for the calibration machine
(a latency divided by the run's factor, calls/s multiplied by it: what the bar is compared with
before scaling), and prints per bar the mean, standard deviation, worst reading and how many
standard deviations the bar in `load/slo.yaml` sits beyond the mean, with the readings as a block
for `aa_spread.machines`. The margin is counted as `load/bar_verdicts.py` counts it: from the highest
level any machine read (these runs included) in units of the largest relative spread measured.
Exit 1 when a bar sits fewer than `required_sigmas` beyond (a verdict that could flip on
unchanged code), 2 when fewer than `min_runs` records were readable.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import yaml

from load.bar_verdicts import SATURATION_KEY, calibrated_latency, key, spread_margin
from ocm_common.bench_summary import BenchSummary
from ocm_common.latency_records import RECORDS_FILE, read_records
from ocm_common.machine import one_line
from ocm_common.run_record import RunRecordError, locate, read_record
from ocm_common.slo_file import AaRuns, AaSpread, Slo


def readings_of(summary: BenchSummary, folder: Path, slo: Slo) -> dict[str, float]:
    """Per calibrated bar of `slo`, this run's worst-tool reading restated for the calibration
    machine."""
    factor = (
        float((summary.calibration.factor or {}).get("value") or 1.0)
        if summary.calibration
        else 1.0
    )
    records = read_records(folder / RECORDS_FILE) if (folder / RECORDS_FILE).is_file() else []
    out: dict[str, float] = {}
    for profile, metric in calibrated_latency(slo):
        values = [float(getattr(r, metric)) for r in records if r.profile == profile and r.n > 0]
        if values:
            out[key(profile, metric)] = round(max(values) / factor, 3)
    if summary.saturation_rps:
        out[SATURATION_KEY] = round(summary.saturation_rps * factor, 2)
    return out


def read_runs(folders: list[Path], slo: Slo) -> tuple[list[dict[str, float]], list[str], str]:
    """(readings per run, problems, the machine in one line) from bench folders."""
    runs: list[dict[str, float]] = []
    problems: list[str] = []
    machine = ""
    for folder in folders:
        try:
            record = read_record(locate(folder))
        except RunRecordError as exc:
            problems.append(f"{folder}: {exc}")
            continue
        if record.kind != "bench":
            problems.append(f"{folder}: a {record.kind} record, not a bench")
            continue
        summary = BenchSummary.model_validate(record.body)
        if summary.harness_errors:
            problems.append(f"{folder}: harness errors {summary.harness_errors}: left out")
            continue
        machine = machine or one_line(summary.machine)
        runs.append(readings_of(summary, folder, slo))
    return runs, problems, machine


def by_bar(runs: list[dict[str, float]]) -> dict[str, list[float]]:
    """{bar: its reading in each run that has one}."""
    names = sorted({name for run in runs for name in run})
    return {name: [run[name] for run in runs if name in run] for name in names}


def spread_table(runs: list[dict[str, float]], slo: Slo) -> tuple[list[str], bool]:
    """Lines of the table, and whether every bar sits far enough beyond its A/A level: these
    runs as one more machine beside those `aa_spread` already records."""
    spread = slo.aa_spread or AaSpread()
    these = AaRuns(
        machine="these runs",
        recorded="",
        readings=by_bar(runs),
    )
    combined = spread.model_copy(update={"machines": [*spread.machines, these]})
    lines = [
        f"{'bar':20} {'runs':>4} {'mean':>8} {'sd':>7} {'cv':>6} {'worst':>8} {'bar':>6} "
        f"{'sd beyond':>9}  (level and spread over the recorded machines and these runs)"
    ]
    ok = True
    bars = {key(p, m): slo.profiles.get(p, {}).get(m) for p, m in calibrated_latency(slo)}
    bars[SATURATION_KEY] = slo.profiles.get("saturation", {}).get("min_rps")
    for name, bar in bars.items():
        values = these.readings.get(name, [])
        if bar is None or len(values) < 2:
            lines.append(f"{name:20} {len(values):4}  (too few readings or no bar)")
            continue
        mean, sd = statistics.fmean(values), statistics.stdev(values)
        floor = name == SATURATION_KEY
        worst = min(values) if floor else max(values)
        sigmas, text = spread_margin(combined, name, bar)
        near = sigmas is None or sigmas < spread.required_sigmas
        ok = ok and not near
        lines.append(
            f"{name:20} {len(values):4} {mean:8.2f} {sd:7.2f} {sd / mean:6.1%} {worst:8.2f} "
            f"{bar:6g} {sigmas if sigmas is not None else '-':>9}  {text}"
            + (f"  < {spread.required_sigmas:g}: too near" if near else "")
        )
    return lines, ok


def yaml_block(runs: list[dict[str, float]], machine: str, recorded: str) -> str:
    entry = {"machine": machine, "recorded": recorded, "readings": by_bar(runs)}
    return yaml.safe_dump([entry], sort_keys=False, default_flow_style=None, width=100)


def main(folders: list[Path], slo: Slo, recorded: str = "") -> int:
    runs, problems, machine = read_runs(folders, slo)
    for problem in problems:
        print(problem)
    min_runs = slo.aa_spread.min_runs if slo.aa_spread else 3
    if len(runs) < min_runs:
        print(f"{len(runs)} readable bench record(s); an A/A spread needs at least {min_runs}")
        return 2
    lines, ok = spread_table(runs, slo)
    print(f"A/A spread over {len(runs)} benches on {machine}:")
    print("\n".join(lines))
    print("\nfor load/slo.yaml aa_spread.machines:\n" + yaml_block(runs, machine, recorded))
    return 0 if ok else 1
