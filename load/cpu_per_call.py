"""The bench's CPU per distinct call: `tests/bench_cpu` under pytest-benchmark, read back.

pytest-benchmark times each tool's distinct calls (free text and none apart) with the process
clock and writes its JSON; this reads each benchmark's median, mean and the same session's
reference workload into the bench summary, so the figure is tracked run after run as a ratio
that holds across machines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ocm_common.bench_summary import DistinctCallCpu

TEST_PATH = "tests/bench_cpu"


def pytest_args(json_path: Path) -> list[str]:
    """The pytest command line (after `python`) that measures and writes `json_path`."""
    return [
        *("-m", "pytest", "-q", "-m", "bench", "--benchmark-enable", "--benchmark-only"),
        *("--benchmark-timer", "time.process_time", "--benchmark-json", str(json_path)),
        *(TEST_PATH, "-p", "no:randomly"),
    ]


def read_results(json_path: Path) -> dict[str, DistinctCallCpu]:
    """{"<tool> <kind>": figures} from pytest-benchmark's JSON (absent file: nothing)."""
    if not json_path.is_file():
        return {}
    data: dict[str, Any] = json.loads(json_path.read_text())
    out: dict[str, DistinctCallCpu] = {}
    for bench in data.get("benchmarks", []):
        extra, stats = bench.get("extra_info", {}), bench.get("stats", {})
        tool = bench.get("params", {}).get("tool")
        kind = extra.get("kind") or bench.get("params", {}).get("kind")
        if not tool or not kind or "reference_cpu_ms" not in extra:
            continue
        reference = float(extra["reference_cpu_ms"])
        median = float(stats["median"]) * 1000
        out[f"{tool} {kind}"] = DistinctCallCpu(
            tool=tool,
            kind=kind,
            calls=int(stats.get("rounds", 0)),
            median_ms=round(median, 3),
            mean_ms=round(float(stats["mean"]) * 1000, 3),
            reference_ms=round(reference, 3),
            median_ratio=round(median / reference, 3) if reference else None,
        )
    return out
