"""The bench's reference workload: measured, and shown next to the results it qualifies."""

from __future__ import annotations

from load.bench import render_markdown
from load.calibrate import reference_ms


def test_reference_workload_is_measured() -> None:
    ms = reference_ms(rounds=3)
    assert ms is not None and 0 < ms < 10_000


def test_summary_shows_the_reference_workload_at_start_and_end() -> None:
    summary = {
        "timestamp": "t",
        "slo_pass": False,
        "gate_pass": True,
        "server_workers": 2,
        "machine_at_start": {"cores": 2, "reference_ms": 7.7},
        "machine_at_end": {"cores": 2, "reference_ms": 11.45},
        "tools": {},
        "saturation_rps_by_workers": {"2": 250.0},
        "profiles": {},
        "cache_hit_rate": {},
        "misses": ["paced opa.search_sections p95_ms 74.2 <=60"],
        "harness_errors": [],
    }
    text = render_markdown(summary)
    assert "7.7 ms at the start, 11.45 ms at the end" in text
    assert "opa.search_sections" in text
