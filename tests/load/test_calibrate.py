"""The bench's reference workload: measured, and shown next to the results it qualifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from load.calibrate import reference_ms
from load.hoststat import cpu_shares, cpu_times
from tests.run_records import bench_markdown


def test_reference_workload_is_measured() -> None:
    """A live reading: whatever the CPU (emulated ones included), a few ms to a few s."""
    ms = reference_ms(rounds=3)
    assert ms is not None and 0 < ms < 10_000


def _summary(**fields: Any) -> dict[str, Any]:
    """A bench summary as `load.bench` writes it, with the fields a test is about."""
    return {
        "timestamp": "t",
        "slo_pass": False,
        "gate_pass": True,
        "server_workers": 2,
        "machine_at_start": {"cores": 2, "reference_ms": 2.2},
        "tools": {},
        "saturation_rps_by_workers": {"2": 250.0},
        "profiles": {},
        "cache_hit_rate": {},
        "misses": [],
        "harness_errors": [],
        **fields,
    }


def test_summary_shows_the_reference_workload_at_start_and_end() -> None:
    summary = _summary(
        machine_at_start={"cores": 2, "reference_ms": 7.7},
        machine_at_end={"cores": 2, "reference_ms": 11.45},
        misses=["paced opa.search_sections p95_ms 74.2 <=60"],
    )
    text = bench_markdown(summary)
    assert "7.7 ms at the start, 11.45 ms at the end" in text
    assert "opa.search_sections" in text


def test_steal_share_comes_from_the_kernels_counters(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n")
    before = cpu_times(stat)
    stat.write_text("cpu  500 0 150 1000 50 100 0 200 30 0\n")
    after = cpu_times(stat)
    # 1,000 ticks in all: 200 idle, 200 steal; guest ticks are already in user
    assert cpu_shares(before, after) == {"busy": 0.8, "steal": 0.2}
    assert cpu_shares(None, after) is None and cpu_shares(after, after) is None
    stat.write_text("intr 1 2 3\n")
    assert cpu_times(stat) is None and cpu_times(tmp_path / "absent") is None


def test_summary_shows_steal_per_profile() -> None:
    summary = _summary(
        profiles={
            "latency": {"machine_cpu": {"busy": 0.41, "steal": 0.012}},
            "paced": {"machine_cpu": {"busy": 0.7, "steal": 0.218}},
            "saturation": {"machine_cpu": None},
        }
    )
    text = bench_markdown(summary)
    assert "'latency': '1.2%', 'paced': '21.8%'" in text and "saturation': '" not in text
