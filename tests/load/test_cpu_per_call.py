"""The bench's CPU per distinct call: pytest-benchmark's JSON read into the summary (median, mean,
the session's reference and the ratio, per tool and kind) and shown in the bench report."""

from __future__ import annotations

import json
from pathlib import Path

from load import cpu_per_call
from tests.described_machines import AVX2_ONLY
from tests.run_records import bench_markdown


def benchmark_entry(tool: str, kind: str, median_s: float, mean_s: float, rounds: int) -> dict:
    return {
        "name": f"test_cpu_per_distinct_call[{tool}-{kind}]",
        "params": {"tool": tool, "kind": kind},
        "stats": {"median": median_s, "mean": mean_s, "rounds": rounds},
        "extra_info": {"reference_cpu_ms": 8.0, "kind": kind},
    }


def test_each_tool_and_kind_is_read_with_its_ratio_to_the_reference(tmp_path: Path) -> None:
    path = tmp_path / "cpu.json"
    data = {
        "benchmarks": [
            benchmark_entry("odb.get", "no_free_text", 0.004, 0.005, 60),
            benchmark_entry("odb.get", "free_text", 0.012, 0.0125, 60),
            {"name": "some other benchmark", "params": {}, "stats": {}, "extra_info": {}},
        ]
    }
    path.write_text(json.dumps(data))
    read = cpu_per_call.read_results(path)
    assert set(read) == {"odb.get no_free_text", "odb.get free_text"}
    no_text = read["odb.get no_free_text"]
    assert (no_text.median_ms, no_text.mean_ms, no_text.calls) == (4.0, 5.0, 60)
    assert no_text.median_ratio == 0.5  # 4 ms against an 8 ms reference
    assert read["odb.get free_text"].median_ratio == 1.5


def test_no_benchmark_file_reads_as_nothing_measured(tmp_path: Path) -> None:
    assert cpu_per_call.read_results(tmp_path / "absent.json") == {}


def test_the_pytest_command_times_the_process_clock_into_the_json(tmp_path: Path) -> None:
    args = cpu_per_call.pytest_args(tmp_path / "cpu.json")
    assert args[args.index("--benchmark-timer") + 1] == "time.process_time"
    assert args[args.index("--benchmark-json") + 1] == str(tmp_path / "cpu.json")
    assert cpu_per_call.TEST_PATH in args


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
