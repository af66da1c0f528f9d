"""`python -m reference_server`: serve the tools over stdio (default) or streamable HTTP."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys

from reference_server.config import Settings
from reference_server.http_security import HttpSecurity
from reference_server.index.build import index_problem
from reference_server.server import bearer_token_from_env, build_server


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference_server", description=__doc__)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path (default /mcp)")
    parser.add_argument(
        "--allow-remote", action="store_true", help="permit binding a non-loopback address"
    )
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)

    if args.transport == "http" and not _is_loopback(args.host) and not args.allow_remote:
        parser.error(
            f"refusing to bind {args.host}: not a loopback address (pass --allow-remote to override)"
        )
    settings = Settings.from_env()
    problem = index_problem(settings)
    if problem:
        print(f"reference_server: refusing to start: {problem}", file=sys.stderr)
        return 2
    token = bearer_token_from_env() if args.transport == "http" else None
    server = build_server(settings, bearer_token=token)
    server.runtime.warm_up()  # type: ignore[attr-defined]
    if args.transport == "stdio":
        server.run(transport="stdio", show_banner=False)
    else:
        server.run(
            transport="http",
            host=args.host,
            port=args.port,
            path=args.path,
            json_response=True,
            show_banner=False,
            **HttpSecurity.from_env(args.host).app_options(),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
