"""A small synchronous MCP client over streamable HTTP, for checks and warm-up (not load)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from load.mcp_http import (
    McpCallError,
    OutputSchemas,
    call_body,
    check_tool_result,
    initialize_body,
    initialized_notification,
    parse_reply,
    request_headers,
    rpc,
)
from load.safety import require_loopback
from load.taskmix import TaskMix


@dataclass
class Reply:
    tool: str
    latency_ms: float
    structured: dict[str, Any] | None
    meta: dict[str, Any]
    error: str | None = None


class McpClient:
    """A small synchronous MCP client over streamable HTTP (one per thread)."""

    def __init__(self, url: str, token: str | None = None):
        self.url = require_loopback(url)
        self.token = token
        self.http = httpx.Client(timeout=30.0)
        self.session_id: str | None = None
        body = initialize_body()
        response = self._post(body)
        parse_reply(
            response.status_code,
            response.headers.get("content-type", ""),
            response.text,
            body["id"],
        )
        self.session_id = response.headers.get("mcp-session-id")
        self._post(initialized_notification())

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        return self.http.post(
            self.url, content=json.dumps(body), headers=request_headers(self.session_id, self.token)
        )

    def schemas(self) -> OutputSchemas:
        body = rpc("tools/list")
        response = self._post(body)
        return OutputSchemas.from_tools_list(
            parse_reply(
                response.status_code,
                response.headers.get("content-type", ""),
                response.text,
                body["id"],
            )
        )

    def call(
        self, tool: str, arguments: dict[str, Any], schemas: OutputSchemas | None = None
    ) -> Reply:
        """One timed call (the reply is judged after the clock stops, against `schemas`'
        published outputSchema when given)."""
        body = call_body(tool, arguments)
        start = time.perf_counter()
        response = self._post(body)
        latency = (time.perf_counter() - start) * 1000
        try:
            result = parse_reply(
                response.status_code,
                response.headers.get("content-type", ""),
                response.text,
                body["id"],
            )
            structured = check_tool_result(tool, result, schemas)
            return Reply(tool, latency, structured, result.get("_meta") or {})
        except McpCallError as exc:
            return Reply(tool, latency, None, {}, str(exc))

    def close(self) -> None:
        self.http.close()


def warm_up(url: str, rounds: int = 4) -> None:
    """Every tool's golden calls a few times, so first-call costs in each server process
    (lazy caches, first query plans) are not measured as load."""
    mix = TaskMix.from_golden(seed=0)
    client = McpClient(url)
    try:
        for _ in range(rounds):
            for tool in mix.tools:
                client.call(tool, mix.pick(tool, vary=False).arguments)
    finally:
        client.close()
