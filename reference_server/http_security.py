"""HTTP security for the streamable-HTTP server, in one place for every way it is served
(`python -m reference_server --transport http` and the `create_app()` factory uvicorn workers use).

- Origin: validated on every request (MCP transport spec: servers MUST validate it, DNS
  rebinding against a loopback server is the threat); 403 when present and not allowed.
  Loopback origins are allowed by default; more come from `OCM_ALLOWED_ORIGINS`.
- Host: checked against the bound address, loopback names and `OCM_ALLOWED_HOSTS`
  (421 Misdirected Request otherwise).
- Bearer token (`OCM_BEARER_TOKEN`): compared in constant time; 401 with `WWW-Authenticate`
  when missing or wrong (see `server.ConstantTimeTokenVerifier`).
- Body size: the MCP SDK refuses bodies over 4 MiB with 413 before parsing.

FastMCP's own Host/Origin guard (`host_origin_protection`, which supersedes the MCP SDK's
`TransportSecuritySettings`) does the checking; this module decides its configuration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TypedDict

from fastmcp import FastMCP
from starlette.applications import Starlette

from reference_server.jsonrpc_envelope import JsonRpcEnvelope

ORIGINS_ENV = "OCM_ALLOWED_ORIGINS"
HOSTS_ENV = "OCM_ALLOWED_HOSTS"
HOST_ENV = "OCM_HTTP_HOST"  # the bound address, set by `python -m reference_server` for workers


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (value or "").split(",") if p.strip())


class HttpAppOptions(TypedDict):
    """The security keyword arguments of `FastMCP.http_app(...)`."""

    host_origin_protection: bool
    allowed_hosts: list[str]
    allowed_origins: list[str]


@dataclass(frozen=True)
class HttpSecurity:
    """Who may talk to the HTTP server: extra allowed origins and Host names beyond loopback
    and the bound address (`*` wildcards as in fnmatch, e.g. `https://*.example.org`)."""

    bind_host: str = "127.0.0.1"
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> HttpSecurity:
        env = dict(os.environ if env is None else env)
        return cls(
            env.get(HOST_ENV) or "127.0.0.1",
            _split(env.get(ORIGINS_ENV)),
            _split(env.get(HOSTS_ENV)),
        )

    def app_options(self) -> HttpAppOptions:
        """Keyword arguments for `FastMCP.http_app(...)` / `FastMCP.run(transport="http", ...)`.

        Strict mode validates every request whatever the bind address; the allowed hosts are
        the bound address plus the configured ones (loopback names are always allowed, and
        with strict mode a loopback Origin is accepted when the request's Host is loopback).
        """
        hosts = [self.bind_host, *self.allowed_hosts]
        hosts += [f"{h}:*" for h in hosts if not h.endswith(":*")]
        return {
            "host_origin_protection": True,
            "allowed_hosts": hosts,
            "allowed_origins": list(self.allowed_origins),
        }


def secure_http_app(
    server: FastMCP,
    security: HttpSecurity,
    *,
    path: str = "/mcp",
    json_response: bool = True,
    stateless_http: bool = False,
) -> Starlette:
    """The streamable-HTTP ASGI app of `server` with the security settings applied, and
    malformed JSON-RPC envelopes answered as the specification names them."""
    app = server.http_app(
        path=path,
        json_response=json_response,
        stateless_http=stateless_http,
        **security.app_options(),
    )
    app.add_middleware(JsonRpcEnvelope, path=path)
    return app
