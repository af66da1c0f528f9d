"""SLO verdicts on recorded statistics, MCP reply parsing and the per-call failure rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from load.safety import NotLoopbackError, require_loopback
from load.slo import evaluate, evaluate_saturation, load_slo, miss_table
from load.taskmix import FREE_TEXT_ARGS, TaskMix
from ocm_cli.program import main
from ocm_common.latency_records import LatencyRecord, read_records, write_records
from ocm_common.mcp_http import McpCallError, OutputSchemas, check_tool_result, parse_reply
from tests.served_tools import SERVED


def _rec(profile: str, tool: str, p50: float, p95: float, errors: int = 0) -> LatencyRecord:
    return LatencyRecord(
        profile=profile, tool=tool, n=100, p50_ms=p50, p95_ms=p95, p99_ms=p95, errors=errors
    )


def test_slo_file_holds_spec_ceilings_and_default_bars() -> None:
    slo = load_slo()
    assert slo.bars("latency", "opa.get_section") == {"p50_ms": 40, "p95_ms": 85}
    assert slo.bars("paced", "odb.get") == {"p50_ms": 800, "p95_ms": 270}  # spec p50, our p95
    assert slo.bars("paced", "opa.policy_check")["p50_ms"] == 500
    assert slo.ceiling("coverage.answer") == {"p50_ms": 800, "p95_ms": 1500}
    assert slo.saturation.min_rps == 100 and slo.max_errors == 0
    # reported, never an absolute bar: its expected value depends on the CPU's kernels
    assert slo.cpu_per_call and slo.cpu_per_call.profile == "latency"
    assert "max_reference_ratio" not in type(slo.cpu_per_call).model_fields


def test_recorded_miss_exits_1_and_names_the_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latency.jsonl"
    write_records(
        path, [_rec("latency", "opa.get_section", 3, 9), _rec("latency", "odb.get", 160, 190)]
    )
    assert main(["load", "slo", "--records", str(path)]) == 1
    out = capsys.readouterr().out
    assert "odb.get" in out and "opa.get_section" not in out


def test_recorded_pass_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "latency.jsonl"
    write_records(path, [_rec("paced", "schedule.get", 10, 59)])
    assert main(["load", "slo", "--records", str(path)]) == 0
    assert read_records(path)[0].tool == "schedule.get"


def test_errors_and_saturation_are_misses() -> None:
    misses = evaluate([_rec("paced", "adp.get", 5, 10, errors=1)])
    assert [(m.tool, m.metric) for m in misses] == [("adp.get", "errors")]
    assert evaluate_saturation(90.0)[0].metric == "min_rps"
    assert not evaluate_saturation(250.0)
    assert "adp.get" in miss_table(misses) and "every target met" in miss_table([])


def test_records_from_histogram_match_samples() -> None:
    r = LatencyRecord.from_histogram("latency", "t", {10: 90, 100: 10}, duration_s=10)
    assert (r.n, r.p50_ms, r.rps) == (100, 10.0, 10.0) and r.p99_ms == 100.0


def test_parse_json_and_event_stream_replies() -> None:
    body = {"jsonrpc": "2.0", "id": 7, "result": {"ok": 1}}
    assert parse_reply(200, "application/json", json.dumps(body), 7) == {"ok": 1}
    sse = f"event: message\ndata: {json.dumps(body)}\n\n"
    assert parse_reply(200, "text/event-stream", sse, 7) == {"ok": 1}
    # one message split over several data lines, after a priming event with no data
    pretty = json.dumps(body, indent=1).replace("\n", "\ndata: ")
    split = f"id: 1\ndata:\n\nevent: message\ndata: {pretty}\n\n"
    assert parse_reply(200, "text/event-stream", split, 7) == {"ok": 1}
    with pytest.raises(McpCallError, match="not JSON"):
        parse_reply(200, "text/event-stream", "data: {broken\n\n", 7)
    odd = {**body, "result": {"text": "a\u2028b\x85c\x0bd"}}  # not line breaks in SSE
    sse_odd = f"data: {json.dumps(odd, ensure_ascii=False)}\n\n"
    assert parse_reply(200, "text/event-stream", sse_odd, 7) == odd["result"]
    with pytest.raises(McpCallError, match="HTTP 500"):
        parse_reply(500, "text/plain", "boom", 7)
    err = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad"}}
    with pytest.raises(McpCallError, match="JSON-RPC error -32602"):
        parse_reply(200, "application/json", json.dumps(err), 7)
    with pytest.raises(McpCallError, match="no JSON-RPC reply"):
        parse_reply(200, "application/json", json.dumps({**body, "id": 8}), 7)


def test_call_failure_rules() -> None:
    schemas = OutputSchemas.from_tools_list(
        {
            "tools": [
                {
                    "name": "t",
                    "outputSchema": {
                        "type": "object",
                        "required": ["a"],
                        "properties": {"a": {"type": "integer"}},
                    },
                }
            ]
        }
    )
    assert check_tool_result("t", {"structuredContent": {"a": 1}}, schemas) == {"a": 1}
    with pytest.raises(McpCallError, match="isError"):
        check_tool_result("t", {"isError": True, "content": [{"type": "text", "text": "no"}]})
    with pytest.raises(McpCallError, match="missing structuredContent"):
        check_tool_result("t", {"content": []})
    with pytest.raises(McpCallError, match="outputSchema at a"):
        check_tool_result("t", {"structuredContent": {"a": "x"}}, schemas)
    check_tool_result("t", {"structuredContent": {"a": "x"}})  # not sampled: not validated


def test_loopback_only() -> None:
    assert require_loopback("http://127.0.0.1:8000/mcp")
    assert require_loopback("http://[::1]:8000/mcp")
    with pytest.raises(NotLoopbackError):
        require_loopback("http://example.org/mcp")
    assert main(["load", "run", "--url", "http://10.0.0.1:8000/mcp"]) == 2


def test_task_mix_covers_every_tool_and_varies_free_text() -> None:
    mix = TaskMix.from_golden(seed=3)
    assert sorted(mix.tools) == SERVED
    assert all(not c.scenario.endswith("error") for c in mix.originals())
    texts = {mix.pick("coverage.answer").arguments["question"] for _ in range(200)}
    assert len(texts) > 50  # variants, not the same few strings
    assert all(k in FREE_TEXT_ARGS for k in ("query", "q", "question"))


def test_known_gap_allows_its_miss_and_fails_once_stale() -> None:
    from load.one_path_failing import known_gap_verdict

    assert known_gap_verdict([], None)
    assert not known_gap_verdict(["error: -32602"], None)
    assert known_gap_verdict(["error: -32602"], "SQL cannot rebuild these ids")
    assert not known_gap_verdict([], "SQL cannot rebuild these ids")  # stale: remove it
