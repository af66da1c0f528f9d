"""The transport floor: a bare FastMCP tool that returns a constant, over the reference server's
own HTTP stack (the same secured, stateless, JSON-response app, connection limit and uvicorn
workers), so a bench can say how much of a call's latency no tool work can remove.

    ocm transport-floor --transport http --host 127.0.0.1 --port P --workers N

(the arguments `ocm_common.launcher.server_command` passes to any server it starts).
`ocm transport-floor` is internal: the bench starts it (`load.bench.FLOOR_COMMAND`).
"""

from __future__ import annotations

import argparse
import os
import sys

from fastmcp import FastMCP
from mcp.types import ToolAnnotations
from starlette.applications import Starlette

from reference_server.config import Settings
from reference_server.connection_reuse import MaxRequestsPerConnection
from reference_server.http_app import DEFAULT_PATH, http_path_from_env
from reference_server.http_security import HOST_ENV, HttpSecurity, secure_http_app

TOOL = "floor.constant"
ANSWER = {"value": "constant"}


def build_floor_server() -> FastMCP:
    server: FastMCP = FastMCP("transport-floor")

    @server.tool(
        name=TOOL,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
    def constant() -> dict[str, str]:
        """Always the same answer: no work but the protocol's."""
        return ANSWER

    return server


def create_app() -> Starlette:
    """The floor server's app, built as `reference_server.http_app.create_app` builds its own."""
    app = secure_http_app(
        build_floor_server(),
        HttpSecurity.from_env(),
        path=http_path_from_env(),
        json_response=True,
        stateless_http=True,
    )
    app.add_middleware(
        MaxRequestsPerConnection,
        max_requests=Settings.from_env().http_max_requests_per_connection,
    )
    return app


def build_parser(prog: str = "ocm transport-floor") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="(internal: the bench starts it) the transport floor's server: a bare "
        "constant-returning MCP tool over the reference server's HTTP stack",
    )
    parser.add_argument("--transport", choices=["http"], default="http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--path", default=DEFAULT_PATH)
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Replace this process with uvicorn's own command line over `create_app` (uvicorn's
    worker processes cannot re-import a module run with `-m` as their main: they die silently)."""
    os.environ["OCM_HTTP_PATH"] = args.path
    os.environ[HOST_ENV] = args.host
    command = [
        *(sys.executable, "-m", "uvicorn", "load.transport_floor:create_app", "--factory"),
        *("--host", args.host, "--port", str(args.port), "--workers", str(args.workers)),
        *("--log-level", "warning", "--timeout-graceful-shutdown", "2", "--lifespan", "on"),
    ]
    os.execv(sys.executable, command)
    return 0  # not reached: execv does not return
