"""`python -m reference_server`: serve the tools over stdio (default) or streamable HTTP.

HTTP runs uvicorn over `http_app.create_app` with `--workers N` processes (default: two per
core, `config.WORKERS_PER_CORE`) in stateless mode, so any worker answers any request.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path

from ocm_common.cli_errors import usage_error
from reference_server.config import DEFAULT_PATH, Settings, default_http_workers

# The server's own modules are imported when it starts, so building this parser (`ocm --help`)
# stays light.


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_parser(prog: str = "python -m reference_server") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default=DEFAULT_PATH, help="HTTP endpoint path (default /mcp)")
    parser.add_argument(
        "--workers",
        type=int,
        default=default_http_workers(),
        help="HTTP server processes (default: two per core)",
    )
    parser.add_argument(
        "--allow-remote", action="store_true", help="permit binding a non-loopback address"
    )
    parser.add_argument("--log-level", default="WARNING")
    parser.set_defaults(func=serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    return serve(build_parser().parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """Serve with the parsed options; a refused option is exit 2 with the reason."""
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if args.transport == "http" and not _is_loopback(args.host) and not args.allow_remote:
        return usage_error(
            f"refusing to bind {args.host}: not a loopback address (pass --allow-remote to override)"
        )
    if args.workers < 1:
        return usage_error(f"--workers must be at least 1 (got {args.workers})")
    from reference_server.index.fingerprint import index_problem
    from reference_server.server import build_server

    problem = index_problem(Settings.from_env())
    if problem:
        print(f"reference_server: refusing to start: {problem}", file=sys.stderr)
        return 2
    if args.transport == "stdio":
        server = build_server(Settings.from_env())
        server.runtime.warm_up()
        server.run(transport="stdio", show_banner=False)
        return 0
    _serve_http(args.host, args.port, args.path, args.workers, args.log_level)
    return 0


def _serve_http(host: str, port: int, path: str, workers: int, log_level: str) -> None:
    """uvicorn calls the app factory in each worker; the path and the bound address (which the
    Host check accepts) travel in the environment."""
    import uvicorn

    from reference_server.http_security import HOST_ENV
    from reference_server.retrieval.chroma_client import sweep_orphans

    os.environ["OCM_HTTP_PATH"] = path
    os.environ[HOST_ENV] = host
    # uvicorn shuts down gracefully on SIGTERM and then raises the signal again; with the
    # default action that kills the process before its exit handlers run, leaving its private
    # Chroma copy in /tmp (4.8 GB at 100x). Exit through SystemExit instead, and remove the
    # copies of worker processes that have already exited.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run(
            "reference_server.http_app:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level=log_level.lower(),
            timeout_graceful_shutdown=2,
            lifespan="on",
        )
    finally:
        sweep_orphans(Path(tempfile.gettempdir()))


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
