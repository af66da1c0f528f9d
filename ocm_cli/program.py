"""`ocm`: one program, one parser tree, for everything the project runs.

    ocm serve                      the reference server (stdio, or HTTP on 127.0.0.1)
    ocm index | ingest             build the index; ingest source files into the corpus
    ocm synthetic-index | chroma-load
                                   a scaled copy of the index; the index into a Chroma server
    ocm run | gate | report | derive | families | compare | baseline
    ocm fuzz | security | contract | routing | sensitivity
                                   the eval commands, against any MCP backend
    ocm snapshot | fixture         answer snapshots; the CPU reproducibility fixture
    ocm bench | load | scale       the benchmark, one load profile, the corpus-growth bench
    ocm mix | profile-calls        the distinct-query mix; where a call's CPU goes
    ocm query-audit | gate-chroma | rehearsal
                                   slow queries at scale; the gate on a Chroma server; replicas
                                   behind a load balancer
    ocm tool-search serve | bench  the tool-search server
    ocm confidence split | fit | judge
                                   the calibrated confidence's model
    ocm stdio-proxy | transport-floor
                                   internal: processes the load runs and the bench start

Each subcommand's parser is built by the package that owns it (its `build_parser`, or evals'
`add_commands`) and mounted here, so an option is defined once; every leaf sets `func`, which
the program calls with the parsed options. This is the only command-line program
(tests/test_one_program.py): `python -m reference_server` stays the entry point MCP hosts
launch, `python -m tool_search` the tool-search server's, and examples/ are other servers.
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
    Mounted(
        "synthetic-index",
        "reference_server.index.synthetic",
        "a scaled copy of the built index (synthetic records, for the scale benches)",
    ),
    Mounted(
        "chroma-load", "reference_server.index.chroma_load", "copy the index into a Chroma server"
    ),
    Mounted("ingest", "reference_server.ingest.cli", "ingest ../shared/data files into the corpus"),
    Mounted("sensitivity", "evals.sensitivity.cli", "seeded defects vs every verdict command"),
    Mounted("snapshot", "evals.run.answer_snapshot", "record or compare every scenario's answers"),
    Mounted(
        "fixture",
        "evals.run.reproducibility",
        "check this CPU against the reproducibility fixture (--write: record it)",
    ),
    Mounted(
        "bench",
        "load.cli",
        "the full benchmark (make bench)",
        leaf="bench",
        defaults=(("bench_steps", "ocm_cli.bench_steps:eval_steps"),),
    ),
    Mounted("load", "load.cli", "one load profile, SLO checks, A/A spread"),
    Mounted("mix", "load.distinct_mix", "write the distinct-query task mix (make distinct-mix)"),
    Mounted("profile-calls", "load.profile_calls", "where a call's CPU goes, per tool and stage"),
    Mounted("scale", "scale.bench", "latency and saturation as the corpus grows"),
    Mounted("query-audit", "scale.query_audit", "which queries get slower as the corpus grows"),
    Mounted("gate-chroma", "scale.chroma_gate", "the golden gate with vectors on a Chroma server"),
    Mounted("rehearsal", "scale.rehearsal", "two replicas behind nginx, one stopped mid-run"),
    Mounted("tool-search", "tool_search.__main__", "the tool-search server and its bench"),
    Mounted("confidence", "reference_server.scoring.fit", "fit and judge the confidence model"),
    Mounted(
        "stdio-proxy",
        "load.stdio_proxy",
        "internal: a stdio server behind a loopback HTTP proxy (ocm load run --target stdio:)",
    ),
    Mounted(
        "transport-floor",
        "load.transport_floor",
        "internal: the bench's constant-answer server over the reference HTTP stack",
    ),
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


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole tree: every mounted package, then the eval commands at the top level. With
    `chosen` (the command being run), the other packages are listed by name and help only, and
    the eval commands are added only when `chosen` is not a mounted command, so starting one
    command does not import every other package (the server, the benchmarks, the harness)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="program_command", required=True, metavar="COMMAND")
    for spec in MOUNTED:
        if chosen is None or chosen == spec.name:
            _mount(sub, spec)
        else:
            sub.add_parser(spec.name, help=spec.help)
    if chosen not in {spec.name for spec in MOUNTED}:
        from evals.cli import add_commands

        add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = next((w for w in words if not w.startswith("-")), "")
    args = build_parser(chosen).parse_args(words)
    func: Callable[[argparse.Namespace], int] = args.func
    return int(func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
