"""The runner: events, records, run log files, ablation, concurrency, broken backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fake_server import build_server
from fastmcp import FastMCP

from evals.run.events import CheckFailed, EventBus, RunFinished, RunStarted, ScenarioFinished
from evals.run.reporters import Collector
from evals.run.runlog import RunLog
from evals.run.runner import RunOptions, execute
from evals.run.scenario import Scenario, load_scenarios
from evals.run.targets import TargetError, make_target, server_target


async def run_fake(
    tmp_path: Path, golden: Path, broken: str | None = None, **options: object
) -> tuple[RunLog, Collector]:
    bus, seen = EventBus(), Collector()
    bus.subscribe(seen)
    log = await execute(
        server_target(build_server(broken=broken)),
        load_scenarios(golden),
        tmp_path / "run",
        options=RunOptions(**options),  # type: ignore[arg-type]
        bus=bus,
    )
    return log, seen


async def test_run_writes_one_log_with_everything(tmp_path: Path, golden_fake: Path) -> None:
    log, seen = await run_fake(tmp_path, golden_fake, ablation=True)
    run_dir = tmp_path / "run"
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "qrels.trec",
        "run.default.trec",
        "run.hybrid.trec",
        "run.keyword.trec",
        "run.record.json",
        "run.vector.trec",
        "scenarios.jsonl",
        "tools.json",
    ]
    assert RunLog.read(run_dir) == log
    # the published tool surface, for contract diffs between runs
    assert log.surface is not None and "inputSchema" in log.surface["odb.get"]
    record = json.loads((run_dir / "run.record.json").read_text())
    assert record["header"]["kind"] == "run" and record["header"]["status"] == "complete"
    assert record["header"]["commit"] == record["body"]["git"]["commit"]
    summary = record["body"]
    assert summary["status"] == "complete"
    assert summary["counts"]["passed"] == summary["counts"]["scenarios"] == 5
    assert {"commit", "dirty"} <= set(summary["git"])
    assert summary["config"]["ablation"] is True
    # Only opa.search_sections accepts search_mode: 2 retrieval scenarios x 3 modes.
    assert summary["counts"]["ablation_records"] == 6
    per_mode = summary["aggregates"]["retrieval"]["per_mode"]
    assert (
        per_mode["hybrid"]["nDCG@10"]
        > per_mode["keyword"]["nDCG@10"]
        > per_mode["vector"]["nDCG@10"]
    )

    started = seen.of(RunStarted)[0]
    assert started.total == 11 and started.modes == ("hybrid", "vector", "keyword")
    assert len(seen.of(ScenarioFinished)) == 11
    assert seen.of(CheckFailed) == []
    assert isinstance(seen.events[-1], RunFinished)

    search = next(r for r in log.by_mode() if r.id == "fake-search-virtual-care")
    assert search.retrieved_ids[:2] == ["cpso-virtual-care:s02", "cpso-virtual-care:s01"]
    assert search.timings_ms == {"sql": 3.0, "vector": 5.0, "total": 5.5}
    assert search.metrics["RR@10"] == 1.0
    assert search.ragas["id_context_recall"] == 1.0
    assert [c.check for c in search.checks][:2] == ["no_tool_error", "schema_valid"]
    keyword = next(r for r in log.records if r.id == search.id and r.mode == "keyword")
    assert keyword.args["search_mode"] == "keyword" and keyword.checks == []
    trec = (tmp_path / "run" / "run.keyword.trec").read_text().splitlines()
    assert trec[0] == "fake-search-virtual-care Q0 cpso-virtual-care:s01 1 2 evals-keyword"


@pytest.mark.parametrize(
    ("broken", "scenario_id", "failed_check"),
    [
        ("schema", "fake-search-virtual-care", "schema_valid"),
        ("error", "fake-schedule-a007", "no_tool_error"),
        ("error", "fake-schedule-unknown", "tool_error"),
        ("rank", "fake-search-virtual-care", "ranked_before"),
        ("value", "fake-odb-jardiance", "equals"),
    ],
)
async def test_broken_backends_fail_the_right_checks(
    tmp_path: Path, golden_fake: Path, broken: str, scenario_id: str, failed_check: str
) -> None:
    log, seen = await run_fake(tmp_path, golden_fake, broken=broken, ragas=False)
    record = next(r for r in log.by_mode() if r.id == scenario_id)
    assert record.status == "failed"
    assert failed_check in {c.check for c in record.failures()}
    assert any(e.scenario_id == scenario_id for e in seen.of(CheckFailed))


async def test_disabled_checks_are_not_run(tmp_path: Path, golden_fake: Path) -> None:
    log, _ = await run_fake(
        tmp_path,
        golden_fake,
        broken="schema",
        ragas=False,
        disabled_checks=frozenset({"schema_valid"}),
    )
    assert all("schema_valid" not in {c.check for c in r.checks} for r in log.records)


async def test_concurrency_is_bounded(tmp_path: Path) -> None:
    server = FastMCP("slow")
    state = {"now": 0, "peak": 0}

    @server.tool(name="odb.get")
    async def slow(din: str) -> dict[str, str]:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.05)
        state["now"] -= 1
        return {"din": din}

    scenarios = [
        Scenario(
            id=f"s{i}", title="t", tool="odb.get", args={"din": str(i)}, version=1, source="test"
        )
        for i in range(8)
    ]
    for concurrency in (1, 3):
        state["peak"] = 0
        await execute(
            server_target(server),
            scenarios,
            tmp_path / f"c{concurrency}",
            options=RunOptions(concurrency=concurrency, ragas=False),
        )
        assert state["peak"] == concurrency


async def test_harness_error_writes_aborted_log(tmp_path: Path, golden_fake: Path) -> None:
    with pytest.raises(TargetError):
        await execute(
            make_target("stdio:python -c 'pass'", timeout_s=5),
            load_scenarios(golden_fake),
            tmp_path / "run",
        )
    log = RunLog.read(tmp_path / "run")
    assert log.summary.status == "aborted"
    assert log.summary.error is not None and "TargetError" in log.summary.error


async def test_reused_out_dir_drops_stale_artifacts_only(tmp_path: Path, golden_fake: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    for name in ("run.vector.trec", "gate.record.json", "report.md", "notes.txt"):
        (out / name).write_text("stale")
    await execute(
        server_target(build_server()),
        load_scenarios(golden_fake),
        out,
        options=RunOptions(ragas=False),
    )
    names = {p.name for p in out.iterdir()}
    assert "run.vector.trec" not in names and "gate.record.json" not in names
    assert "report.md" not in names
    assert (out / "notes.txt").read_text() == "stale"
