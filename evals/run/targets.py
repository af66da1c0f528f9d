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

Comparing two backends is then diffing two run logs. The contract and its errors are in
target_contract.py, the fastmcp client every kind uses in mcp_target.py; this module makes a
target from its spec string.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from typing import Any

import yaml

from evals.run.mcp_target import McpTarget
from evals.run.outcome import BackendIdentity, Overrides, SettingValue
from evals.run.target_contract import Target, TargetError

BEARER_ENV = "EVALS_BEARER_TOKEN"


def parse_overrides(text: str) -> Overrides:
    """``a=1,b=keyword,faults.sql_fail=true`` -> ``{"a": 1, "b": "keyword", "faults":
    {"sql_fail": True}}`` (values are YAML scalars; dotted keys make nested settings).
    A leading bare word names a configuration: its overrides come first, the rest on top."""
    overrides: Overrides = {}
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


def named_configuration(name: str) -> Overrides:
    """The Settings overrides of a named reference-server configuration."""
    try:
        from reference_server.configurations import ConfigurationUnavailable, resolve
    except ImportError as exc:
        raise TargetError(f"named configurations need the reference server: {exc}") from exc
    try:
        return resolve(name)
    except ConfigurationUnavailable as exc:
        raise TargetError(str(exc)) from None


def _flatten(overrides: Overrides, prefix: str = "") -> list[tuple[str, SettingValue]]:
    items: list[tuple[str, SettingValue]] = []
    for key, value in overrides.items():
        if isinstance(value, dict):
            items += _flatten(value, f"{prefix}{key}.")
        else:
            items.append((f"{prefix}{key}", value))
    return items


def format_overrides(overrides: Overrides) -> str:
    return ",".join(f"{key}={value}" for key, value in _flatten(overrides))


def inprocess_target(
    overrides: Overrides, timeout_s: float = 30.0, spec: str | None = None
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
            settings = (
                from_env(**overrides) if callable(from_env) else Settings.model_validate(overrides)
            )
            server = build_server(settings)
            warm_up = getattr(getattr(server, "runtime", None), "warm_up", None)
            if callable(warm_up):
                warm_up()
            return server
        except Exception as exc:
            raise TargetError(f"cannot build the reference server with {overrides}: {exc}") from exc

    def with_mode(mode: str) -> Target:
        return inprocess_target({**overrides, "mode": mode}, timeout_s)

    def identity() -> BackendIdentity:
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
