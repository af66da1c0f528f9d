"""Targets: one contract over an in-memory server, a stdio subprocess and streamable HTTP."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from evals_testkit import FAKE_SERVER, STDIO_SPEC
from fake_server import build_server
from pydantic import BaseModel

from evals.run.targets import (
    McpTarget,
    TargetError,
    make_target,
    parse_overrides,
    server_target,
)
from ocm_common.launcher import free_port, mcp_ready, running


async def test_in_memory_target_lists_tools_with_schemas() -> None:
    async with server_target(build_server()) as target:
        tools = {tool.name: tool for tool in await target.list_tools()}
    assert set(tools) == {"opa.search_sections", "schedule.get", "odb.get"}
    search = tools["opa.search_sections"]
    assert search.accepts("search_mode") and not search.accepts("colour")
    assert search.output_schema is not None and "sections" in search.output_schema["properties"]


async def test_call_returns_plain_outcome_with_meta_timings() -> None:
    async with server_target(build_server()) as target:
        outcome = await target.call_tool("opa.search_sections", {"query": "virtual care"})
    assert not outcome.is_error
    assert outcome.structured is not None
    assert outcome.structured["sections"][0]["section_id"].endswith(":c1")
    assert outcome.timings == {"sql": 3.0, "vector": 5.0, "total": 5.5}
    assert outcome.latency_ms > 0


async def test_tool_error_is_a_value_not_an_exception() -> None:
    async with server_target(build_server()) as target:
        outcome = await target.call_tool("schedule.get", {"codes": ["Z999"]})
    assert outcome.is_error and outcome.structured is None
    assert "codes: unknown fee code(s) Z999" in outcome.text


async def test_schema_invalid_result_is_recorded_as_it_came() -> None:
    async with server_target(build_server(broken="schema")) as target:
        outcome = await target.call_tool("opa.search_sections", {"query": "virtual care"})
    assert not outcome.is_error
    assert outcome.structured is not None and outcome.structured["provenance"] == "sql"


async def test_unknown_tool_comes_back_as_an_error() -> None:
    async with server_target(build_server()) as target:
        outcome = await target.call_tool("nope.tool", {})
    # FastMCP reports an unknown tool as an error result; either way it is never a pass.
    assert outcome.is_error and "nope.tool" in outcome.text


async def test_using_a_target_outside_its_context_fails_clearly() -> None:
    with pytest.raises(TargetError, match="outside 'async with'"):
        await server_target(build_server()).list_tools()


async def test_stdio_target() -> None:
    async with make_target(STDIO_SPEC) as target:
        names = {tool.name for tool in await target.list_tools()}
        ok = await target.call_tool("odb.get", {"din": "02443937"})
        bad = await target.call_tool("odb.get", {"din": "1"})
    assert "odb.get" in names
    assert ok.structured is not None and ok.structured["lowest_cost"]["din"] == "02471477"
    assert bad.is_error and "din" in bad.text


async def test_stdio_target_that_cannot_start() -> None:
    with pytest.raises(TargetError, match="cannot connect"):
        async with make_target("stdio:python -c 'import sys; sys.exit(3)'", timeout_s=5):
            pass


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, str(FAKE_SERVER), "--http", str(port), "--token", "s3cret"]
    with running(command, ready=mcp_ready(url), what="fake HTTP server", timeout_s=20):
        yield url


async def test_http_target_with_bearer_token(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_BEARER_TOKEN", "s3cret")
    async with make_target(http_server) as target:
        outcome = await target.call_tool("schedule.get", {"codes": ["A007"]})
    assert outcome.structured is not None and outcome.structured["items"][0]["fee"] == 37.95


async def test_http_target_without_token_is_refused(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALS_BEARER_TOKEN", raising=False)
    with pytest.raises(TargetError):
        async with make_target(http_server, timeout_s=5) as target:
            await target.list_tools()


def test_spec_strings() -> None:
    assert make_target("inprocess").spec == "inprocess"
    assert make_target("inprocess:mode=keyword").spec == "inprocess:mode=keyword"
    assert make_target("https://example.org/mcp").spec == "https://example.org/mcp"
    assert make_target("stdio:python -m x").spec == "stdio:python -m x"
    assert make_target("https://example.org/mcp").for_mode("vector") is None
    with pytest.raises(TargetError, match="unknown target spec"):
        make_target("ftp://example.org")
    with pytest.raises(TargetError, match="needs a command"):
        make_target("stdio:")


def test_parse_overrides() -> None:
    assert parse_overrides("mode=keyword,sql_timeout_ms=250,faults.sql_fail=true") == {
        "mode": "keyword",
        "sql_timeout_ms": 250,
        "faults": {"sql_fail": True},
    }
    with pytest.raises(TargetError, match="key=value"):
        parse_overrides("sql_timeout_ms=250,mode")
    with pytest.raises(TargetError, match="unknown configuration 'mode'; known: hybrid"):
        parse_overrides("mode")


def test_named_configurations_resolve_to_settings_overrides() -> None:
    assert parse_overrides("keyword") == {"mode": "keyword"}
    assert parse_overrides("hybrid") == {}
    # a named configuration first, explicit overrides on top (nested keys merge)
    assert parse_overrides("no-boosts,fusion.rrf_k=60,sql_timeout_ms=5000") == {
        "fusion": {"boosts": False, "rrf_k": 60},
        "sql_timeout_ms": 5000,
    }
    assert make_target("inprocess:keyword").spec == "inprocess:keyword"


def test_openai_configurations_need_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in ("openai-embeddings", "llm-rerank"):
        with pytest.raises(TargetError, match=f"configuration '{name}' is unavailable"):
            parse_overrides(name)


class _Settings(BaseModel):
    mode: str = "hybrid"
    sql_timeout_ms: float = 500.0


@pytest.fixture
def fake_reference_server(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Stand-in ``reference_server.server`` / ``.config`` modules recording the Settings used."""
    built: list[Any] = []

    def fake_build(settings: _Settings) -> Any:
        built.append(settings)
        return build_server()

    server_mod = types.ModuleType("reference_server.server")
    server_mod.build_server = fake_build  # type: ignore[attr-defined]
    config_mod = types.ModuleType("reference_server.config")
    config_mod.Settings = _Settings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reference_server.server", server_mod)
    monkeypatch.setitem(sys.modules, "reference_server.config", config_mod)
    return built


async def test_inprocess_target_passes_overrides_and_modes(
    fake_reference_server: list[Any],
) -> None:
    target = make_target("inprocess:sql_timeout_ms=250")
    async with target:
        await target.list_tools()
    moded = target.for_mode("keyword")
    assert isinstance(moded, McpTarget)
    assert moded.spec == "inprocess:sql_timeout_ms=250,mode=keyword"
    async with moded:
        await moded.list_tools()
    assert [(s.mode, s.sql_timeout_ms) for s in fake_reference_server] == [
        ("hybrid", 250.0),
        ("keyword", 250.0),
    ]


async def test_inprocess_target_with_bad_settings(fake_reference_server: list[Any]) -> None:
    with pytest.raises(TargetError, match="cannot build the reference server"):
        async with make_target("inprocess:sql_timeout_ms=fast"):
            pass
    with pytest.raises(TargetError, match="bad override value"):
        parse_overrides("mode=[1")
