"""`ocm`: one program, one parser tree, for everything the project runs.

    ocm serve                      the reference server (stdio, or HTTP on 127.0.0.1)
    ocm index | ingest             build the index; ingest source files into the corpus
    ocm run | gate | report | derive | families | compare | baseline
    ocm fuzz | security | contract | routing | sensitivity
                                   the eval commands, against any MCP backend
    ocm bench | load | scale       the benchmark, one load profile, the corpus-growth bench
    ocm tool-search serve | bench  the tool-search server
    ocm confidence split | fit | judge
                                   the calibrated confidence's model

Each subcommand's parser is built by the package that owns it (its `build_parser`, or evals'
`add_commands`) and mounted here, so an option is defined once and `python -m <package>` keeps
working; every leaf sets `func`, which the program calls with the parsed options. `python -m
reference_server` stays the entry point MCP hosts launch.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

PROG = "ocm"


@dataclass(frozen=True)
class Mounted:
    """A package's own parser mounted as `ocm <name>`: `module.builder(prog)` builds it; with
    `leaf`, only that one of its subcommands is mounted (`ocm bench` is `load`'s `bench`)."""

    name: str
    module: str
    help: str
    builder: str = "build_parser"
    leaf: str | None = None
    # extra parse defaults the package's function reads: name -> "module:attribute" (imported
    # only when this command is mounted)
    defaults: tuple[tuple[str, str], ...] = ()


MOUNTED: tuple[Mounted, ...] = (
    Mounted("serve", "reference_server.__main__", "serve the twelve tools (stdio or HTTP)"),
    Mounted("index", "reference_server.index.cli", "build the reference index"),
    Mounted("sensitivity", "evals.sensitivity.__main__", "seeded defects vs every verdict command"),
    Mounted(
        "bench",
        "load.__main__",
        "the full benchmark (make bench)",
        leaf="bench",
        defaults=(("bench_steps", "ocm_cli.bench_steps:eval_steps"),),
    ),
    Mounted("load", "load.__main__", "one load profile, SLO checks, A/A spread"),
    Mounted("scale", "scale.bench", "latency and saturation as the corpus grows"),
    Mounted("tool-search", "tool_search.__main__", "the tool-search server and its bench"),
    Mounted("confidence", "reference_server.scoring.fit", "fit and judge the confidence model"),
)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _mount(sub: Any, spec: Mounted) -> None:
    module = importlib.import_module(spec.module)
    built: argparse.ArgumentParser = getattr(module, spec.builder)(f"{PROG} {spec.name}")
    source = _subcommands(built)[spec.leaf] if spec.leaf else built
    mounted = sub.add_parser(
        spec.name,
        parents=[source],
        add_help=False,
        help=spec.help,
        description=source.description or spec.help,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # the package's dispatcher reads `command` for its subcommands; a mounted leaf names itself
    extra: dict[str, Any] = {"command": spec.leaf} if spec.leaf else {}
    for name, where in spec.defaults:
        module_name, _, attribute = where.partition(":")
        extra[name] = getattr(importlib.import_module(module_name), attribute)
    mounted.set_defaults(func=built.get_default("func"), **extra)


def _ingest(args: argparse.Namespace) -> int:
    from reference_server.ingest.__main__ import main as ingest_main

    return ingest_main(args.rest)


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole tree: every mounted package, then the eval commands at the top level. With
    `chosen` (the command being run), the other packages are listed by name and help only, so
    starting one command does not import every other package (the server, the benchmarks)."""
    from evals.__main__ import add_commands

    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="program_command", required=True, metavar="COMMAND")
    for spec in MOUNTED:
        if chosen is None or chosen == spec.name:
            _mount(sub, spec)
        else:
            sub.add_parser(spec.name, help=spec.help)
    add_commands(sub)
    ingest = sub.add_parser(
        "ingest",
        help="ingest ../shared/data source files into the corpus (ocm ingest --help)",
        add_help=False,
    )
    # ingest's sources each own a parser (reference_server/ingest/*.py) chosen by the first word
    ingest.add_argument("rest", nargs=argparse.REMAINDER)
    ingest.set_defaults(func=_ingest)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = next((w for w in words if not w.startswith("-")), "")
    args = build_parser(chosen).parse_args(words)
    func: Callable[[argparse.Namespace], int] = args.func
    return int(func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
