"""Independent clients list and call all four tool-search tools over stdio: the official MCP
Python SDK client (default suite) and the MCP Inspector CLI (slow: it needs Node from npm)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.test_http_contract import _inspector

TRIALS = "tool_search/catalogues/clinical_trials_assistant.json"
SERVE = [sys.executable, "-m", "tool_search", "serve", "--from", TRIALS]
CALLS: dict[str, dict[str, Any]] = {
    "search_mcp_tools": {"query": "recruiting sites of a study", "max_results": 3},
    "get_tool_details": {"tool_id": "trials/get_trial_locations"},
    "list_tool_categories": {},
    "search_tools_by_capability": {
        "capability_description": "drug safety",
        "required_parameters": ["drug_name"],
    },
}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path.cwd())}


async def test_official_sdk_client_lists_and_calls_all_four_tools() -> None:
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        assert {t.name for t in listed.tools} == set(CALLS)
        for name, args in CALLS.items():
            result = await session.call_tool(name, args)
            assert not result.is_error, result.content
            assert result.structured_content
        top = (
            await session.call_tool("search_mcp_tools", CALLS["search_mcp_tools"])
        ).structured_content
        assert top is not None and top["results"][0]["tool_id"] == "trials/get_trial_locations"


@pytest.mark.slow
@pytest.mark.timeout(900)  # five Inspector runs, each starting the server (model load) anew
def test_inspector_cli_lists_and_calls_all_four_tools(tmp_path: Path) -> None:
    base = [*_inspector(), "--cli", "--connect-timeout", "120000", *SERVE]
    env = {**_env(), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")}

    def run(*args: str) -> dict[str, Any]:
        proc = subprocess.run([*base, *args], capture_output=True, text=True, timeout=180, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    listed = run("--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == set(CALLS)
    for name, args in CALLS.items():
        flags = [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in args.items()]
        result = run(
            "--method",
            "tools/call",
            "--tool-name",
            name,
            *(["--tool-arg", *flags] if flags else []),
        )
        assert not result.get("isError"), result
