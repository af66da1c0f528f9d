"""The bench's CPU per distinct call, a function: per tool and kind the median and mean of each
call's process CPU, the same run's reference and the ratio, a tool error named; shown in the
bench report. The clock and the server are described here, never read from the machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from load import cpu_per_call
from load.taskmix import Call, TaskMix
from tests.described_machines import AVX2_ONLY
from tests.run_records import bench_markdown


class DescribedServer:
    """Each call advances the described process clock by the CPU ms given for its arguments;
    a DIN of "0" answers a tool error."""

    def __init__(self, clock: list[float], cost_ms: dict[str, float]) -> None:
        self.clock, self.cost_ms, self.calls = clock, cost_ms, 0

    def call(self, tool: str, args: dict[str, Any]) -> bool:
        self.calls += 1
        self.clock[0] += self.cost_ms["free" if "query" in args else "none"] / 1000
        return args.get("din") != "0"


def _mix(calls: list[dict[str, Any]]) -> TaskMix:
    return TaskMix(
        {"odb.get": [Call("odb.get", a, "described") for a in calls]}, source="described"
    )


def test_each_kind_is_measured_apart_with_its_ratio_to_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]
    monkeypatch.setattr(cpu_per_call.time, "process_time", lambda: clock[0])
    server = DescribedServer(clock, {"free": 12.0, "none": 4.0})
    calls = [{"query": f"statin {i}"} for i in range(5)] + [{"din": f"0223{i}"} for i in range(3)]
    figures, failed = cpu_per_call.measure(server, _mix(calls), reference_ms=8.0, calls=4)
    assert not failed and server.calls == 4 + 3  # at most 4 calls of a kind
    free, none = figures["odb.get free_text"], figures["odb.get no_free_text"]
    assert (free.calls, free.median_ms, free.mean_ms, free.median_ratio) == (4, 12.0, 12.0, 1.5)
    assert (none.calls, none.median_ms, none.median_ratio) == (3, 4.0, 0.5)
    assert set(figures) == {"odb.get free_text", "odb.get no_free_text"}  # other tools: no calls


def test_a_call_answered_with_a_tool_error_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(cpu_per_call.time, "process_time", lambda: clock[0])
    server = DescribedServer(clock, {"free": 1.0, "none": 1.0})
    _, failed = cpu_per_call.measure(server, _mix([{"din": "0"}]), reference_ms=8.0)
    assert failed == ["odb.get {'din': '0'}: answered a tool error"]


def test_the_bench_report_shows_each_tool_and_kind(tmp_path: Path) -> None:
    figure = {
        "tool": "odb.get",
        "kind": "no_free_text",
        "calls": 60,
        "median_ms": 4.0,
        "mean_ms": 5.0,
        "reference_ms": 8.0,
        "median_ratio": 0.5,
    }
    text = bench_markdown(
        {
            "timestamp": "t",
            "machine": AVX2_ONLY,
            "distinct_call_cpu": {"odb.get no_free_text": figure},
        }
    )
    assert "## CPU per distinct call" in text
    assert "| odb.get | no free text | 60 | 4.00 | 5.00 | 0.50 |" in text
