"""Each command writes its run record, by the cheapest invocation of each: the bench's last
step on measured figures described here, `load run` with locust replaced, `scale.bench` with its
servers replaced, and `evals derive` with one family. (`evals run`, `gate`, `fuzz`, `security`
and `contract` are asserted in their own tests, `bench BASE=` in test_base_worktree.py.)"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from load import bench
from load import run as load_run
from ocm_cli.program import main as ocm_main
from ocm_common.bench_summary import BenchSummary, MachineLoad
from ocm_common.latency_records import RECORDS_FILE, LatencyRecord, write_records
from ocm_common.profile_results import LocustResult, ParallelResult
from ocm_common.run_record import read_record
from scale import bench as scale_bench
from tests.described_machines import AVX2_ONLY
from tests.run_records import assert_record, write_bench

TOOLS = ("odb.get", "adp.get")


def _records() -> list[LatencyRecord]:
    return [
        LatencyRecord(
            profile=profile, tool=tool, n=50, p50_ms=8.0, p95_ms=20.0, p99_ms=30.0, rps=9.0
        )
        for profile in ("latency", "paced", "inprocess")
        for tool in TOOLS
    ]


def test_the_bench_writes_its_record_with_the_typed_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    readings = iter([10.0, 12.0])
    monkeypatch.setattr(
        bench, "_machine", lambda workload: MachineLoad(cores=2, reference_ms=next(readings))
    )
    monkeypatch.setattr(bench, "describe", lambda: AVX2_ONLY)
    rendered: list[Path] = []
    steps = bench.BenchSteps(
        gate_target="inprocess",
        eval_and_gate=lambda target, out: 0,
        render_report=lambda folder: rendered.append(folder) or 0,
    )
    run = bench.Bench(tmp_path, steps)
    write_records(run.out / RECORDS_FILE, _records())
    run.summary.profiles = {
        "latency": LocustResult(calls=100, errors=0),
        "paced": LocustResult(calls=100, errors=0),
        "saturation": LocustResult(calls=100, errors=0, saturation_rps=500.0),
        "parallel": ParallelResult(passed=True, findings=[]),
    }
    run.codes = {"latency": 0, "paced": 0, "saturation": 0, "inprocess": 0, "parallel": 0}
    run.summary.gate_pass = True
    code = bench._finish(run)
    record = assert_record(run.out, "bench", code)
    summary = BenchSummary.model_validate(record.body)
    assert summary.machine == AVX2_ONLY == record.header.machine
    assert set(summary.tools) == set(TOOLS) and summary.tools["odb.get"].p95_ms == 20.0
    assert summary.exit_code == code and summary.gate_pass
    assert record.header.settings["profiles"]["latency"]["time_s"] > 0
    assert record.header.settings["gate_target"] == "inprocess"
    assert rendered == [run.out]  # the report rendered by the eval harness's function
    assert (tmp_path / "latest" / "bench.record.json").is_file()


def test_a_load_run_writes_its_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_profile(name: str, url: str, out: Path, *_: Any, **__: Any) -> load_run.LocustRun:
        write_records(out / RECORDS_FILE, _records()[:1])
        return load_run.LocustRun(name, 1, {"calls": 40, "errors": 2})

    monkeypatch.setattr(load_run, "run_profile", fake_profile)
    url = "http://127.0.0.1:9/mcp"
    args = ["run", "--url", url, "--out", str(tmp_path), "--time", "3s", "--users", "2"]
    assert ocm_main(["load", *args]) == 1
    record = assert_record(tmp_path, "load", 1)
    assert record.header.target == url and record.header.settings["users"] == 2
    assert record.body == {"profile": "latency", "calls": 40, "errors": 2}
    assert record.files == [RECORDS_FILE]


def test_scale_writes_its_record_and_adds_its_figures_to_the_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = {"p50_ms": 5.0, "p95_ms": 9.0, "errors": 0, "samples_ms": [5.0, 9.0]}

    async def single_client(urls: dict[int, str], calls: Any, rounds: int) -> dict[int, Any]:
        return {1: {"odb.get": dict(row)}}

    async def saturation(url: str, calls: Any, clients: int, seconds: float) -> dict[str, Any]:
        return {"odb.get": {"rps": 40.0, "errors": 0}}

    @contextlib.contextmanager
    def servers(dirs: Any, workers: int, logs: Path) -> Iterator[dict[int, str]]:
        yield {1: "http://127.0.0.1:9/mcp"}

    monkeypatch.setattr(
        scale_bench,
        "build_indexes",
        lambda f, c: ({1: tmp_path}, {1: {"chunks": 10, "bytes": 2e6, "build_s": 1.0}}),
    )
    monkeypatch.setattr(scale_bench, "servers", servers)
    monkeypatch.setattr(scale_bench, "golden_calls", lambda: [])
    monkeypatch.setattr(scale_bench, "single_client", single_client)
    monkeypatch.setattr(scale_bench, "saturation", saturation)
    monkeypatch.setattr(scale_bench, "plot", lambda result, path: None)
    bench_dir = tmp_path / "bench"
    write_bench(bench_dir, {"timestamp": "t", "machine": AVX2_ONLY, "exit_code": 0})
    out = tmp_path / "scale"
    assert (
        ocm_main(["scale", "--factors", "1", "--out", str(out), "--summary", str(bench_dir)]) == 0
    )
    record = assert_record(out, "scale", 0)
    assert record.body["scale"]["1"]["odb.get"]["rps"] == 40.0
    bench_record = read_record(bench_dir / "bench.record.json")
    assert bench_record.body["scale"] == {"1": {"odb.get": {"p50_ms": 5.0, "p95_ms": 9.0}}}
    assert bench_record.header.machine == AVX2_ONLY  # the bench's header is kept


def test_derive_writes_its_record(tmp_path: Path) -> None:
    out = tmp_path / "cases"
    args = ["derive", "--out", str(out), "--family", "schedule.code_fee", "--per-family", "3"]
    assert ocm_main(args) == 0
    record = assert_record(out, "derived", 0)
    assert record.body["cases"] == {"schedule.code_fee": 3}
    assert record.files == ["schedule.code_fee.jsonl"]
    assert record.header.settings["per_family"] == 3
