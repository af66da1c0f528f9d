"""Reject malformed JSON-RPC envelopes the way the JSON-RPC 2.0 specification names them.

The transport underneath validates a message against the union of every message type and, on a
mismatch, answers -32602 (invalid params) with a validation dump; and it takes a request whose
``id`` is null for a notification, answering 202 with no reply. For the envelope itself the
specification names -32600 (invalid request): a batch array (MCP carries one message per POST),
``"jsonrpc"`` other than ``"2.0"``, a request whose ``id`` is null or not a string or number, a
``method`` that is not a string. This ASGI layer checks only that envelope, answers those with
-32600 and a plain message, and passes every well-formed message on untouched.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

INVALID_REQUEST = -32600
PARSE_ERROR = -32700
# The transport refuses bodies over 4 MiB (413) before parsing; larger bodies are passed on
# unchecked rather than held in memory here.
MAX_CHECKED_BYTES = 4 * 1024 * 1024


def envelope_problem(body: bytes) -> tuple[int, str] | None:
    """(code, message) when the body is not one well-formed JSON-RPC 2.0 message, else None."""
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return PARSE_ERROR, "Parse error: the body is not valid JSON"
    if isinstance(message, list):
        return (
            INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one message per POST",
        )
    if not isinstance(message, dict):
        return INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be an object"
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return INVALID_REQUEST, 'Invalid Request: "method" must be a string'
        if "id" in message and not _valid_id(message["id"]):
            return (
                INVALID_REQUEST,
                'Invalid Request: "id" must be a string or an integer (a notification has no '
                '"id" member at all)',
            )
    return None


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class JsonRpcEnvelope:
    """ASGI middleware for POSTs to the MCP endpoint: malformed envelopes get -32600 / -32700."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path.rstrip("/") or "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._applies(scope):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, complete = 0, False
        while not complete and size <= MAX_CHECKED_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before sending the body
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            complete = not message.get("more_body", False)
        if complete and size <= MAX_CHECKED_BYTES:
            problem = envelope_problem(b"".join(chunks))
            if problem is not None:
                await _reply_error(send, *problem)
                return
        # Well-formed, or too large to check here (the transport refuses it with 413): replay
        # what was read, then the rest of the stream.
        pending = list(enumerate(chunks))

        async def replay() -> Message:
            if pending:
                index, chunk = pending.pop(0)
                last = complete and index == len(chunks) - 1
                return {"type": "http.request", "body": chunk, "more_body": not last}
            return await receive()

        await self.app(scope, replay, send)

    def _applies(self, scope: Scope) -> bool:
        if scope["type"] != "http" or scope.get("method") != "POST":
            return False
        if (scope.get("path", "").rstrip("/") or "/") != self.path:
            return False
        headers = dict(scope.get("headers") or [])
        return headers.get(b"content-type", b"").split(b";")[0].strip() == b"application/json"


async def _reply_error(send: Send, code: int, text: str) -> None:
    payload = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
