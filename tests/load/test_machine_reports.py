"""Bench and regression reports state the machine they ran on correctly, for three described
machines (AVX2 only, AVX-512 with VNNI, ARM64 with the dot product), whatever CPU runs the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.read import bench_report
from load.calibration import Calibration, factor
from load.regression import judge
from tests.described_machines import MACHINES, STATED
from tests.run_records import write_bench

# The committed calibration's shape: recorded on an AVX2-only machine.
CAL = Calibration(
    reference_ms=10.0,
    cpu_model="AMD EPYC",
    flags={"avx2": True, "avx512f": False, "avx512_vnni": False, "amx": False},
)
# What each machine must be said to differ by from that calibration machine.
KERNEL_NOTE = {
    "avx2-only": None,
    "avx512-vnni": "This machine has avx512f, avx512_vnni, which the calibration machine lacks",
    "avx512-amx": "This machine has avx512f, avx512_vnni, amx, which the calibration machine lacks",
    "arm64-asimddp": "This machine (aarch64) is of another architecture than the calibration",
}


def _bench_summary(machine: dict[str, Any]) -> dict[str, Any]:
    return {
        "timestamp": "t",
        "slo_pass": True,
        "gate_pass": True,
        "server_workers": 4,
        "machine": machine,
        "machine_at_start": {"reference_ms": 12.0},
        "machine_at_end": {"reference_ms": 13.0},
        "calibration": {
            "workload": "server-mix",
            "factor": factor([12.0, 13.0], CAL).to_json(),
            "reference": CAL.model_dump(),
        },
        "bars": {},
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
        "saturation_rps_by_workers": {},
        "profiles": {},
        "cache_hit_rate": {},
        "misses": [],
        "harness_errors": [],
    }


def _regression_summary(machine: dict[str, Any]) -> dict[str, Any]:
    base = [10.0 + 0.1 * (i % 7) for i in range(60)]
    return {
        "kind": "regression",
        "base_rev": "HEAD",
        "base_sha": "0123456789abcdef",
        "machine": machine,
        "rounds": 60,
        "regression": judge({"odb.get": (base, base)}).to_json(),
        "hard_failures": [],
        "exit_code": 0,
    }


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_bench_report_states_the_machine(name: str, tmp_path: Path) -> None:
    summary = _bench_summary(MACHINES[name])
    write_bench(tmp_path, summary)
    text = bench_report.write(tmp_path)["markdown"].read_text()
    assert STATED[name] in text, text
    if name == "arm64-asimddp":
        assert "avx2" not in text.split("calibration:")[0]  # not said to lack x86 kernels
    note = KERNEL_NOTE[name]
    assert (note in text) if note else ("calibration machine lacks" not in text), text


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_regression_report_states_the_machine(name: str, tmp_path: Path) -> None:
    summary = _regression_summary(MACHINES[name])
    write_bench(tmp_path, summary)
    assert STATED[name] in bench_report.write(tmp_path)["markdown"].read_text()
