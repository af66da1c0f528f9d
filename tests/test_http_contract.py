"""The HTTP server as clients meet it: Origin/Host validation, bearer token, body size limit,
and three independent clients filling array parameters (a plain JSON-RPC client, the official
MCP Python SDK client, and the MCP Inspector CLI, which needs Node >= 22 from npm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from ocm_common.mcp_messages import PROTOCOL_VERSION
from reference_server.server import INVALID_PARAMS, project_version
from tests.conftest import HTTP_ALLOWED_ORIGIN as ALLOWED_ORIGIN
from tests.conftest import HTTP_TOKEN as TOKEN
from tests.served_tools import SERVED

pytestmark = pytest.mark.slow
C124_FEE = 61.15  # OHIP Schedule of Benefits, C124 (corpus/off/ohip_fee_schedule.csv)
SCHEDULE_ARGS = {"q": "discharge day MRP", "codes": ["C124"]}
NODE_CACHE = Path(os.environ.get("OCM_NODE_CACHE", Path.home() / ".cache" / "ocm-node"))
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
NPM_INSTALL = ["npm", "install", "--no-audit", "--no-fund"]


def _headers(**extra: str) -> dict[str, str]:
    return {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
        **extra,
    }


def _rpc(method: str, params: dict[str, Any], id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


INIT = _rpc(
    "initialize",
    {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "plain-json-rpc", "version": "0"},
    },
)


def _fee(structured: dict[str, Any], code: str) -> float:
    items = [i for i in structured["items"] if i["code"] == code]
    assert items, structured["items"]
    return float(items[0]["fee"])


# ----------------------------------------------------------------------------- security


def test_foreign_origin_is_refused_with_403(http_server: str) -> None:
    response = httpx.post(http_server, json=INIT, headers=_headers(Origin="http://evil.example"))
    assert response.status_code == 403


def test_loopback_and_configured_origins_are_accepted(http_server: str) -> None:
    for origin in ["http://localhost:6274", "http://127.0.0.1:3000", ALLOWED_ORIGIN]:
        response = httpx.post(http_server, json=INIT, headers=_headers(Origin=origin))
        assert response.status_code == 200, (origin, response.status_code)


def test_foreign_host_header_is_refused(http_server: str) -> None:
    response = httpx.post(http_server, json=INIT, headers=_headers(Host="evil.example"))
    assert response.status_code == 421
    port = http_server.split(":")[2].split("/")[0]
    ok = httpx.post(http_server, json=INIT, headers=_headers(Host=f"localhost:{port}"))
    assert ok.status_code == 200


def test_missing_or_wrong_token_is_401_with_www_authenticate(http_server: str) -> None:
    headers = _headers()
    del headers["Authorization"]
    for auth in [None, "Bearer wrong", f"Bearer {TOKEN}x", "Basic abc"]:
        response = httpx.post(
            http_server, json=INIT, headers={**headers, **({"Authorization": auth} if auth else {})}
        )
        assert response.status_code == 401, auth
        assert response.headers.get("www-authenticate", "").lower().startswith("bearer"), auth


def test_oversized_body_is_413(http_server: str) -> None:
    body = json.dumps(
        _rpc("tools/call", {"name": "schedule.get", "arguments": {"q": "x" * 5_000_000}})
    )
    response = httpx.post(http_server, content=body, headers=_headers())
    assert response.status_code == 413
    assert "too large" in response.text.lower()


# ----------------------------------------------------------------------------- three clients


def test_plain_json_rpc_client(http_server: str) -> None:
    with httpx.Client(headers=_headers(), timeout=60) as http:
        init = http.post(http_server, json=INIT).json()
        assert init["result"]["serverInfo"]["version"] == project_version()
        headers = {"MCP-Protocol-Version": init["result"]["protocolVersion"]}
        session = http.post(http_server, json=INIT).headers.get("mcp-session-id")
        if session:
            headers["Mcp-Session-Id"] = session
        call = http.post(
            http_server,
            json=_rpc("tools/call", {"name": "schedule.get", "arguments": SCHEDULE_ARGS}, 2),
            headers=headers,
        ).json()
        assert not call["result"].get("isError"), call
        assert _fee(call["result"]["structuredContent"], "C124") == C124_FEE
        unknown = http.post(
            http_server,
            json=_rpc("tools/call", {"name": "no.such_tool", "arguments": {}}, 3),
            headers=headers,
        ).json()
        assert unknown["error"]["code"] == INVALID_PARAMS and "result" not in unknown


async def test_official_mcp_sdk_client(http_server: str) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(http_server, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.server_info.version == project_version()
        result = await session.call_tool("schedule.get", SCHEDULE_ARGS)
        assert not result.is_error, result.content
        assert _fee(result.structured_content or {}, "C124") == C124_FEE


# ----------------------------------------------------------------------------- Inspector CLI


def _inspector() -> list[str]:
    """node 22 + the Inspector CLI from npm, installed once into a cache folder."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the MCP Inspector CLI needs Node >= 22 from npm")
    node = NODE_CACHE / "node_modules" / ".bin" / "node"
    launcher = (
        NODE_CACHE / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    )
    if not (node.exists() and launcher.exists()):
        NODE_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [*NPM_INSTALL, "--prefix", str(NODE_CACHE), "node@22", INSPECTOR],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return [str(node), str(launcher)]


def _inspector_call(url: str, tmp_path: Path, tool: str, *args: str) -> dict[str, Any]:
    command = [
        *_inspector(),
        "--cli",
        url,
        "--transport",
        "http",
        "--header",
        f"Authorization: Bearer {TOKEN}",
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-arg",
        *args,
    ]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    assert not result.get("isError"), result
    return result


def test_inspector_strict_finds_no_schema_portability_problem(
    http_server: str, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            *_inspector(),
            "--cli",
            http_server,
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--method",
            "tools/list",
            "--strict",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Warning" not in proc.stderr and "Error" not in proc.stderr, proc.stderr[-2000:]
    assert len(json.loads(proc.stdout)["tools"]) == len(SERVED)


def test_inspector_cli_fills_array_parameters(http_server: str, tmp_path: Path) -> None:
    result = _inspector_call(
        http_server, tmp_path, "schedule.get", f"q={SCHEDULE_ARGS['q']}", 'codes=["C124"]'
    )
    assert _fee(result["structuredContent"], "C124") == C124_FEE


def test_inspector_cli_fills_object_parameters(http_server: str, tmp_path: Path) -> None:
    result = _inspector_call(http_server, tmp_path, "adp.get", 'device={"type": "walker"}')
    assert "walker" in json.dumps(result["structuredContent"]).lower(), result["structuredContent"]


def test_fuzz_runs_against_the_http_target(
    http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evals.run.fuzz import FuzzConfig, run_fuzz
    from evals.run.targets import BEARER_ENV, make_target

    monkeypatch.setenv(BEARER_ENV, TOKEN)
    report = run_fuzz(
        make_target(http_server), FuzzConfig(valid=3, invalid=15, tools=["opa.get_section"])
    )
    assert report.tools and report.tools[0].invalid >= 10
    assert not report.failures, [f.describe() for f in report.failures]


# ----------------------------------------------------------------------------- JSON-RPC envelope


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("[" + json.dumps(_rpc("tools/list", {})) + "]", -32600),
        (json.dumps({**_rpc("tools/list", {}), "jsonrpc": "1.0"}), -32600),
        (json.dumps({**_rpc("tools/list", {}), "id": None}), -32600),
        (json.dumps({**_rpc("tools/list", {}), "id": True}), -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": 7}), -32600),
        ("{not json", -32700),
    ],
    ids=["batch", "jsonrpc-1.0", "id-null", "id-bool", "method-number", "not-json"],
)
def test_malformed_envelopes_get_the_codes_json_rpc_names(
    http_server: str, body: str, code: int
) -> None:
    response = httpx.post(http_server, content=body, headers=_headers())
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert "validation error" not in error["message"].lower()


def test_a_well_formed_request_still_passes_the_envelope_check(http_server: str) -> None:
    response = httpx.post(http_server, json=INIT, headers=_headers())
    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"]
