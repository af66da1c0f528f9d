"""The JSON-RPC messages the timed MCP clients (ocm_common.mcp_http, mcp_http_async and the
locust user) send over streamable HTTP: the request and notification bodies, their typed shapes,
and the request headers.

The protocol version offered in `initialize` is the MCP SDK's newest revision that still has
the `initialize` handshake and plain JSON-RPC requests (`LATEST_HANDSHAKE_VERSION`): the newer
revisions carry a `_meta` envelope on every request, which these clients do not write, while
fastmcp's `Client` does. Afterwards the `MCP-Protocol-Version` header carries the version the
server answered with.
"""

from __future__ import annotations

import itertools
from typing import Literal, TypedDict

from mcp_types.version import LATEST_HANDSHAKE_VERSION

from ocm_common.json_types import Arguments

PROTOCOL_VERSION: str = LATEST_HANDSHAKE_VERSION


class ClientInfo(TypedDict):
    name: str
    version: str


CLIENT_INFO: ClientInfo = {"name": "ocm-bench-client", "version": "1"}
_ids = itertools.count(1)


class ClientCapabilities(TypedDict):
    """None declared: these clients list no roots and take no sampling requests."""


class InitializeParams(TypedDict):
    protocolVersion: str
    capabilities: ClientCapabilities
    clientInfo: ClientInfo


class CallParams(TypedDict):
    name: str
    # the tool's arguments, as the server's inputSchema (not this code) defines them
    arguments: Arguments


class NoParams(TypedDict):
    """`tools/list` without a cursor: the first (with the reference server, only) page."""


RpcParams = InitializeParams | CallParams | NoParams


class RpcRequest(TypedDict):
    """A JSON-RPC request these clients send (its reply is matched by `id`)."""

    jsonrpc: Literal["2.0"]
    id: int
    method: str
    params: RpcParams


class RpcNotification(TypedDict):
    """A JSON-RPC notification (no `id`, no reply)."""

    jsonrpc: Literal["2.0"]
    method: str


def rpc(method: str, params: RpcParams | None = None) -> RpcRequest:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}


def initialize_body() -> RpcRequest:
    return rpc(
        "initialize",
        {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    )


def initialized_notification() -> RpcNotification:
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call_body(tool: str, arguments: Arguments) -> RpcRequest:
    return rpc("tools/call", {"name": tool, "arguments": arguments})


def request_headers(
    session_id: str | None = None,
    token: str | None = None,
    protocol_version: str = PROTOCOL_VERSION,
) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": protocol_version,
    }
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers
