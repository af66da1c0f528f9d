"""MCP over streamable HTTP for the clients that time the wire: load, scale and the launcher.

The harness and the tests talk MCP through fastmcp's `Client` (in memory, stdio or HTTP); the
load and scale runs post JSON-RPC themselves, because locust must own the HTTP connection to
count each call, and a timed call should not include client-side validation. Everything such a
client needs is here once: the session (`McpSession`; the request bodies, headers and the
protocol version offered are in `ocm_common.mcp_messages`), reading a JSON or event-stream
reply, the per-call failure rules, and the synchronous client over httpx (`McpClient`); its
asyncio twin (`AsyncMcpClient`) is in `ocm_common.mcp_http_async`.

A call fails on an HTTP error, a JSON-RPC error, `isError`, a missing `structuredContent`, or
`structuredContent` that does not validate against the tool's published `outputSchema`.

Every request has a wall-clock deadline (`CALL_DEADLINE_S` unless the client is given
another): a reply not complete by then is a failed call. httpx's own timeouts cannot give one,
because its read timeout restarts with every chunk received, and an event-stream reply carries
keep-alive comments (sse-starlette sends `: ping` every 15 s), so a call to a tool that never
returns would never time out. The synchronous client shuts the connection's socket down at the
deadline; the asyncio client cancels the request.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field

import httpx
from jsonschema import Draft202012Validator

from ocm_common.json_types import Arguments, JsonObject, JsonValue
from ocm_common.mcp_messages import (
    PROTOCOL_VERSION,
    RpcNotification,
    RpcRequest,
    call_body,
    initialize_body,
    initialized_notification,
    request_headers,
    rpc,
)

CALL_DEADLINE_S = 30.0


class McpCallError(Exception):
    """A call that did not give a usable tool result; the message says which rule it broke."""


class CallDeadlineError(httpx.TimeoutException):
    """No complete reply within the call's wall-clock deadline."""

    def __init__(self, deadline_s: float) -> None:
        super().__init__(f"no complete reply within the {deadline_s:g} s deadline")


def event_data(text: str) -> list[str]:
    """The data of each server-sent event: an event's `data:` lines joined by newlines (a
    server may split one JSON message over several), events separated by a blank line."""
    events: list[str] = []
    lines: list[str] = []
    # SSE lines end at CR, LF or CRLF only (not at the other breaks str.splitlines knows,
    # which JSON leaves unescaped inside strings: U+2028, U+0085, ...)
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:
        if not line:
            if lines:
                events.append("\n".join(lines))
            lines = []
        elif line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    return [e for e in events if e.strip()]


def parse_reply(status: int, content_type: str, text: str, request_id: int) -> JsonObject:
    """The JSON-RPC result for `request_id`, from a JSON or an event-stream reply."""
    if status >= 400:
        raise McpCallError(f"HTTP {status}: {text[:200]}")
    messages: list[JsonValue]
    try:
        if content_type.startswith("text/event-stream"):
            messages = [json.loads(data) for data in event_data(text)]
        else:
            payload = json.loads(text)
            messages = payload if isinstance(payload, list) else [payload]
    except json.JSONDecodeError as exc:
        raise McpCallError(f"reply is not JSON ({content_type or 'no content type'})") from exc
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id:
            if "error" in message:
                error = message["error"] or {}
                if not isinstance(error, dict):  # not an error object: nothing to name
                    error = {}
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
    def from_tools_list(cls, result: JsonObject) -> OutputSchemas:
        """`result`: a `tools/list` result; a tool is called by a string name, so an entry
        whose name is not one is never looked up."""
        tools = result.get("tools", [])
        validators: dict[str, Draft202012Validator] = {}
        for t in tools if isinstance(tools, list) else []:
            if isinstance(t, dict) and t.get("outputSchema"):
                name = t["name"]
                if isinstance(name, str):
                    validators[name] = Draft202012Validator(t["outputSchema"])
        return cls(validators)

    def problems(self, tool: str, structured: JsonObject) -> str | None:
        validator = self.validators.get(tool)
        if validator is None:
            return f"{tool} publishes no outputSchema"
        error = next(iter(validator.iter_errors(structured)), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"structuredContent does not match outputSchema at {where}: {error.message[:160]}"


def _text(block: JsonValue) -> str:
    """A content block's text ("" for a block without one)."""
    text = block.get("text", "") if isinstance(block, dict) else ""
    return text if isinstance(text, str) else ""


def check_tool_result(
    tool: str,
    result: JsonObject,
    schemas: OutputSchemas | None = None,
    *,
    validate: bool = True,
    tool_errors_ok: bool = False,
) -> JsonObject | None:
    """The `structuredContent` of a successful call (None when the tool publishes no
    outputSchema and sends none, which the protocol allows); raises McpCallError naming the
    broken rule. With `schemas` (the server's tools/list), a tool that publishes an
    outputSchema must send conforming structuredContent (checked when `validate`: the sampled
    share of calls); without them every call must carry structuredContent. A tool error
    (`isError`) fails the call unless `tool_errors_ok` (generated arguments)."""
    if result.get("isError"):
        if tool_errors_ok:
            return None
        content = result.get("content") or []
        text = " ".join(_text(c) for c in (content if isinstance(content, list) else []))
        raise McpCallError(f"isError: {text[:200]}")
    structured = result.get("structuredContent")
    declares = schemas is None or tool in schemas.validators
    if not isinstance(structured, dict):
        if declares:
            raise McpCallError("missing structuredContent")
        return None
    if schemas is not None and validate and declares:
        problem = schemas.problems(tool, structured)
        if problem:
            raise McpCallError(problem)
    return structured


@dataclass
class McpSession:
    """One client's MCP state over any HTTP transport: the session id the server issued (if
    any), the negotiated protocol version and the bearer token; builds requests, reads replies.
    """

    token: str | None = None
    session_id: str | None = None
    protocol_version: str = PROTOCOL_VERSION

    def headers(self) -> dict[str, str]:
        return request_headers(self.session_id, self.token, self.protocol_version)

    def read(
        self,
        body: RpcRequest,
        status: int,
        content_type: str,
        text: str,
        session_header: str | None = None,
    ) -> JsonObject:
        """The result for `body`; after `initialize`, keeps the session id and the version."""
        result = parse_reply(status, content_type, text, body["id"])
        if body.get("method") == "initialize":
            self.session_id = session_header or None
            self.protocol_version = str(result.get("protocolVersion") or PROTOCOL_VERSION)
        return result


@dataclass
class Reply:
    """One timed tool call: its structured result, or what went wrong, and the reply's size."""

    tool: str
    latency_ms: float
    structured: JsonObject | None
    meta: JsonObject
    error: str | None = None
    size: int = 0
    timed_out: bool = False  # no complete reply within the call's deadline


def failed_reply(tool: str, latency_ms: float, exc: httpx.HTTPError) -> Reply:
    timed_out = isinstance(exc, CallDeadlineError)
    return Reply(tool, latency_ms, None, {}, f"{type(exc).__name__}: {exc}", timed_out=timed_out)


def judged_reply(
    session: McpSession,
    tool: str,
    body: RpcRequest,
    response: httpx.Response,
    latency_ms: float,
    schemas: OutputSchemas | None,
) -> Reply:
    """The call judged after the clock stopped (against `schemas` when given)."""
    try:
        result = session.read(
            body, response.status_code, response.headers.get("content-type", ""), response.text
        )
        structured = check_tool_result(tool, result, schemas)
        meta = result.get("_meta") or {}
        return Reply(
            tool,
            latency_ms,
            structured,
            meta if isinstance(meta, dict) else {},
            size=len(response.content),
        )
    except McpCallError as exc:
        return Reply(tool, latency_ms, None, {}, str(exc), size=len(response.content))


def _shut_down(response: httpx.Response) -> None:
    """End a reply being read in another thread: its blocked read returns at once."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def post_within(
    http: httpx.Client, url: str, content: str, headers: dict[str, str], deadline_s: float
) -> httpx.Response:
    """POST and read the whole reply within `deadline_s` of wall-clock time, or raise
    CallDeadlineError. Until the headers arrive httpx's timeouts bound each step by the
    deadline; from then on a timer shuts the socket down when the deadline passes, however
    often the server sends a keep-alive chunk."""
    started = time.monotonic()
    request = http.build_request(
        "POST", url, content=content, headers=headers, timeout=httpx.Timeout(deadline_s)
    )
    try:
        response = http.send(request, stream=True)
    except httpx.TimeoutException as exc:
        raise CallDeadlineError(deadline_s) from exc
    fired = threading.Event()

    def cut() -> None:
        fired.set()
        _shut_down(response)

    timer = threading.Timer(max(0.0, deadline_s - (time.monotonic() - started)), cut)
    timer.daemon = True
    timer.start()
    try:
        response.read()
    except httpx.HTTPError as exc:
        if fired.is_set():
            raise CallDeadlineError(deadline_s) from exc
        raise
    finally:
        timer.cancel()
        response.close()
    if fired.is_set():  # read completed as the deadline passed: the socket is gone anyway
        raise CallDeadlineError(deadline_s)
    return response


class McpClient:
    """A synchronous MCP client over streamable HTTP (one per thread); every request ends
    within `timeout_s` of wall-clock time."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = CALL_DEADLINE_S):
        self.url = url
        self.session = McpSession(token)
        self.timeout_s = timeout_s
        self.http = httpx.Client(timeout=timeout_s)
        try:
            self._request(initialize_body())
            self._post(initialized_notification())
        except BaseException:
            self.http.close()
            raise

    def _post(
        self, body: RpcRequest | RpcNotification, deadline_s: float | None = None
    ) -> httpx.Response:
        return post_within(
            self.http,
            self.url,
            json.dumps(body),
            self.session.headers(),
            deadline_s if deadline_s is not None else self.timeout_s,
        )

    def _request(self, body: RpcRequest) -> JsonObject:
        response = self._post(body)
        return self.session.read(
            body,
            response.status_code,
            response.headers.get("content-type", ""),
            response.text,
            response.headers.get("mcp-session-id"),
        )

    def tools_list(self) -> JsonObject:
        return self._request(rpc("tools/list"))

    def schemas(self) -> OutputSchemas:
        return OutputSchemas.from_tools_list(self.tools_list())

    def call(
        self,
        tool: str,
        arguments: Arguments,
        schemas: OutputSchemas | None = None,
        *,
        deadline_s: float | None = None,
    ) -> Reply:
        """One tools/call, ended at `deadline_s` (default: the client's `timeout_s`)."""
        body = call_body(tool, arguments)
        started = time.perf_counter()
        try:
            response = self._post(body, deadline_s)
        except httpx.HTTPError as exc:
            latency = (time.perf_counter() - started) * 1000
            return failed_reply(tool, latency, exc)
        latency = (time.perf_counter() - started) * 1000
        return judged_reply(self.session, tool, body, response, latency, schemas)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> McpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
