"""Load for any server: task mixes from an examples file or generated from the published
schemas (read-only tools only unless allowed), success judged by the protocol."""

from __future__ import annotations

from pathlib import Path

import pytest

from load.taskmix import TaskMix
from ocm_common.mcp_http import McpCallError, OutputSchemas, check_tool_result

LISTING = {
    "tools": [
        {
            "name": "add",
            "annotations": {"readOnlyHint": True},
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "minimum": 0, "maximum": 9},
                    "when": {"type": "string", "format": "date"},
                },
                "required": ["a", "when"],
            },
        },
        {
            "name": "status",
            "annotations": {"readOnlyHint": True},
            "inputSchema": {"type": "object"},
        },
        {"name": "delete_all", "annotations": {"destructiveHint": True}, "inputSchema": {}},
        {
            "name": "rename",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        },
        {
            "name": "long_job",
            "annotations": {"readOnlyHint": True},
            "execution": {"taskSupport": "required"},
            "inputSchema": {"type": "object"},
        },
    ]
}


def test_a_schema_mix_calls_only_read_only_tools_with_valid_arguments() -> None:
    import datetime

    mix = TaskMix.from_schemas(LISTING, seed=4, per_tool=10)
    assert mix.tools == ["add", "status"] and mix.tool_errors_ok
    assert mix.calls["status"][0].arguments == {}
    for call in mix.calls["add"]:
        assert 0 <= call.arguments["a"] <= 9
        datetime.date.fromisoformat(call.arguments["when"])
    again = TaskMix.from_schemas(LISTING, seed=4, per_tool=10)
    assert [c.arguments for c in again.calls["add"]] == [c.arguments for c in mix.calls["add"]]
    assert "rename" in TaskMix.from_schemas(LISTING, seed=4, allow_writes=True).tools


def test_an_examples_file_is_a_mix_for_any_server(tmp_path: Path) -> None:
    path = tmp_path / "examples.yaml"
    path.write_text("add:\n  - {a: 1, when: '2026-01-01'}\nstatus:\n  - {}\n", encoding="utf-8")
    mix = TaskMix.from_source(f"examples:{path}", seed=1)
    assert mix.tools == ["add", "status"] and not mix.tool_errors_ok
    assert mix.pick("add").arguments == {"a": 1, "when": "2026-01-01"}  # examples are not varied
    with pytest.raises(ValueError, match="unknown task mix"):
        TaskMix.from_source("nonsense")


def test_success_is_judged_by_the_protocol() -> None:
    schemas = OutputSchemas.from_tools_list(
        {"tools": [{"name": "t", "outputSchema": {"type": "object"}}, {"name": "plain"}]}
    )
    text_only = {"content": [{"type": "text", "text": "3"}]}
    assert check_tool_result("plain", text_only, schemas) is None  # no outputSchema: fine
    with pytest.raises(McpCallError, match="missing structuredContent"):
        check_tool_result("t", text_only, schemas)
    error = {"isError": True, "content": [{"type": "text", "text": "not found"}]}
    assert check_tool_result("plain", error, schemas, tool_errors_ok=True) is None
    with pytest.raises(McpCallError, match="isError"):
        check_tool_result("plain", error, schemas)
