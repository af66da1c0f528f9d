"""A stdio MCP server made load-testable: fastmcp's proxy (`create_proxy`) in front of it,
served over streamable HTTP on a loopback port, so locust's HTTP users measure it as they
measure any HTTP server.

The proxy starts the server once (`StdioTransport(keep_alive=True)`) and every HTTP session
reaches it through that one subprocess and its one MCP session, as a host with one connection
would; concurrent calls are multiplexed by JSON-RPC id. Latencies therefore include the
proxy's hop (HTTP in, stdio out), which a bare stdio client would not pay.

    ocm stdio-proxy --port 8123 -- python tests/fixtures/servers/well_behaved.py

`ocm stdio-proxy` is internal: `serving` (`ocm load run --target stdio:<cmd>`) starts it as a
child process.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ocm_common.cli_errors import usage_error
from ocm_common.launcher import PROJECT_ROOT, free_port, mcp_ready, running

STDIO_PREFIX = "stdio:"
# the proxy as a child process: the `ocm` program's internal subcommand
PROXY_COMMAND = (sys.executable, "-m", "ocm_cli", "stdio-proxy")


def command_argv(command_line: str) -> list[str]:
    """The command of a `stdio:<command line>` target; `python` means this interpreter, as
    for the evals' stdio targets."""
    argv = shlex.split(command_line.removeprefix(STDIO_PREFIX))
    if not argv:
        raise ValueError("a stdio target needs a command: 'stdio:<command line>'")
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def serve(command: Sequence[str], port: int) -> None:
    """Run the proxy in this process until it is stopped."""
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    backend = StdioTransport(command[0], list(command[1:]), env=dict(os.environ), keep_alive=True)
    proxy = create_proxy(backend, name=f"stdio-proxy:{Path(command[-1]).name}")
    proxy.run(transport="http", host="127.0.0.1", port=port, show_banner=False)


@contextlib.contextmanager
def serving(
    command_line: str, *, log: Path | None = None, timeout_s: float = 60.0
) -> Iterator[str]:
    """The loopback `/mcp` URL of a proxy in front of `command_line`, stopped on exit."""
    argv = command_argv(command_line)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with running(
        [*PROXY_COMMAND, "--port", str(port), "--", *argv],
        ready=mcp_ready(url),
        what=f"stdio proxy for {' '.join(argv)}",
        log=log,
        cwd=PROJECT_ROOT,
        timeout_s=timeout_s,
    ):
        yield url


def build_parser(prog: str = "ocm stdio-proxy") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--port", type=int, required=True, help="loopback port to serve on")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- <stdio server command>")
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Serve the proxy in front of the command after `--` until stopped; none is exit 2."""
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        return usage_error("give the stdio server's command after --")
    serve(command, args.port)
    return 0
