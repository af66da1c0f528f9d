"""Real transports: stdio, streamable HTTP at /mcp with JSON responses and an optional bearer token."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import httpx
import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

from ocm_common.mcp_messages import PROTOCOL_VERSION
from reference_server.config import Settings
from tests.conftest import HTTP_TOKEN as TOKEN

pytestmark = pytest.mark.slow


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    return {**os.environ, "OCM_INDEX_DIR": str(settings.index_dir), **extra}


@pytest.mark.asyncio
async def test_stdio_lists_tools_with_output_schemas_and_answers(settings: Settings) -> None:
    transport = StdioTransport(
        command=sys.executable, args=["-m", "reference_server"], env=_env(settings)
    )
    async with Client(transport) as client:
        tools = await client.list_tools()
        assert {t.name for t in tools} >= {"opa.search_sections", "opa.clinical_tools"}
        assert all(t.output_schema and t.input_schema for t in tools)
        result = await client.call_tool("opa.clinical_tools", {"condition": "dementia"})
        assert result.structured_content["tools"][0]["tool_id"] == "cep-dementia-diagnosis"


@pytest.mark.asyncio
async def test_http_requires_bearer_token(http_server: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx.AsyncClient() as http:
        response = await http.post(http_server, json=body, headers=headers)
        assert response.status_code == 401
        response = await http.post(
            http_server, json=body, headers={**headers, "Authorization": "Bearer wrong"}
        )
        assert response.status_code == 401


@pytest.mark.asyncio
async def test_http_with_token_lists_and_calls(http_server: str) -> None:
    async with Client(http_server, auth=TOKEN) as client:
        tools = await client.list_tools()
        assert len(tools) >= 7 and all(t.output_schema for t in tools)
        result = await client.call_tool(
            "opa.search_sections", {"query": "closing a medical practice"}, raise_on_error=False
        )
        assert not result.is_error
        assert result.meta["timings_ms"]["total"] > 0
        bad = await client.call_tool(
            "opa.search_sections", {"query": "x", "n_results": 99}, raise_on_error=False
        )
        assert bad.is_error and "n_results" in bad.content[0].text  # type: ignore[union-attr]
        again = await client.call_tool(
            "opa.get_section", {"section_id": "cpso-virtual-care:s01"}, raise_on_error=False
        )
        assert not again.is_error  # still serving after a bad request


@pytest.mark.asyncio
async def test_http_json_response_mode(http_server: str) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
    }
    init: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    async with httpx.AsyncClient() as http:
        response = await http.post(http_server, json=init, headers=headers)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")


def test_refuses_non_loopback_bind() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reference_server", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "not a loopback address" in proc.stderr
