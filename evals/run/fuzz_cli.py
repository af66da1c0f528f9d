"""``ocm fuzz``: the command line of the fuzz run (options, the per-tool table and
the boundary cases as fuzz_render.py renders them, the verdict line and exit status).

Exit status: 0 every check held; 1 a failing finding (spec-must, spec-should, security, and
house rules where enforced) or changed databases; 2 a harness error, or the run cut short
(``--deadline``, the run's restart cap, a server that cannot be started again) without a
failing finding; 3 nothing was called (every tool skipped: "0 calls: N tools skipped
(reasons)"), so nothing was checked; 130 interrupted (SIGINT, SIGTERM). fuzz.json and the run
record are written in every case (a target that did not start: status error, and why).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evals.cli_options import output_parent, target_parent
from evals.conformance.canary import new_canary
from evals.conformance.grading import table_text
from evals.run.fuzz import run_fuzz
from evals.run.fuzz_models import EXIT_HARNESS, PROFILES, FuzzConfig, ToolStats
from evals.run.fuzz_render import render_edges, render_table
from ocm_common.findings import Event, EventStream, Finding, fails
from ocm_common.json_types import Arguments
from ocm_common.run_record import Clock, header, write_record

HELP = "property-based contract tests of any MCP target from its published schemas"
FAMILIES = (
    "generated, hostile_text, known_good, schema_edge (valid); wrong_type, "
    "wrong_type_arguments, extra_field, missing_required, out_of_range, unknown_enum, "
    "too_many_items, huge_string, control_chars, blank_text, two_problems (invalid)"
)
EPILOG = (
    "exit status: 0 every check held; 1 failing findings; 2 harness error, or cut short "
    "(--deadline, restart cap) without failing findings; 3 nothing was called (every tool "
    "skipped); 130 interrupted.\n\nthe one grading table (evals/conformance/grading.py):\n"
)


class SkipReporter:
    """Prints each tool the run will not call, as the engine reports it."""

    def __call__(self, event: Event) -> None:
        if event.kind == "skipped" and event.skipped is not None:
            print(f"SKIPPED {event.skipped.tool}: {event.skipped.reason}", flush=True)


def known_inputs(
    examples: str | None, golden: str | None, target: str
) -> dict[str, list[Arguments]]:
    """Known-good arguments per tool, from an examples file and golden scenarios (for the
    reference server, its own golden set unless told otherwise)."""
    from ocm_common.golden import GOLDEN_DIR, example_calls, golden_calls

    root = Path(golden) if golden else (GOLDEN_DIR if target.startswith("inprocess") else None)
    calls = [
        *(example_calls(Path(examples)) if examples else []),
        *(golden_calls(root) if root is not None else []),
    ]
    known: dict[str, list[Arguments]] = {}
    for call in calls:
        known.setdefault(call.tool, []).append(call.arguments)
    return known


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default")
    parser.add_argument("--valid", type=int, help="valid examples per tool (overrides the profile)")
    parser.add_argument(
        "--invalid", type=int, help="invalid examples per tool (overrides the profile)"
    )
    parser.add_argument("--tool", action="append", help="only this tool (repeatable)")
    parser.add_argument(
        "--error-limit-ms",
        type=float,
        default=10_000.0,
        help="max time for an input error (a hang detector: speed is measured by the benchmarks)",
    )
    parser.add_argument(
        "--index-dir",
        help="checksum these databases before and after (default: the reference index for inprocess targets)",
    )
    parser.add_argument(
        "--family", action="append", help=f"only this case family (repeatable): {FAMILIES}"
    )
    parser.add_argument("--seed", type=int, help="the run's seed (default: a random one, reported)")
    parser.add_argument(
        "--database",
        default=".hypothesis/fuzz",
        help="hypothesis example database directory ('' keeps it in memory)",
    )
    parser.add_argument(
        "--health-every", type=int, help="tools/list after every Nth case (and every failure)"
    )
    parser.add_argument(
        "--house-rules",
        choices=["auto", "on", "off"],
        default="auto",
        help="also enforce this project's conventions (auto: on for inprocess targets only)",
    )
    parser.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call tools that may change state (destructive or not declared read-only)",
    )
    parser.add_argument(
        "--examples",
        help="known-good inputs: a JSON/YAML file mapping tool name -> list of argument objects",
    )
    parser.add_argument(
        "--no-edges",
        action="store_true",
        help="skip the boundary cases from the schema (run before random generation by default)",
    )
    parser.add_argument(
        "--golden",
        help="known-good inputs from golden scenarios naming any tool (default for inprocess: golden/)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        help="seconds for the whole run (default: the profile's, 600 / 3600 for large; 0: none); "
        "at the deadline nothing new starts and the run log says what was not reached",
    )
    parser.add_argument(
        "--call-timeout", type=float, default=30.0, help="seconds a call may take (30)"
    )
    parser.add_argument(
        "--restarts-per-tool",
        type=int,
        default=5,
        help="restarts after the server died or stopped answering on one tool (and calls that "
        "hung) before its remaining cases are dropped (5)",
    )
    parser.add_argument(
        "--restarts-per-run", type=int, default=20, help="restarts in the whole run (20)"
    )
    parser.add_argument(
        "--shrink-attempts",
        type=int,
        default=8,
        help="calls, each in a fresh process, to shrink a case that killed the server (8)",
    )


def add_parser(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "fuzz",
        parents=parents,
        help=HELP + " (exit 0/1/2/3)",
        description=HELP + ". Writes fuzz.json (default: reports/runs/fuzz).",
        epilog=EPILOG + table_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=cmd_fuzz)


def main(argv: list[str] | None = None) -> int:
    """The fuzz command alone (tests): the same options as ``ocm fuzz``."""
    parser = argparse.ArgumentParser(prog="ocm fuzz", description=HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub, [target_parent(), output_parent("fuzz.json", "reports/runs/fuzz")])
    code: int = cmd_fuzz(parser.parse_args(["fuzz", *(argv or [])]))
    return code


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt("SIGTERM") while the run goes on, so a run stopped
    either way still writes its log and record (the main thread only; elsewhere: nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt("SIGTERM")

    previous: Callable[..., object] | int | None = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def harness_error(out: Path, clock: Clock, target: str, config: FuzzConfig, error: str) -> int:
    """A run that could not start (the target did not come up, tools/list failed): the error
    on stderr (a stdio launch explained: command, exit status, last stderr lines), fuzz.json
    and the record with status error, exit 2."""
    print(f"harness error: {error}", file=sys.stderr)
    settings = json.loads(json.dumps(asdict(config), default=str))
    log = {"kind": "fuzz", "target": target, "status": "error", "error": error, "exit_code": 2}
    out.mkdir(parents=True, exist_ok=True)
    (out / "fuzz.json").write_text(json.dumps({**log, "config": settings}, indent=1) + "\n")
    head = header("fuzz", clock, EXIT_HARNESS, target=target, settings=settings)
    write_record(out, head, {**log, "config": settings}, ["fuzz.json"])
    return EXIT_HARNESS


def cmd_fuzz(args: argparse.Namespace) -> int:
    from evals.run.targets import TargetError, make_target

    clock = Clock()
    profile = PROFILES[args.profile]
    config = FuzzConfig(
        valid=args.valid if args.valid is not None else profile["valid"],
        invalid=args.invalid if args.invalid is not None else profile["invalid"],
        error_limit_ms=args.error_limit_ms,
        seed=args.seed,
        tools=args.tool,
        families=args.family,
        database=args.database or None,
        health_every=args.health_every or profile["health_every"],
        house_rules=(
            args.target.startswith("inprocess")
            if args.house_rules == "auto"
            else args.house_rules == "on"
        ),
        allow_writes=args.allow_writes,
        edges=not args.no_edges,
        examples=known_inputs(args.examples, args.golden, args.target),
        deadline_s=(args.deadline if args.deadline is not None else profile["deadline_s"]) or None,
        call_timeout_s=args.call_timeout,
        restarts_per_tool=args.restarts_per_tool,
        restarts_per_run=args.restarts_per_run,
        shrink_attempts=args.shrink_attempts,
        # a stdio or in-process server inherits this process's environment; HTTP ones do not
        canary=None if args.target.startswith("http") else new_canary(),
    )
    index_dir = args.index_dir
    if args.target.startswith("inprocess"):
        # The server runs in this process: its own log of each refused call is noise here (the
        # fuzzer judges the responses), so only its critical messages are shown.
        import logging

        logging.getLogger("fastmcp").setLevel(logging.CRITICAL)
        logging.getLogger("reference_server").setLevel(logging.ERROR)
    if index_dir is None and args.target.startswith("inprocess"):
        from reference_server.config import Settings

        index_dir = str(Settings.from_env().index_dir)

    def progress(stats: ToolStats, failures: list[Finding]) -> None:
        print(
            f"  {stats.tool}: {stats.tried} cases, {stats.failures} failures, slowest {stats.slowest_ms:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
        for failure in failures[:3]:
            verdict = "FAIL" if fails(failure.grade, house_rules=config.house_rules) else "NOTE"
            print(f"    {verdict} {failure.describe()[:400]}", file=sys.stderr, flush=True)

    events = EventStream()
    events.subscribe(SkipReporter())

    if config.seed is None:
        config.seed = random.randrange(2**32)
    print(
        f"fuzzing {args.target} ({args.profile}: {config.valid} valid + {config.invalid} invalid "
        f"per tool), seed {config.seed}",
        file=sys.stderr,
    )
    out = Path(args.out or "reports/runs/fuzz")
    try:
        with sigterm_interrupts():
            report = run_fuzz(
                make_target(args.target, timeout_s=config.call_timeout_s),
                config,
                profile=args.profile,
                index_dir=index_dir,
                progress=progress,
                events=events,
            )
    except TargetError as exc:  # the target could not be started or listed: nothing ran
        return harness_error(out, clock, args.target, config, str(exc))
    out.mkdir(parents=True, exist_ok=True)
    log = {
        **report.to_json(),
        "table": render_table(report),
        "edges": render_edges(report),
        "config": asdict(config),
    }
    (out / "fuzz.json").write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n")
    head = header(
        "fuzz",
        clock,
        report.exit_code,
        target=args.target,
        settings=log["config"],
        status=report.status,
    )
    write_record(out, head, log, ["fuzz.json"])
    print(render_table(report))
    if report.tools and any(t.edges or t.edges_dropped for t in report.tools):
        print("\nboundary cases (from each inputSchema, before random generation):")
        print(render_edges(report))
    for failure in report.failures[:50]:
        verdict = "FAIL" if fails(failure.grade, house_rules=report.house_rules) else "NOTE"
        print(f"{verdict} {failure.describe()}")
    if len(report.failures) > 50:
        print(f"... {len(report.failures) - 50} more findings in {out / 'fuzz.json'}")
    counts = ", ".join(f"{grade} {n}" for grade, n in report.counts().items())
    rules = "with" if report.house_rules else "without"
    print(f"findings by grade ({rules} house rules): {counts}")
    if report.databases_unchanged is not None:
        print(f"databases: {report.database_note}")
    for note in report.notes:
        print(f"note: {note}")
    if report.cut_short is not None:
        print(
            f"CUT SHORT ({report.cut_short.status}): {report.cut_short.line()}; "
            f"{len(report.failing)} failing findings so far; run log {out / 'fuzz.json'}"
        )
        return report.exit_code
    if report.ok and report.called_nothing:
        print(f"NOTHING CHECKED: {report.nothing_called_line()}; run log {out / 'fuzz.json'}")
        return report.exit_code
    print(
        f"{'OK' if report.ok else 'FAILED'}: {len(report.failing)} failing findings in "
        f"{report.calls} calls, {report.seconds:.0f} s (seed {report.seed}); run log {out / 'fuzz.json'}"
    )
    return report.exit_code
