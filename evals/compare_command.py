"""`evals compare`: target against target (both run here, paired tests and interleaved latency),
run log against run log, or record against record (two benches: their figures side by side).
Exit 0 no significant regression of B against A, 1 a significant regression, 2 harness error."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from evals.cli_options import out_dir, output_parent, spec
from evals.console import log_console
from evals.run_options import add_run_options, run_request
from evals.steps import run_golden

if TYPE_CHECKING:
    from evals.run.interleaved import InterleavedLatency
    from evals.run.runlog import RunLog

EXIT_OK = 0


def _with_overrides(spec: str, overrides: str | None) -> str:
    if not overrides or not spec.startswith("inprocess"):
        return spec
    return f"{spec}{',' if ':' in spec else ':'}{overrides}"


def cmd_compare(args: argparse.Namespace) -> int:
    from evals.read import compare_report
    from evals.read.compare import EXIT_HARNESS as HARNESS
    from evals.read.compare import compare_logs
    from evals.run.runlog import RunLog, RunLogError

    console = log_console()
    out = out_dir(args.out, "reports/compare")
    logs: list[RunLog] = []
    labels: list[str] = []
    specs: list[str] = []
    if args.run_a or args.run_b:
        if not (args.run_a and args.run_b) or args.a or args.b:
            console.print("[red]error:[/] give --run-a and --run-b, or --a and --b (targets)")
            return HARNESS
        kinds = _record_kinds(args.run_a, args.run_b, console)
        if kinds is None:
            return HARNESS
        if kinds != ("run", "run"):
            return _compare_records(args, out, console)
        for path in (args.run_a, args.run_b):
            try:
                logs.append(RunLog.read(path))
            except RunLogError as exc:
                console.print(f"[red]error:[/] {exc}")
                return HARNESS
            labels.append(logs[-1].summary.target)
    else:
        if not (args.a and args.b):
            console.print("[red]error:[/] give --a and --b (targets), or --run-a and --run-b")
            return HARNESS
        for name, text in (("a", args.a), ("b", args.b)):
            target_spec = _with_overrides(spec(text), args.overrides)
            console.print(f"[bold]{name.upper()}[/]: {target_spec}", soft_wrap=True)
            log = run_golden(
                target_spec, run_request(args, ablation=False), out / f"run-{name}", console
            )
            if log is None:
                return HARNESS
            logs.append(log)
            labels.append(text)
            specs.append(target_spec)
    interleaved, latency_error = None, None
    if specs and args.latency_rounds > 0:
        try:
            interleaved = _measure_latency(specs, logs, args, console)
        except Exception as exc:  # a harness error: reported, and compare exits 2
            latency_error = f"{type(exc).__name__}: {exc}"
            console.print(f"[red]latency:[/] {latency_error}")
        else:
            interleaved.write(out / "interleaved.json")
    comparison = compare_logs(
        logs[0],
        logs[1],
        alpha=args.alpha,
        metrics=args.metric,
        label_a=labels[0],
        label_b=labels[1],
        allow_missing=args.allow_missing,
        interleaved=interleaved,
        latency_error=latency_error,
        **_latency_rule(args),
    )
    latest = None if args.no_latest else out.parent / "latest"
    paths = compare_report.write(comparison, out, latest)
    print_compare(comparison)
    console.print(f"compare report: {paths['html']} (and .md, .json)")
    if args.a and args.b and args.routing_cases != "none":
        from evals.routing.compare import compare_routing
        from evals.routing.compare import write as write_routing

        routing = compare_routing(args.a, args.b, _routing_cases(args.routing_cases))
        console.print(
            f"routing: B better in {routing['b_better']} cases, worse in {routing['b_worse']} "
            f"(p = {routing['p_value']}): {write_routing(routing, out)}"
        )
    return comparison.exit_code


def _latency_rule(args: argparse.Namespace) -> dict[str, float]:
    """The practical threshold: the options where given, else paired_latency's constants."""
    from evals.read import paired_latency

    ratio, ms = args.latency_min_ratio, args.latency_min_ms
    return {
        "min_ratio": paired_latency.MIN_RATIO if ratio is None else ratio,
        "min_diff_ms": paired_latency.MIN_DIFF_MS if ms is None else ms,
    }


def _measure_latency(
    specs: Sequence[str], logs: Sequence[RunLog], args: argparse.Namespace, console: Console
) -> InterleavedLatency:
    """Both targets open at once, every tool's distinct golden calls (as each golden run sent
    them) on A and B alternately (evals/run/interleaved.py)."""
    from evals.run.interleaved import answered_args, measure
    from evals.run.scenario import load_scenarios
    from evals.run.targets import Target, make_target
    from evals.run.tool_map import MappedTarget, parse_tool_map

    scenarios = load_scenarios(args.golden, select=args.only or ())
    tool_map = parse_tool_map(getattr(args, "tool_map", None) or ())
    targets: list[Target] = []
    for target_spec in specs:
        target: Target = make_target(target_spec, timeout_s=args.timeout)
        if tool_map:
            target = MappedTarget(target, tool_map)
        targets.append(target)
    console.print(
        f"latency: {args.latency_rounds} interleaved round(s) of each tool's golden calls, "
        "A and B alternately (ABBA)"
    )
    record = asyncio.run(
        measure(
            targets[0],
            targets[1],
            scenarios,
            rounds=args.latency_rounds,
            timeout_s=args.timeout,
            sent_a=answered_args(logs[0]),
            sent_b=answered_args(logs[1]),
        )
    )
    calls = sum(len(c.a_ms) for c in record.calls)
    console.print(
        f"latency: {calls} paired calls; A's calls took {record.a_calls_s:.1f} s, "
        f"B's {record.b_calls_s:.1f} s (wall clock {record.wall_s:.1f} s)"
    )
    return record


def _record_kinds(a: str, b: str, console: Console) -> tuple[str, str] | None:
    """The kinds of the two records compared (a run log's record preferred in a folder)."""
    from ocm_common.run_record import RunRecordError, locate, read_record

    try:
        kinds = (read_record(locate(a)).kind, read_record(locate(b)).kind)
    except RunRecordError as exc:
        console.print(f"[red]error:[/] {exc}")
        return None
    if kinds[0] != kinds[1]:
        console.print(f"[red]error:[/] A is a {kinds[0]} record, B a {kinds[1]} record")
        return None
    return kinds


def _compare_records(args: argparse.Namespace, out: Path, console: Console) -> int:
    """Two records of one kind other than a run log: their figures side by side (exit 0)."""
    from evals import render
    from evals.read import record_report
    from ocm_common.run_record import locate, read_record

    a, b = read_record(locate(args.run_a)), read_record(locate(args.run_b))
    doc = record_report.compare_document(a, b, args.run_a, args.run_b)
    paths = render.write(doc, out, "compare")
    console.print(f"compare: {doc.verdict.text if doc.verdict else ''}")
    console.print(f"compare report: {paths['html']} (and .md)")
    return EXIT_OK


def _routing_cases(spec: str) -> list[Any]:
    from evals.routing.cases import load_cases

    return load_cases(spec)


def print_compare(comparison: Any) -> None:
    """The verdict lines, one per scope, on stdout."""
    console = Console(width=None if sys.stdout.isatty() else 160, soft_wrap=True)
    if comparison.error:
        console.print(f"[red]compare: harness error:[/] {comparison.error}")
        return
    console.print(f"compare: B = {comparison.label_b} vs A = {comparison.label_a}")
    for scope in comparison.scopes:
        colour = {"better": "green", "worse": "red"}.get(scope.verdict, "white")
        detail = []
        for metric in ("nDCG@10", "pass_rate"):
            r = comparison.result(scope.scope, metric)
            if r is not None and r.test.n:
                detail.append(
                    f"{r.label} {r.test.mean_a:.3f} -> {r.test.mean_b:.3f} "
                    f"(Holm p {r.p_perm_holm:.3g}, n={r.test.n})"
                )
        console.print(
            f"  {scope.scope:22} [{colour}]{scope.verdict}[/]"
            + (f"  {'; '.join(detail)}" if detail else "")
        )
    if comparison.missing_tools:
        colour = "yellow" if comparison.allow_missing else "red"
        why = " (not served; --allow-missing)" if comparison.allow_missing else ""
        console.print(
            f"  [{colour}]tools missing from B{why}:[/] {', '.join(comparison.missing_tools)}"
        )
    flips = comparison.flips
    for test in flips.tests:
        if test.newly_failing or test.newly_passing:
            colour = "red" if test.significant else "white"
            console.print(
                f"  {test.scope:22} [{colour}]{test.newly_failing} pass -> fail, "
                f"{test.newly_passing} fail -> pass[/] (McNemar exact p {test.p_adjusted:.3g}"
                f"{', Holm' if test.scope != 'overall' else ''})"
            )
    for flip in flips.newly_failing:
        mark = "[red]critical[/] " if flip.critical else ""
        console.print(f"    {mark}{flip.tool} {flip.scenario}: {'; '.join(flip.failures)[:300]}")
    if flips.facts:
        tools = sorted({f.tool for f in flips.facts})
        console.print(
            f"  {len(flips.facts)} checked fact(s) changed in {', '.join(tools)} "
            "(compare.md / compare.json list each)"
        )
    _print_latency(console, comparison)
    changes = comparison.contract or []
    if changes:
        breaking = sum(c.breaking for c in changes)
        console.print(f"  contract: {len(changes)} change(s), {breaking} breaking")
    result = "regression" if comparison.exit_code else "no significant regression"
    console.print(f"[bold]{result}[/] of B against A (alpha {comparison.alpha})")


def _print_latency(console: Console, comparison: Any) -> None:
    """The latency section: one line per tool (verdict, medians, ratio, Holm p)."""
    from evals.read.paired_latency import ratio_text, verdict_text

    latency = comparison.latency
    if latency is None:
        return
    console.print(f"  {latency.title}")
    if latency.error:
        console.print(f"    [red]{latency.error}[/]")
    for t in latency.tools:
        colour = {"slower": "red", "faster": "green"}.get(t.verdict, "white")
        colour = colour if latency.judged else "white"
        figures = ""
        if t.a_ms is not None and t.b_ms is not None:
            p = "" if t.p_holm is None else f", Holm p {t.p_holm:.3g}"
            figures = f"  {t.a_ms:.1f} -> {t.b_ms:.1f} ms, {ratio_text(t)}{p}, n={t.n}" + (
                f" ({t.reason})" if t.reason and t.verdict != "not measured" else ""
            )
        console.print(f"    {t.tool:22} [{colour}]{verdict_text(latency, t)}[/]{figures}")


def add_compare_parser(sub: Any) -> None:
    """The `compare` subcommand of `sub`."""
    comp = sub.add_parser(
        "compare",
        parents=[output_parent("the report", "reports/compare/<UTC timestamp>")],
        help="compare backend B with backend A: paired tests per tool and metric, interleaved "
        "paired latency per tool, contract diff (exit 0 no significant regression, 1 regression, "
        "2 harness error)",
    )
    comp.add_argument(
        "--a", help="target A: a spec as for 'run --target', or a configuration name (hybrid, ...)"
    )
    comp.add_argument("--b", help="target B (as --a)")
    comp.add_argument(
        "--run-a",
        help="read record A instead of running a target: a run log (paired tests) or any other "
        "record (bench, fuzz, ...: figures side by side, not judged)",
    )
    comp.add_argument("--run-b", help="read record B (of the same kind as A)")
    comp.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level for the Holm-adjusted p-values (default: 0.05)",
    )
    comp.add_argument(
        "--metric",
        action="append",
        metavar="NAME",
        help="compare only this metric (repeatable; default: every metric both runs scored)",
    )
    comp.add_argument(
        "--overrides",
        default=None,
        metavar="K=V,...",
        help="Settings overrides added to in-process targets (e.g. generous timeouts)",
    )
    comp.add_argument(
        "--no-latest", action="store_true", help="do not mirror the report to <out>/../latest"
    )
    comp.add_argument(
        "--routing-cases",
        default="golden",
        help="routing section: cases for both backends' descriptions (as `routing --cases`; "
        "'none' skips it)",
    )
    comp.add_argument(
        "--latency-rounds",
        type=int,
        default=3,
        metavar="N",
        help="with --a/--b: rounds of each tool's distinct golden calls on A and B alternately "
        "(ABBA), after one warm-up per tool and target; the latency verdicts come from them "
        "(default: 3; 0: off, latency only reported from the runs)",
    )
    comp.add_argument(
        "--latency-min-ratio",
        type=float,
        default=None,
        metavar="X",
        help="practical threshold: B is slower on a tool only when its median B/A ratio is at "
        "least this, besides a significant test (default: MIN_RATIO of "
        "evals/read/paired_latency.py, 1.25)",
    )
    comp.add_argument(
        "--latency-min-ms",
        type=float,
        default=None,
        metavar="MS",
        help="practical threshold: ... and its median difference B - A at least this many ms "
        "(default: MIN_DIFF_MS of evals/read/paired_latency.py, 20)",
    )
    add_run_options(comp)
    comp.set_defaults(func=cmd_compare)
