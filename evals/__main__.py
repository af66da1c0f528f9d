"""Command line: ``python -m evals {run,gate,report,baseline} ...``.

Exit codes: ``run`` 0 when the run completed (scenario failures are the gate's business, so
``make gate`` always reaches the gate; ``--strict`` makes failures exit 1) and 2 on a harness
error; ``gate`` 0 pass, 1 gate failed, 2 harness error; ``report`` / ``baseline`` 0, or 2.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

EXIT_OK, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2


def _default_out() -> Path:
    return Path("reports/runs") / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def cmd_run(args: argparse.Namespace) -> int:
    from evals.events import EventBus
    from evals.reporters import ConsoleReporter
    from evals.runner import RunOptions, execute
    from evals.scenario import ScenarioLoadError, load_scenarios
    from evals.targets import TargetError, make_target

    console = Console(stderr=True)
    try:
        scenarios = load_scenarios(args.golden, select=args.only or ())
        target = make_target(args.target, timeout_s=args.timeout)
    except (ScenarioLoadError, TargetError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    if not scenarios:
        console.print(f"[red]error:[/] no scenarios found under {args.golden}")
        return EXIT_HARNESS
    options = RunOptions(
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        ablation=args.ablation,
        depth=args.depth,
        disabled_checks=frozenset(args.disable_check or ()),
        ragas=not args.no_ragas,
        llm=False if args.no_llm else None,
    )
    bus = EventBus()
    bus.subscribe(ConsoleReporter(console, show_failures=not args.quiet))
    out = Path(args.out) if args.out else _default_out()
    try:
        log = asyncio.run(
            execute(
                target,
                scenarios,
                out,
                options=options,
                bus=bus,
                extra_config={"golden": str(args.golden)},
            )
        )
    except Exception as exc:
        console.print(f"[red]harness error:[/] {type(exc).__name__}: {exc}")
        console.print(f"run log (aborted) written to {out}")
        return EXIT_HARNESS
    console.print(f"run log: {out}")
    if args.print_dir:
        print(out)
    if args.strict and log.summary.counts.get("passed") != log.summary.counts.get("scenarios"):
        return EXIT_FAIL
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    from evals.gate import run_gate

    baseline = None if args.no_baseline else Path(args.baseline)
    report = run_gate(
        Path(args.run),
        config_path=Path(args.config),
        baseline_path=baseline,
        require_baseline=args.require_baseline,
        out=Path(args.out) if args.out else None,
    )
    console = Console()
    if report.error:
        console.print(f"[red]gate: harness error:[/] {report.error}")
    elif report.failures:
        console.print(f"[red bold]gate FAILED[/]: {len(report.failures)} rule(s)")
        for finding in report.failures:
            console.print(f"  - {finding.message}")
    else:
        console.print(f"[green bold]gate passed[/]: {len(report.findings)} rule(s) held")
    for note in report.notes[:20]:
        console.print(f"  note: {note}")
    return report.exit_code


def cmd_report(args: argparse.Namespace) -> int:
    from evals.report import write_report
    from evals.runlog import RunLogError

    try:
        path = write_report(Path(args.run))
    except RunLogError as exc:
        Console(stderr=True).print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    Console().print(f"report: {path}")
    return EXIT_OK


def cmd_baseline(args: argparse.Namespace) -> int:
    from evals import baseline
    from evals.runlog import RunLog, RunLogError

    console = Console(stderr=True)
    try:
        log = RunLog.read(args.run)
    except RunLogError as exc:
        console.print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    if log.summary.status != "complete":
        console.print(f"[red]error:[/] run {args.run} is {log.summary.status}; not a baseline")
        return EXIT_HARNESS
    written = baseline.write(baseline.from_run(log, args.run), Path(args.out))
    failing = [r.id for r in log.by_mode() if not r.passed]
    console.print(f"baseline: {written} ({len(log.by_mode())} scenarios)")
    if failing:
        console.print(
            f"[yellow]warning:[/] {len(failing)} scenario(s) fail in this run: {', '.join(failing[:10])}"
        )
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evals",
        description="Run golden scenarios against an MCP backend, gate releases on the scores, report.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="run the golden scenarios against a target and write a run log"
    )
    run.add_argument(
        "--target",
        default="inprocess",
        help="'inprocess[:key=value,...]' (Settings overrides), 'stdio:<command line>' "
        "or 'http(s)://host:port/mcp' (bearer token from EVALS_BEARER_TOKEN); "
        "default: inprocess",
    )
    run.add_argument(
        "--golden",
        default="golden",
        type=Path,
        help="golden scenario directory or file (default: golden)",
    )
    run.add_argument(
        "--out", default=None, help="run log directory (default: reports/runs/<UTC timestamp>)"
    )
    run.add_argument(
        "--concurrency", type=int, default=4, help="concurrent tool calls (default: 4)"
    )
    run.add_argument(
        "--timeout", type=float, default=30.0, help="per-call timeout in seconds (default: 30)"
    )
    run.add_argument(
        "--depth",
        type=int,
        default=10,
        help="result depth for retrieval metrics: n_results/top_k raised to this (default: 10)",
    )
    run.add_argument(
        "--ablation",
        action="store_true",
        help="also run the retrieval scenarios in hybrid, vector and keyword mode",
    )
    run.add_argument(
        "--only",
        action="append",
        metavar="ID_OR_TAG",
        help="run only scenarios with this id or tag (repeatable)",
    )
    run.add_argument(
        "--disable-check",
        action="append",
        metavar="NAME",
        help="switch a check off by name, e.g. schema_valid (repeatable)",
    )
    run.add_argument("--no-ragas", action="store_true", help="skip ragas metrics")
    run.add_argument(
        "--no-llm",
        action="store_true",
        help="skip LLM-judged ragas metrics even when OPENAI_API_KEY is set",
    )
    run.add_argument("--quiet", action="store_true", help="do not print each failed check")
    run.add_argument(
        "--strict", action="store_true", help="exit 1 when any scenario fails (default: 0)"
    )
    run.add_argument("--print-dir", action="store_true", help="print the run directory on stdout")
    run.set_defaults(func=cmd_run)

    gate = sub.add_parser(
        "gate", help="apply thresholds and the baseline to a run log (exit 0/1/2)"
    )
    gate.add_argument("--run", required=True, help="run log directory")
    gate.add_argument(
        "--config", default="evals/gate.yaml", help="gate thresholds (default: evals/gate.yaml)"
    )
    gate.add_argument(
        "--baseline",
        default="evals/baseline.json",
        help="baseline per-scenario scores (default: evals/baseline.json)",
    )
    gate.add_argument(
        "--require-baseline",
        action="store_true",
        help="a missing baseline file is a harness error (exit 2) instead of a note",
    )
    gate.add_argument("--no-baseline", action="store_true", help="skip the baseline comparison")
    gate.add_argument(
        "--out",
        default=None,
        help="where to write gate.json, gate.md, junit.xml (default: the run directory)",
    )
    gate.set_defaults(func=cmd_gate)

    report = sub.add_parser("report", help="print tables for a run log and write report.md")
    report.add_argument("--run", required=True, help="run log directory")
    report.set_defaults(func=cmd_report)

    base = sub.add_parser("baseline", help="write the baseline file from a run log")
    base.add_argument("--run", required=True, help="run log directory")
    base.add_argument(
        "--out",
        default="evals/baseline.json",
        help="baseline file to write (default: evals/baseline.json)",
    )
    base.set_defaults(func=cmd_baseline)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
