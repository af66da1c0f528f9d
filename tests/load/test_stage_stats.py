"""Where the time goes: the load user's per-tool stage aggregates from described replies, the
bench's typed table, the report's tools x stages table, and the transport floor's tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastmcp import Client

from evals.read import bench_report
from load.bench_judge import stage_table
from load.stage_stats import MCP_HTTP, StageSamples
from load.transport_floor import ANSWER, TOOL, build_floor_server
from ocm_common.profile_results import LocustResult
from tests.run_records import write_bench


def reply(parse: float, sql: float, handler: float, **more: float) -> dict[str, Any]:
    return {"sql": sql, "vector": None, "total": handler - 1, "handler": handler,
            "stages": {"parse": parse, "sql": sql, **more}}  # fmt: skip


def test_stages_are_aggregated_per_tool_with_the_mcp_http_layer() -> None:
    samples = StageSamples()
    # parse 1..20 ms over 20 replies; each client latency is the handler + 3 ms
    for i in range(1, 21):
        samples.see("odb.get", client_ms=10.0 * i + 3, timings=reply(float(i), 2.0, 10.0 * i))
    samples.see("adp.get", client_ms=5.0, timings=reply(1.0, 1.0, 4.0, embed_cached=0.25))
    samples.see("adp.get", client_ms=5.0, timings={"sql": 1.0, "total": 2.0})  # no stages: skipped
    summary = samples.summary()
    odb = summary["odb.get"]
    assert odb["parse"] == {"n": 20, "median_ms": 10.0, "p95_ms": 19.0, "mean_ms": 10.5}
    assert odb["sql"]["mean_ms"] == 2.0
    assert odb[MCP_HTTP] == {"n": 20, "median_ms": 3.0, "p95_ms": 3.0, "mean_ms": 3.0}
    assert odb["handler"]["p95_ms"] == 190.0
    assert summary["adp.get"]["embed_cached"]["n"] == 1
    assert summary["adp.get"]["parse"]["n"] == 1


def test_a_workers_samples_reach_the_master_once() -> None:
    worker, master = StageSamples(), StageSamples()
    worker.see("odb.get", 12.0, reply(1.0, 2.0, 10.0))
    master.merge(worker.drain())
    master.merge(worker.drain())  # drained: nothing twice
    assert master.summary()["odb.get"]["parse"]["n"] == 1


def test_the_report_renders_one_tools_by_stages_table_per_profile(tmp_path: Path) -> None:
    samples = StageSamples()
    samples.see("odb.get", 13.0, reply(1.5, 4.0, 10.0, validation=0.25, embed=6.5))
    table = stage_table(
        {
            "paced": LocustResult.model_validate({"stages": samples.summary()}),
            "latency": LocustResult(calls=3),
        }
    )
    summary = {
        "timestamp": "t",
        "stages": {
            profile: {tool: {s: f.model_dump() for s, f in st.items()} for tool, st in tools.items()}
            for profile, tools in table.items()
        },
        "transport_floor": {"profile": "latency", "workers": 2, "calls": 40, "p50_ms": 1.25,
                            "p95_ms": 2.5},
    }  # fmt: skip
    write_bench(tmp_path, summary)
    text = bench_report.write(tmp_path)["markdown"].read_text()
    assert "Profile `paced`:" in text and "Profile `latency`" not in text
    assert "| tool | validation | parse | sql | embed | handler | mcp_http |" in text
    row = "| odb.get | 0.25 / 0.25 | 1.50 / 1.50 | 4.00 / 4.00 | 6.50 / 6.50 | 10.00 / 10.00 |"
    assert row + " 3.00 / 3.00 |" in text
    assert "Transport floor" in text and "p50 1.25 ms, p95 2.50 ms over 40 calls" in text


async def test_the_floor_tool_answers_its_constant() -> None:
    async with Client(build_floor_server()) as client:
        listed = {t.name: t for t in await client.list_tools()}
        assert listed[TOOL].annotations is not None and listed[TOOL].annotations.read_only_hint
        result = await client.call_tool(TOOL, {})
    assert result.structured_content == ANSWER
