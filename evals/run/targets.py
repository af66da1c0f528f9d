"""Targets: "a backend" is anything that answers MCP ``tools/list`` and ``tools/call``.

One contract (:class:`Target`), three kinds chosen by a spec string, all driven through
``fastmcp.Client``:

- ``inprocess`` or ``inprocess:[name,]key=value,key=value``: the reference server built in this
  process, from a named configuration (``hybrid``, ``keyword``, ``no-boosts``, ...: see
  ``reference_server/configurations.py``) and ``Settings`` overrides (values parsed as YAML
  scalars: ``mode=keyword``, ``faults.sql_delay_ms=200``);
- ``stdio:<command line>``: a server started as a subprocess speaking MCP over stdio;
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

BEARER_ENV = "EVALS_BEARER_TOKEN"


class TargetError(RuntimeError):
    """The backend could not be reached or answered with a protocol error (not a tool error)."""


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


async def _accept_any_result(name: str, result: Any) -> None:
    """Replacement for the SDK's client-side outputSchema validation (see McpTarget)."""


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

    async def __aenter__(self) -> McpTarget:
        from fastmcp import Client

        try:
            client = Client(self.transport(), timeout=self._timeout_s)
            await client.__aenter__()
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"cannot connect to target {self.spec!r}: {exc}") from exc
        client.session.validate_tool_result = _accept_any_result  # type: ignore[method-assign]
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
            raise TargetError(f"tools/call {name} timed out after {limit:.1f}s") from exc
        except Exception as exc:
            raise TargetError(f"tools/call {name} failed: {exc}") from exc
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

    def for_mode(self, mode: str) -> Target | None:
        return self._with_mode(mode) if self._with_mode else None


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
    ``stdio:python -m reference_server`` uses the harness's own virtualenv."""
    argv = shlex.split(command_line)
    if not argv:
        raise TargetError("stdio target needs a command: 'stdio:<command line>'")
    command = sys.executable if argv[0] in ("python", "python3") else argv[0]

    def make_transport(extra_env: dict[str, str] | None = None, log_file: Any = None) -> Any:
        from fastmcp.client.transports import StdioTransport

        env = {**os.environ, **(extra_env or {})}
        return StdioTransport(command, argv[1:], env=env, keep_alive=False, log_file=log_file)

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
