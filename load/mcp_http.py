"""MCP over streamable HTTP, as a load client needs it: bodies, headers, replies, verdicts.

Transport-free on purpose: the locust user posts with locust's fast HTTP client and the
`parallel` checks post with httpx, and both read replies and judge tool results here.
A reply may be JSON (`application/json`) or an event stream (`text/event-stream`); a call
fails on an HTTP error, a JSON-RPC error, `isError`, a missing `structuredContent`, or
`structuredContent` that does not validate against the tool's published `outputSchema`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "ocm-load", "version": "1"}
_ids = itertools.count(1)


class McpCallError(Exception):
    """A call that did not give a usable tool result; the message says which rule it broke."""


def request_headers(session_id: str | None = None, token: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}


def initialize_body() -> dict[str, Any]:
    return rpc(
        "initialize",
        {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
    )


def initialized_notification() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call_body(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return rpc("tools/call", {"name": tool, "arguments": arguments})


def parse_reply(status: int, content_type: str, text: str, request_id: Any) -> dict[str, Any]:
    """The JSON-RPC result for `request_id`, from a JSON or an event-stream reply."""
    if status >= 400:
        raise McpCallError(f"HTTP {status}: {text[:200]}")
    if content_type.startswith("text/event-stream"):
        messages = [
            json.loads(line[5:].strip())
            for line in text.splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
    else:
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise McpCallError(f"reply is not JSON ({content_type or 'no content type'})") from exc
        messages = payload if isinstance(payload, list) else [payload]
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id:
            if "error" in message:
                error = message["error"] or {}
                raise McpCallError(f"JSON-RPC error {error.get('code')}: {error.get('message')}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise McpCallError("JSON-RPC reply without a result object")
            return result
    raise McpCallError(f"no JSON-RPC reply with id {request_id}")


@dataclass
class OutputSchemas:
    """Compiled validators for every tool's published `outputSchema` (from `tools/list`)."""

    validators: dict[str, Draft202012Validator] = field(default_factory=dict)

    @classmethod
    def from_tools_list(cls, result: dict[str, Any]) -> OutputSchemas:
        return cls(
            {
                t["name"]: Draft202012Validator(t["outputSchema"])
                for t in result.get("tools", [])
                if t.get("outputSchema")
            }
        )

    def problems(self, tool: str, structured: dict[str, Any]) -> str | None:
        validator = self.validators.get(tool)
        if validator is None:
            return f"{tool} publishes no outputSchema"
        error = next(iter(validator.iter_errors(structured)), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"structuredContent does not match outputSchema at {where}: {error.message[:160]}"


def check_tool_result(
    tool: str, result: dict[str, Any], schemas: OutputSchemas | None = None
) -> dict[str, Any]:
    """The `structuredContent` of a successful call; raises McpCallError naming the broken rule.

    `schemas` is given for the sampled share of calls whose output is validated.
    """
    if result.get("isError"):
        text = " ".join(c.get("text", "") for c in result.get("content") or [])
        raise McpCallError(f"isError: {text[:200]}")
    structured = result.get("structuredContent")
    if not isinstance(structured, dict):
        raise McpCallError("missing structuredContent")
    if schemas is not None:
        problem = schemas.problems(tool, structured)
        if problem:
            raise McpCallError(problem)
    return structured
