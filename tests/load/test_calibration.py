"""The calibration maths: which reading, the factor, its clamp, and which bars it scales.

Readings are synthetic; nothing here is timed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from load.bench_judge import _bar_table
from load.calibration import Calibration, factor
from load.slo import load_slo, write_slo
from ocm_common.machine import describe, one_line, read_cpuinfo
from tests.described_machines import AVX2_ONLY
from tests.run_records import bench_markdown

CAL = Calibration(reference_ms=10.0, cpu_model="AMD EPYC", flags={"avx2": True})


def test_factor_is_the_larger_reading_over_the_calibration_reference() -> None:
    f = factor([12.0, 15.0], CAL)
    assert f.value == 1.5 and f.raw == 1.5 and f.used_ms == 15.0
    assert factor([15.0, 12.0], CAL).value == 1.5  # order does not matter
    assert factor([None, 20.0], CAL).value == 2.0  # one reading lost: the other one


def test_a_faster_machine_keeps_the_bars_as_written() -> None:
    f = factor([5.0, 6.0], CAL)
    assert f.raw == 0.6 and f.value == 1.0 and "clamped" in f.note


def test_no_reading_or_no_calibration_scales_nothing() -> None:
    assert factor([None, None], CAL).value == 1.0
    assert factor([], CAL).raw is None
    assert factor([30.0], None).value == 1.0


def test_scaled_slo_widens_tight_bars_and_lowers_the_floor_but_never_the_contract() -> None:
    slo = load_slo()
    scaled = slo.scaled(2.0)
    # tight bars x2 (40/85 ms latency, 270 ms paced p95, the saturation step bar)
    assert scaled.bars("latency", "opa.get_section") == {"p50_ms": 80, "p95_ms": 170}
    assert scaled.bars("paced", "odb.get")["p95_ms"] == 540
    assert scaled.bars("inprocess", "adp.get") == {"p50_ms": 80, "p95_ms": 170}
    assert scaled.saturation.step_p95_ms == 2 * slo.saturation.step_p95_ms
    # the floor / 2
    assert scaled.saturation.min_rps == slo.saturation.min_rps / 2
    # the contract is untouched
    assert scaled.spec_ceilings == slo.spec_ceilings
    assert scaled.parallel == slo.parallel and scaled.max_errors == slo.max_errors
    # the source is not modified
    assert slo.bars("latency", "opa.get_section") == {"p50_ms": 40, "p95_ms": 85}


def test_a_scaled_bar_is_still_capped_by_the_spec_ceiling() -> None:
    very_slow = load_slo().scaled(100.0)
    assert very_slow.bars("latency", "opa.search_sections") == {"p50_ms": 500, "p95_ms": 1000}
    assert very_slow.bars("paced", "adp.get")["p95_ms"] == 1500


def test_hard_only_keeps_ceilings_and_errors(tmp_path: Path) -> None:
    hard = load_slo().hard_only()
    assert hard.bars("latency", "odb.get") == {"p50_ms": 800, "p95_ms": 1500}
    again = load_slo(write_slo(hard, tmp_path / "slo.yaml"))
    assert again == hard


def test_slo_file_can_be_named_by_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_slo(load_slo().scaled(3.0), tmp_path / "scaled.yaml")
    monkeypatch.setenv("LOAD_SLO_FILE", str(path))
    assert load_slo().bars("latency", "odb.get") == {"p50_ms": 120, "p95_ms": 255}


def test_the_committed_calibration_names_its_machine() -> None:
    cal = load_slo().calibration
    assert cal is not None and cal.reference_ms > 0 and cal.cpu_model
    assert set(cal.flags) == {"avx2", "avx512f", "avx512_vnni", "amx"}


def test_bar_table_and_summary_show_raw_and_calibrated_side_by_side() -> None:
    slo = load_slo()
    bars = _bar_table(slo, slo.scaled(1.5), ["odb.get"])
    assert bars["latency"]["odb.get"]["p95_ms"] == {"raw": 85, "calibrated": 127.5}
    assert bars["saturation"]["min_rps"]["calibrated"] == pytest.approx(
        slo.saturation.min_rps / 1.5, abs=0.01
    )
    summary: dict[str, Any] = {
        "timestamp": "t",
        "slo_pass": True,
        "gate_pass": True,
        "server_workers": 4,
        "machine": AVX2_ONLY,
        "machine_at_start": {"reference_ms": 12.0},
        "machine_at_end": {"reference_ms": 15.0},
        "calibration": {
            "workload": "server-mix",
            "factor": factor([12.0, 15.0], CAL).to_json(),
            "reference": CAL.model_dump(),
        },
        "bars": bars,
        "tools": {
            "odb.get": {
                "p50_ms": 5.0,
                "p95_ms": 9.0,
                "p99_ms": 12.0,
                "paced_p95_ms": 30.0,
                "inprocess_p50_ms": 4.0,
                "inprocess_p95_ms": 6.0,
                "errors": 0,
            }
        },
        "saturation_rps_by_workers": {"4": 250.0},
        "profiles": {},
        "cache_hit_rate": {},
        "misses": [],
        "harness_errors": [],
    }
    text = bench_markdown(summary)
    assert "scaled by **1.5**" in text and "85 -> 127.5" in text
    assert "12 ms at the start, 15 ms at the end" in text
    assert "onnxruntime" in text and "avx2" in text


def test_machine_description_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
        "flags\t\t: fpu avx2 avx512f avx512_vnni amx_tile amx_int8\n\nprocessor\t: 1\n"
    )
    assert read_cpuinfo(info) == (
        "Intel(R) Xeon(R) Platinum 8480+",
        {"fpu", "avx2", "avx512f", "avx512_vnni", "amx_tile", "amx_int8"},
    )
    machine = describe(info, arch="x86_64", cores=2)
    assert machine["flags"] == {
        "avx2": True,
        "fma": False,
        "avx512f": True,
        "avx512_vnni": True,
        "avx_vnni": False,
        "amx": True,
        "asimddp": False,
    }
    assert set(machine) == {"cpu_model", "flags", "arch", "cores", "onnxruntime", "numpy", "python"}
    assert "Xeon" in one_line(machine)
    assert read_cpuinfo(tmp_path / "absent") == (None, set())


def test_an_arm_machine_names_its_dot_product_extension(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nFeatures\t: fp asimd crc32 atomics asimddp\n")
    machine = describe(info, arch="aarch64", cores=4)
    assert machine["flags"]["asimddp"] and not machine["flags"]["avx2"]
    assert machine["cpu_model"] is None  # no model in the file; nothing read from this machine


def test_cpu_per_call_ratio_is_against_the_same_runs_reference() -> None:
    from load.slo import cpu_reference_ratio

    # A machine twice as slow doubles both readings: the same ratio.
    assert cpu_reference_ratio(12.0, 10.0) == cpu_reference_ratio(24.0, 20.0) == 1.2
    # A missing reading gives no ratio, never a made-up one.
    assert cpu_reference_ratio(None, 10.0) is None and cpu_reference_ratio(12.0, None) is None
