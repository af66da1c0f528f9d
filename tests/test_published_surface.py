"""The tool surface as a host sees it: human titles, honest annotations, and capabilities that
announce only what the server serves."""

from __future__ import annotations

from typing import Any

from fastmcp import Client

from reference_server.tools import ALL_TOOLS


async def test_every_tool_has_a_human_title(client: Client[Any]) -> None:
    tools = await client.list_tools()
    titles = {t.name: t.title for t in ALL_TOOLS}
    assert {t.name for t in tools} == set(titles)
    for tool in tools:
        assert tool.title == titles[tool.name]
        assert tool.title and "." not in tool.title, tool.title


async def test_annotations_say_every_tool_only_reads(client: Client[Any]) -> None:
    for tool in await client.list_tools():
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.read_only_hint is True and hints.destructive_hint is False, tool.name
        assert hints.idempotent_hint is True, tool.name
        assert hints.open_world_hint is (tool.name == "opa.freshness_probe"), tool.name


async def test_only_tools_are_announced(client: Client[Any]) -> None:
    caps = client.server_capabilities
    assert caps is not None and caps.tools is not None
    assert not caps.tools.list_changed
    assert caps.prompts is None and caps.resources is None and caps.logging is None


async def test_conflict_values_are_typed_in_every_output_schema(client: Client[Any]) -> None:
    for tool in await client.list_tools():
        conflict = (tool.output_schema or {}).get("$defs", {}).get("Conflict")
        if conflict is None:
            continue
        for name in ("sql_value", "vector_value"):
            prop = conflict["properties"][name]
            assert "anyOf" in prop or "type" in prop, (tool.name, name, prop)
