"""The asyncio MCP client over streamable HTTP, for runs that time many calls concurrently.

It shares everything but the event loop with the synchronous client in `ocm_common.mcp_http`:
the request bodies and headers, the session, the per-call failure rules and the `Reply`. Its
wall-clock deadline is `asyncio.timeout`: a request not answered in time is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from ocm_common.json_types import Arguments
from ocm_common.mcp_http import (
    CALL_DEADLINE_S,
    CallDeadlineError,
    McpSession,
    OutputSchemas,
    Reply,
    failed_reply,
    judged_reply,
)
from ocm_common.mcp_messages import (
    RpcNotification,
    RpcRequest,
    call_body,
    initialize_body,
    initialized_notification,
)


class AsyncMcpClient:
    """The same client for asyncio, over a shared `httpx.AsyncClient` (its connection pool);
    a request not answered within `timeout_s` is cancelled."""

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        token: str | None = None,
        timeout_s: float = CALL_DEADLINE_S,
    ):
        self.url, self.http = url, http
        self.session = McpSession(token)
        self.timeout_s = timeout_s

    async def _post(self, body: RpcRequest | RpcNotification) -> httpx.Response:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self.http.post(
                    self.url, content=json.dumps(body), headers=self.session.headers()
                )
        except TimeoutError as exc:
            raise CallDeadlineError(self.timeout_s) from exc

    async def initialize(self) -> AsyncMcpClient:
        body = initialize_body()
        response = await self._post(body)
        self.session.read(
            body,
            response.status_code,
            response.headers.get("content-type", ""),
            response.text,
            response.headers.get("mcp-session-id"),
        )
        await self._post(initialized_notification())
        return self

    async def call(
        self, tool: str, arguments: Arguments, schemas: OutputSchemas | None = None
    ) -> Reply:
        body = call_body(tool, arguments)
        started = time.perf_counter()
        try:
            response = await self._post(body)
        except httpx.HTTPError as exc:
            latency = (time.perf_counter() - started) * 1000
            return failed_reply(tool, latency, exc)
        latency = (time.perf_counter() - started) * 1000
        return judged_reply(self.session, tool, body, response, latency, schemas)
