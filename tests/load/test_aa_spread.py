"""A/A spread: each calibrated bar's margin comes from how much unchanged code moves between
benches, and `load/slo.yaml` is held to it."""

from __future__ import annotations

from pathlib import Path

from load.aa_spread import main, spread_table
from load.bar_verdicts import SATURATION_KEY, calibrated_latency, key, spread_margin
from load.slo import load_slo
from ocm_common.slo_file import AaRuns, AaSpread


def test_a_bar_within_four_sd_of_the_aa_mean_is_named_too_near() -> None:
    slo = load_slo().model_copy(
        update={"profiles": {"latency": {"p50_ms": 12.0}}, "aa_spread": AaSpread()}
    )
    runs = [{"latency.p50_ms": v} for v in (9.0, 10.0, 11.0)]  # mean 10, sd 1 (10 %): 2 sd away
    lines, ok = spread_table(runs, slo)
    assert not ok and any("too near" in line for line in lines)
    slo = slo.model_copy(update={"profiles": {"latency": {"p50_ms": 14.5}}})
    assert spread_table(runs, slo)[1]  # 4.5 sd away


def test_a_floor_is_measured_below_its_readings() -> None:
    spread = AaSpread(
        machines=[
            AaRuns(machine="m", recorded="r", readings={SATURATION_KEY: [300.0, 320.0, 340.0]})
        ]
    )
    sigmas, text = spread_margin(spread, SATURATION_KEY, 240.0)
    assert sigmas == 4.0 and "level 320" in text  # (320 - 240) / (320 x 6.25 %)


def test_a_slow_machines_level_takes_the_spread_another_machine_measured() -> None:
    """The calibration machine read 26 ms once; a faster machine's five runs vary by 10 %: the
    bar must clear 26 ms by 4 x 10 % of 26."""
    spread = AaSpread(
        machines=[
            AaRuns(machine="fast", recorded="r", readings={"latency.p50_ms": [9.0, 10.0, 11.0]}),
            AaRuns(machine="slow", recorded="r", readings={"latency.p50_ms": [26.0]}),
        ]
    )
    sigmas, text = spread_margin(spread, "latency.p50_ms", 30.0)
    assert text.startswith("level 26 (1 run(s) on slow), spread 10.0% (3 runs on fast)")
    assert sigmas is not None and round(sigmas, 2) == 1.54  # (30 - 26) / 2.6: too near
    assert spread_margin(spread, "latency.p50_ms", 36.5)[0] == 4.04


def test_no_machine_with_enough_runs_gives_no_margin() -> None:
    spread = AaSpread(
        machines=[AaRuns(machine="m", recorded="r", readings={"paced.p95_ms": [80.0, 90.0]})]
    )
    assert spread_margin(spread, "paced.p95_ms", 200.0)[0] is None


def test_too_few_bench_records_is_a_harness_error(tmp_path: Path) -> None:
    assert main([tmp_path / "a", tmp_path / "b"], load_slo()) == 2


def test_every_calibrated_bar_in_the_slo_file_sits_beyond_its_aa_spread() -> None:
    slo = load_slo()
    spread = slo.aa_spread
    assert spread is not None and spread.machines, "load/slo.yaml records no A/A runs"
    bars = {key(p, m): slo.profiles[p][m] for p, m in calibrated_latency(slo)}
    bars[SATURATION_KEY] = slo.profiles["saturation"]["min_rps"]
    for name, bar in bars.items():
        measured = [m for m in spread.machines if len(m.readings.get(name, [])) >= spread.min_runs]
        assert measured, f"{name}: no machine with {spread.min_runs}+ A/A readings"
        sigmas, text = spread_margin(spread, name, bar)
        assert sigmas is not None and sigmas >= spread.required_sigmas, (name, bar, text)
