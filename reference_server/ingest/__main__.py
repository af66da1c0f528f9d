"""`python -m reference_server.ingest <subcommand> ...`: one entry point for all ingesters.

Each subcommand maps to a module exposing `main(argv) -> int`; add new sources (e.g. `opa`)
by adding one line to SUBCOMMANDS.
"""

from __future__ import annotations

import importlib
import sys

SUBCOMMANDS: dict[str, str] = {
    "off": "reference_server.ingest.off_cli",
    "cpso": "reference_server.ingest.opa_cpso",
    "cep": "reference_server.ingest.opa_cep",
    "pho": "reference_server.ingest.opa_pho",
    "report": "reference_server.ingest.report",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in SUBCOMMANDS:
        names = ", ".join(sorted(SUBCOMMANDS))
        print(f"usage: python -m reference_server.ingest {{{names}}} [options]", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(SUBCOMMANDS[argv[0]])
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
