"""The one implementation of the target contract: a ``fastmcp.Client`` session over the
transport a target kind makes (the in-process server, a stdio process, streamable HTTP), its
tool listing as :class:`ToolInfo` and each call as a :class:`CallOutcome`; a launch that fails
is explained, and a reply that could not be read ends its call with :class:`UnreadableReply`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from evals.run.outcome import BackendIdentity, CallOutcome, ToolInfo
from evals.run.schema_reading import schema_of
from evals.run.target_contract import HARNESS_MARK, Target, TargetError, UnreadableReply
from ocm_common.client_session import record_results_as_they_come
from ocm_common.json_types import Arguments, JsonObject

INIT_TIMEOUT_S = 60.0  # a server that has not answered initialize by then did not start


class McpTarget:
    """A :class:`Target` over ``fastmcp.Client``.

    The MCP SDK re-validates ``structuredContent`` against the outputSchema on the client and
    raises on a mismatch; the harness switches that off per session so a schema-invalid
    response is recorded as it came and judged by the ``schema_valid`` check (a scenario
    failure the gate reports), rather than surfacing as a transport exception.
    """

    def __init__(
        self,
        spec: str,
        make_transport: Callable[..., Any],
        *,
        with_mode: Callable[[str], Target] | None = None,
        timeout_s: float = 30.0,
        identity: Callable[[], BackendIdentity] | None = None,
    ) -> None:
        self.spec = spec
        self._make_transport = make_transport
        self._with_mode = with_mode
        self._timeout_s = timeout_s
        self._identity = identity
        self._client: Any = None
        self._live: Any = None  # the transport of the open session
        self.protocol_version = ""  # negotiated at initialize

    @property
    def kind(self) -> str:
        """``inprocess``, ``stdio``, ``http``, ``https`` or another spec's prefix (``memory``)."""
        return self.spec.split(":", 1)[0]

    def transport(self, *, extra_env: dict[str, str] | None = None, log_file: Any = None) -> Any:
        """A new fastmcp transport (or, in process, the server) for a client of this target's
        own: a stdio server gets ``extra_env`` added to its environment (a canary) and its
        stderr in ``log_file``; other kinds ignore both."""
        if extra_env is None and log_file is None:
            return self._make_transport()
        return self._make_transport(extra_env=extra_env or {}, log_file=log_file)

    def identity(self) -> BackendIdentity:
        """The backend's embedding model and index fingerprint where the harness can know them
        (the in-process reference server); empty for other targets."""
        return self._identity() if self._identity else {}

    @property
    def process(self) -> Any:
        """The stdio server process of the open (or last) session: a
        :class:`~evals.run.stdio_process.StdioProcess` (pid, exit status, stderr tail,
        unreadable lines); None for other kinds."""
        from evals.run.stdio_process import StdioProcess

        return self._live if isinstance(self._live, StdioProcess) else None

    async def __aenter__(self) -> McpTarget:
        from fastmcp import Client

        try:
            self._live = self.transport()
            # a server that never answers initialize is a launch failure too, in bounded time
            client = Client(self._live, timeout=self._timeout_s, init_timeout=INIT_TIMEOUT_S)
            await client.__aenter__()
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"cannot connect to target {self.spec!r}: {_launch(exc)}") from exc
        record_results_as_they_come(client)
        self._client = client
        init = getattr(client, "initialize_result", None)
        self.protocol_version = str(getattr(init, "protocolVersion", "") or "")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.__aexit__(exc_type, exc, tb)

    def _connected(self) -> Any:
        if self._client is None:
            raise TargetError(f"target {self.spec!r} used outside 'async with'")
        return self._client

    async def list_tools(self) -> list[ToolInfo]:
        try:
            tools = await self._connected().list_tools()
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"tools/list failed on {self.spec!r}: {exc}") from exc
        return [
            ToolInfo(
                name=tool.name,
                input_schema=schema_of(tool.input_schema),
                output_schema=schema_of(tool.output_schema) if tool.output_schema else None,
                description=tool.description,
                annotations=_wire(getattr(tool, "annotations", None)),
                execution=_wire(getattr(tool, "execution", None)),
            )
            for tool in tools
        ]

    async def list_tools_wire(self) -> list[JsonObject]:
        """The ``tools/list`` entries as the server sent them (JSON names, every member kept:
        what a contract diff compares)."""
        try:
            tools = await self._connected().list_tools()
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"tools/list failed on {self.spec!r}: {exc}") from exc
        return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]

    async def call_tool(
        self, name: str, args: Arguments, *, timeout_s: float | None = None
    ) -> CallOutcome:
        limit = timeout_s or self._timeout_s
        client = self._connected()
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(
                client.call_tool_mcp(name, dict(args), timeout=limit), timeout=limit + 5.0
            )
        except TimeoutError as exc:
            self._unreadable(name, started, exc)
            raise TargetError(f"tools/call {name} timed out after {limit:.1f}s") from exc
        except Exception as exc:
            self._unreadable(name, started, exc)
            raise TargetError(f"tools/call {name} failed: {exc}{self._ended()}") from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
        structured = result.structured_content
        return CallOutcome(
            structured=structured if isinstance(structured, dict) else None,
            is_error=bool(result.is_error),
            text="\n".join(texts),
            meta=dict(result.meta or {}),
            latency_ms=latency_ms,
        )

    def _unreadable(self, name: str, started: float, exc: BaseException) -> None:
        """Raise :class:`UnreadableReply` when the call ended on a reply the harness could not
        read (its error, made by the stdio transport), or got none after an unreadable line."""
        data = getattr(getattr(exc, "error", None), "data", None)
        if isinstance(data, dict) and data.get("harness") == HARNESS_MARK:
            raise UnreadableReply(f"tools/call {name}: {exc}") from exc
        process = self.process
        seen = process.unreadable_since(started) if process is not None else []
        if seen and not isinstance(exc, UnreadableReply):
            raise UnreadableReply(
                f"tools/call {name} got no readable reply ({exc or type(exc).__name__}); the "
                f"server wrote a line that is not valid UTF-8 JSON-RPC: {seen[-1].reason}, "
                f"{seen[-1].excerpt}"
            ) from exc

    def _ended(self) -> str:
        """'' while the server runs; else how its process ended and its last stderr line."""
        process = self.process
        if process is None or not process.exited:
            return ""
        tail = process.stderr_tail(1)
        last = f"; last stderr line: {tail[-1][:200]!r}" if tail else ""
        return f" (the server process {process.ended_text()}{last})"

    def for_mode(self, mode: str) -> Target | None:
        return self._with_mode(mode) if self._with_mode else None


def _launch(exc: BaseException) -> str:
    """A connect failure's text: the stdio transport's explanation (command, exit status,
    stderr) when the exception carries one, else the exception's own text."""
    from evals.run.stdio_process import LaunchFailed

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, LaunchFailed):
            return str(seen)
        for inner in getattr(seen, "exceptions", ()):
            if isinstance(inner, LaunchFailed):
                return str(inner)
        seen = seen.__cause__ or seen.__context__
    return str(exc) or type(exc).__name__


def _wire(model: Any) -> JsonObject:
    """A protocol object as its JSON (camelCase keys), or {} when absent."""
    if model is None:
        return {}
    if isinstance(model, dict):
        return dict(model)
    dumped = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped if isinstance(dumped, dict) else {}
