"""The HTTP app factory: one stateless streamable-HTTP ASGI app per server process.

`create_app()` takes no arguments so that uvicorn can call it in every worker process
(`uvicorn.run("reference_server.http_app:create_app", factory=True, workers=N)`): each
worker builds its own server from the environment (`OCM_*` settings, `OCM_BEARER_TOKEN`,
`OCM_HTTP_PATH`). Stateless mode keeps no session between requests, so any worker (or any
replica behind a load balancer) can answer any request; JSON responses avoid an event
stream for single-reply calls.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette

from reference_server.config import DEFAULT_PATH, Settings
from reference_server.connection_reuse import MaxRequestsPerConnection
from reference_server.http_security import HttpSecurity, secure_http_app
from reference_server.index.fingerprint import index_problem
from reference_server.server import bearer_token_from_env, build_server


def http_path_from_env() -> str:
    return os.environ.get("OCM_HTTP_PATH") or DEFAULT_PATH


def create_app() -> Starlette:
    """Build the warmed FastMCP server and its stateless, JSON-response HTTP app."""
    settings = Settings.from_env()
    problem = index_problem(settings)
    if problem:
        raise RuntimeError(f"refusing to start: {problem}")
    server = build_server(settings, bearer_token=bearer_token_from_env())
    server.runtime.warm_up()
    app = secure_http_app(
        server,
        HttpSecurity.from_env(),
        path=http_path_from_env(),
        json_response=True,
        stateless_http=True,
    )
    app.add_middleware(
        MaxRequestsPerConnection, max_requests=settings.http_max_requests_per_connection
    )
    app.state.mcp_server = server
    return app
