"""`python -m tool_search serve --from SPEC [--from SPEC ...]`: stdio by default, or streamable
HTTP bound to 127.0.0.1 (`--transport http --port N`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

LOOPBACK = "127.0.0.1"


def build_parser(prog: str = "python -m tool_search") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the four tool-search tools over MCP")
    serve.add_argument(
        "--from",
        dest="sources",
        action="append",
        required=True,
        metavar="SPEC",
        help="inprocess | stdio:<cmd> | http(s)://.../mcp | distractors:<n>[:<seed>] | a tool-definition file",
    )
    serve.add_argument(
        "--rules",
        type=Path,
        default=None,
        help="category rules (default: tool_search/categories.yaml)",
    )
    serve.add_argument(
        "--golden", type=Path, default=Path("golden"), help="golden scenarios for examples"
    )
    serve.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    serve.add_argument("--host", default=LOOPBACK)
    serve.add_argument("--port", type=int, default=8010)
    bench = sub.add_parser("bench", help="search latency in process (p50/p95/p99)")
    bench.add_argument("--from", dest="sources", action="append", required=True, metavar="SPEC")
    bench.add_argument("--golden", type=Path, default=Path("golden"), help="questions to search")
    bench.add_argument("--rounds", type=int, default=3)
    bench.add_argument("--out", type=Path, default=Path("reports/tool_search/bench.json"))
    parser.set_defaults(func=dispatch)
    return parser


def main(argv: list[str] | None = None) -> int:
    return dispatch(build_parser().parse_args(argv))


def dispatch(args: argparse.Namespace) -> int:
    """Serve, or measure search latency (`args.command`)."""
    if args.command == "bench":
        from tool_search.bench import main as bench_main

        return bench_main(args.sources, args.golden, args.out, args.rounds)

    from tool_search.background import BackgroundService
    from tool_search.server import build_server
    from tool_search.service import ToolSearchService
    from tool_search.sources import SourceError, check_spec

    try:
        for spec in args.sources:
            check_spec(spec)  # a mistyped spec stops the start; reading it is left to the thread
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    service = BackgroundService(
        lambda: ToolSearchService.from_specs(args.sources, args.rules, args.golden)
    )
    server = build_server(service)
    from tool_search.semantic import preload

    preload()
    if args.transport == "stdio":
        server.run("stdio", show_banner=False)
    else:
        server.run("http", host=args.host, port=args.port, show_banner=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
