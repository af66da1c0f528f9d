"""`ocm ingest <source> ...`: one entry point for all ingesters.

Each source maps to a module exposing `main(argv) -> int`, which parses the source's own options
(`ocm ingest <source> --help`); add new sources (e.g. `opa`) by adding one line to SUBCOMMANDS.
"""

from __future__ import annotations

import argparse
import importlib

SUBCOMMANDS: dict[str, str] = {
    "off": "reference_server.ingest.off_cli",
    "cpso": "reference_server.ingest.opa_cpso",
    "cep": "reference_server.ingest.opa_cep",
    "pho": "reference_server.ingest.opa_pho",
    "report": "reference_server.ingest.report",
}


def build_parser(prog: str = "ocm ingest") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("source", choices=list(SUBCOMMANDS), help="what to ingest")
    parser.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="...",
        help="the source's own options (ocm ingest <source> --help)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run the chosen source's ingester with the rest of the command line."""
    module = importlib.import_module(SUBCOMMANDS[args.source])
    return int(module.main(args.rest) or 0)
