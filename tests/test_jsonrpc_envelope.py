"""Malformed JSON-RPC envelopes are answered as the specification names them (-32600 invalid
request, -32700 parse error); well-formed messages reach the transport untouched."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from reference_server.jsonrpc_envelope import JsonRpcEnvelope, envelope_problem

REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ([REQUEST], -32600),
        ({**REQUEST, "jsonrpc": "1.0"}, -32600),
        ({k: v for k, v in REQUEST.items() if k != "jsonrpc"}, -32600),  # the member missing
        ({**REQUEST, "id": None}, -32600),
        ({**REQUEST, "id": 1.5}, -32600),
        ({**REQUEST, "method": ["tools/list"]}, -32600),
        ("tools/list", -32600),
    ],
)
def test_malformed_envelopes(message: Any, code: int) -> None:
    problem = envelope_problem(json.dumps(message).encode())
    assert problem is not None and problem[0] == code


@pytest.mark.parametrize(
    "message",
    [
        REQUEST,
        {**REQUEST, "id": "abc"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
    ],
)
def test_well_formed_messages_pass(message: dict[str, Any]) -> None:
    assert envelope_problem(json.dumps(message).encode()) is None


def test_bad_json_is_a_parse_error() -> None:
    assert envelope_problem(b"{nope") == (-32700, "Parse error: the body is not valid JSON")


async def _echo(scope: Scope, receive: Receive, send: Send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def _post(body: bytes) -> httpx.Response:
    app = JsonRpcEnvelope(_echo, "/mcp")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        return await client.post("/mcp", content=body, headers={"Content-Type": "application/json"})


async def test_a_malformed_envelope_never_reaches_the_transport() -> None:
    response = await _post(b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]')
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: batches are not supported; send one message per POST",
        },
    }


async def test_a_well_formed_body_reaches_the_transport_byte_for_byte() -> None:
    body = json.dumps(REQUEST).encode()
    response = await _post(body)
    assert response.status_code == 200 and response.content == body
