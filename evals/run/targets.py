"""Targets: "a backend" is anything that answers MCP ``tools/list`` and ``tools/call``.

One contract (:class:`Target`), three kinds chosen by a spec string, all driven through
``fastmcp.Client``:

- ``inprocess`` or ``inprocess:[name,]key=value,key=value``: the reference server built in this
  process, from a named configuration (``hybrid``, ``keyword``, ``no-boosts``, ...: see
  ``reference_server/configurations.py``) and ``Settings`` overrides (values parsed as YAML
  scalars: ``mode=keyword``, ``faults.sql_delay_ms=200``);
- ``stdio:<command line>``: a server started as a subprocess speaking MCP over stdio
  (:class:`evals.run.stdio_process.StdioProcess`: a launch that fails is explained with the
  command, its exit status and the last lines of its stderr; a reply that is not UTF-8
  JSON-RPC ends its call with :class:`UnreadableReply` instead of hanging the session);
- ``http(s)://host/.../mcp``: a streamable-HTTP server (bearer token from ``EVALS_BEARER_TOKEN``).

Comparing two backends is then diffing two run logs.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

import yaml

from evals.run.outcome import CallOutcome, ToolInfo
from ocm_common.client_session import record_results_as_they_come

BEARER_ENV = "EVALS_BEARER_TOKEN"
INIT_TIMEOUT_S = 60.0  # a server that has not answered initialize by then did not start
# A JSON-RPC error code of the implementation-defined band the SDK does not use: the stdio
# transport makes it up (HARNESS_MARK in its data) for a request whose reply it could not read.
UNREADABLE_REPLY = -32019
HARNESS_MARK = "ocm-harness:unreadable-reply"


class TargetError(RuntimeError):
    """The backend could not be reached or answered with a protocol error (not a tool error)."""


class UnreadableReply(TargetError):
    """The server's reply to a call was not UTF-8 JSON-RPC (invalid bytes, a lone surrogate,
    not JSON), or it wrote such a line and the call then got no reply in time."""


class Target(Protocol):
    """The one contract every backend answers."""

    spec: str

    async def __aenter__(self) -> Target: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def list_tools(self) -> list[ToolInfo]: ...

    async def call_tool(
        self, name: str, args: dict[str, Any], *, timeout_s: float | None = None
    ) -> CallOutcome: ...

    def for_mode(self, mode: str) -> Target | None:
        """The same backend forced into search ``mode``, or None when it cannot be configured
        (the runner then overrides a ``search_mode`` argument where the tool accepts one)."""
        ...


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
        identity: Callable[[], dict[str, Any]] | None = None,
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

    def identity(self) -> dict[str, Any]:
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
                input_schema=dict(tool.input_schema or {}),
                output_schema=dict(tool.output_schema) if tool.output_schema else None,
                description=tool.description,
                annotations=_wire(getattr(tool, "annotations", None)),
                execution=_wire(getattr(tool, "execution", None)),
            )
            for tool in tools
        ]

    async def list_tools_wire(self) -> list[dict[str, Any]]:
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
        self, name: str, args: dict[str, Any], *, timeout_s: float | None = None
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


# ----------------------------------------------------------------------------- kinds


def _wire(model: Any) -> dict[str, Any]:
    """A protocol object as its JSON (camelCase keys), or {} when absent."""
    if model is None:
        return {}
    if isinstance(model, dict):
        return dict(model)
    dumped = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped if isinstance(dumped, dict) else {}


def parse_overrides(text: str) -> dict[str, Any]:
    """``a=1,b=keyword,faults.sql_fail=true`` -> ``{"a": 1, "b": "keyword", "faults":
    {"sql_fail": True}}`` (values are YAML scalars; dotted keys make nested settings).
    A leading bare word names a configuration: its overrides come first, the rest on top."""
    overrides: dict[str, Any] = {}
    for index, part in enumerate(filter(None, (p.strip() for p in text.split(",")))):
        key, sep, value = part.partition("=")
        if not sep and index == 0:
            overrides = named_configuration(part)
            continue
        if not sep or not key.strip():
            raise TargetError(
                f"bad override {part!r}: expected key=value (or a configuration name first)"
            )
        *parents, leaf = key.strip().split(".")
        node = overrides
        for name in parents:
            child = node.setdefault(name, {})
            if not isinstance(child, dict):
                raise TargetError(f"override {key!r} conflicts with {name}={child!r}")
            node = child
        try:
            node[leaf] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            raise TargetError(f"bad override value in {part!r}") from None
    return overrides


def named_configuration(name: str) -> dict[str, Any]:
    """The Settings overrides of a named reference-server configuration."""
    try:
        from reference_server.configurations import ConfigurationUnavailable, resolve
    except ImportError as exc:
        raise TargetError(f"named configurations need the reference server: {exc}") from exc
    try:
        return resolve(name)
    except ConfigurationUnavailable as exc:
        raise TargetError(str(exc)) from None


def _flatten(overrides: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in overrides.items():
        if isinstance(value, dict):
            items += _flatten(value, f"{prefix}{key}.")
        else:
            items.append((f"{prefix}{key}", value))
    return items


def format_overrides(overrides: dict[str, Any]) -> str:
    return ",".join(f"{key}={value}" for key, value in _flatten(overrides))


def inprocess_target(
    overrides: dict[str, Any], timeout_s: float = 30.0, spec: str | None = None
) -> McpTarget:
    """The reference server built in this process (imported lazily, so other kinds work
    without it). Settings come from ``Settings.from_env(**overrides)`` when the server offers
    it (so ``OCM_*`` variables such as the index location still apply), else
    ``Settings(**overrides)``; the server is warmed up before the first call so the first
    scenario's latency is not a cold start."""
    spec = spec or "inprocess" + (f":{format_overrides(overrides)}" if overrides else "")

    def make_transport(**_ignored: Any) -> Any:
        try:
            from reference_server.config import Settings
            from reference_server.server import build_server
        except ImportError as exc:
            raise TargetError(f"inprocess target needs the reference server: {exc}") from exc
        try:
            from_env = getattr(Settings, "from_env", None)
            settings = from_env(**overrides) if callable(from_env) else Settings(**overrides)
            server = build_server(settings)
            warm_up = getattr(getattr(server, "runtime", None), "warm_up", None)
            if callable(warm_up):
                warm_up()
            return server
        except Exception as exc:
            raise TargetError(f"cannot build the reference server with {overrides}: {exc}") from exc

    def with_mode(mode: str) -> Target:
        return inprocess_target({**overrides, "mode": mode}, timeout_s)

    def identity() -> dict[str, Any]:
        from evals.run.environment import backend_identity

        return backend_identity(overrides)

    return McpTarget(
        spec, make_transport, with_mode=with_mode, timeout_s=timeout_s, identity=identity
    )


def stdio_target(command_line: str, timeout_s: float = 30.0) -> McpTarget:
    """A subprocess server. ``python``/``python3`` as the command means this interpreter, so
    ``stdio:python -m reference_server`` uses the harness's own virtualenv. Its stderr goes to
    a file (the caller's ``log_file``, else a temporary one) whose last lines explain a launch
    that failed."""
    argv = shlex.split(command_line)
    if not argv:
        raise TargetError("stdio target needs a command: 'stdio:<command line>'")
    command = sys.executable if argv[0] in ("python", "python3") else argv[0]

    def make_transport(extra_env: dict[str, str] | None = None, log_file: Any = None) -> Any:
        from evals.run.stdio_process import StdioProcess

        env = {**os.environ, **(extra_env or {})}
        return StdioProcess(
            command, argv[1:], env=env, log_file=log_file, command_line=command_line
        )

    return McpTarget(f"stdio:{command_line}", make_transport, timeout_s=timeout_s)


def http_target(url: str, timeout_s: float = 30.0) -> McpTarget:
    """A streamable-HTTP server; the bearer token (if any) comes from the environment."""
    token = os.environ.get(BEARER_ENV) or None

    def make_transport(**_ignored: Any) -> Any:
        from fastmcp.client.transports import StreamableHttpTransport

        return StreamableHttpTransport(url, auth=token)

    return McpTarget(url, make_transport, timeout_s=timeout_s)


def server_target(server: Any, spec: str = "memory", timeout_s: float = 30.0) -> McpTarget:
    """An in-memory target over a FastMCP server object (tests, notebooks)."""
    return McpTarget(spec, lambda **_ignored: server, timeout_s=timeout_s)


TargetKind = Callable[[str, float], McpTarget]

TARGET_KINDS: dict[str, TargetKind] = {
    "inprocess": lambda rest, t: inprocess_target(
        parse_overrides(rest), t, f"inprocess:{rest}" if rest.strip() else "inprocess"
    ),
    "stdio": lambda rest, t: stdio_target(rest, t),
    "http": lambda rest, t: http_target(f"http:{rest}", t),
    "https": lambda rest, t: http_target(f"https:{rest}", t),
}


def make_target(spec: str, *, timeout_s: float = 30.0) -> McpTarget:
    """Build a target from its spec string (see the module docstring for the kinds)."""
    kind, _, rest = spec.strip().partition(":")
    if kind not in TARGET_KINDS:
        raise TargetError(
            f"unknown target spec {spec!r}; use 'inprocess[:k=v,...]', 'stdio:<command>' "
            "or 'http(s)://host/mcp'"
        )
    return TARGET_KINDS[kind](rest, timeout_s)
