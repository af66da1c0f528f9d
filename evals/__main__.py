"""Command line: ``python -m evals {run,derive,families,gate,report,compare,baseline,fuzz,security,contract} ...``.

Exit codes: ``run`` 0 when the run completed (scenario failures are the gate's business, so
``make gate`` always reaches the gate; ``--strict`` makes failures exit 1) and 2 on a harness
error; ``gate`` 0 pass, 1 gate failed, 2 harness error; ``compare`` 0 no significant
regression of B against A, 1 a significant regression, 2 harness error; ``report`` /
``baseline`` 0, or 2; ``security`` 0 no finding at error level, 1 findings, 2 harness error;
``contract`` 0 no breaking or suspicious change from A to B, 1 such changes, 2 harness
error or cut short at its ``--deadline``; ``fuzz`` 0 every check held, 1 failing findings, 2 harness error, 3 nothing was called;
``security`` exits 3 too when no family made a call and nothing was found. ``run`` exits 3 when
the target lacks golden tools (named on the console) unless ``--allow-missing``, and whenever
no scenario could run. The target and output options are shared (evals/cli_options.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from evals.cli_options import out_dir, output_parent, spec, target_parent
from evals.console import log_console
from evals.steps import RunRequest, run_golden

if TYPE_CHECKING:
    from evals.run.interleaved import InterleavedLatency
    from evals.run.runlog import RunLog

EXIT_OK, EXIT_FAIL, EXIT_HARNESS, EXIT_MISSING_TOOLS = 0, 1, 2, 3


def _default_out() -> Path:
    return out_dir(None, "reports/runs")


def _request(args: argparse.Namespace, *, ablation: bool) -> RunRequest:
    """The run request the `run` and `compare` options describe."""
    from evals.run.runner import RunOptions
    from evals.steps import RunRequest

    return RunRequest(
        options=RunOptions(
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            ablation=ablation,
            depth=args.depth,
            disabled_checks=frozenset(args.disable_check or ()),
            ragas=not args.no_ragas,
            llm=False if args.no_llm else None,
        ),
        golden=args.golden,
        only=tuple(args.only or ()),
        tool_map=tuple(getattr(args, "tool_map", None) or ()),
        quiet=args.quiet,
    )


def cmd_run(args: argparse.Namespace) -> int:
    console = log_console()
    out = Path(args.out) if args.out else _default_out()
    log = run_golden(args.target, _request(args, ablation=args.ablation), out, console)
    if log is None:
        return EXIT_HARNESS
    if args.print_dir:
        print(out)
    missing = log.summary.missing_tools
    if missing:
        from evals.run.tool_map import missing_tools_lines

        wanted = sorted({r.tool for r in log.records} | set(missing))
        not_run = log.summary.counts.get("not_run_missing_tool", 0)
        lines = missing_tools_lines(
            missing, log.summary.tools, wanted, not_run, allowed=args.allow_missing
        )
        for line in lines:
            console.print(f"[red]tools missing:[/] {line}", soft_wrap=True)
        if not args.allow_missing or not log.summary.counts.get("scenarios"):
            return EXIT_MISSING_TOOLS
    if args.strict and log.summary.counts.get("passed") != log.summary.counts.get("scenarios"):
        return EXIT_FAIL
    return EXIT_OK


def cmd_derive(args: argparse.Namespace) -> int:
    from evals.derive.build import derive, write
    from evals.derive.corpus import Corpus
    from evals.derive.registry import skipped
    from ocm_common.run_record import Clock, header, write_record

    clock = Clock()
    console = log_console()
    try:
        cases = derive(
            Corpus(Path(args.corpus)) if args.corpus else Corpus(),
            families=args.family or (),
            per_family=args.per_family,
            seed=args.seed,
        )
    except (ValueError, OSError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    written = write(cases, Path(args.out))
    total = sum(len(c) for c in cases.values())
    sizes = ", ".join(f"{name} {len(c)}" for name, c in cases.items())
    console.print(f"{total} derived cases in {args.out} ({sizes})")
    for name in cases:
        for reason, n in skipped(name).items():
            console.print(f"  {name}: skipped {n} source rows: {reason}")
    settings = {k: getattr(args, k) for k in ("family", "per_family", "seed", "corpus")}
    body = {
        "cases": {name: len(c) for name, c in cases.items()},
        "skipped": {name: skipped(name) for name in cases},
    }
    head = header("derived", clock, EXIT_OK, target="corpus", settings=settings)
    write_record(Path(args.out), head, body, [p.name for p in written])
    return EXIT_OK


def cmd_families(args: argparse.Namespace) -> int:
    from evals.read.families import before_after, family_stats, markdown
    from evals.run.runlog import RunLog, RunLogError

    try:
        after = family_stats(RunLog.read(Path(args.run)).records)
        before = family_stats(RunLog.read(Path(args.against)).records) if args.against else None
    except RunLogError as exc:
        log_console().print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    if not after:
        log_console().print(f"[red]error:[/] {args.run} has no derived cases")
        return EXIT_HARNESS
    print(before_after(before, after) if before is not None else markdown(after), end="")
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    from evals.steps import gate

    return gate(
        Path(args.run),
        config=Path(args.config),
        baseline=None if args.no_baseline else Path(args.baseline),
        require_baseline=args.require_baseline,
        out=Path(args.out) if args.out else None,
        allow_missing=args.allow_missing,
    ).exit_code


def cmd_report(args: argparse.Namespace) -> int:
    """The report of any run record, by its kind: a run log's eval report, a bench's (or
    ``make bench BASE=``'s) bench report, any other kind's record report."""
    from evals.read import bench_report
    from evals.run.runlog import RunLogError
    from evals.steps import render_report
    from ocm_common.run_record import RunRecordError

    where = args.run or args.bench
    if not where or (args.run and args.bench):
        log_console().print("[red]error:[/] give --run DIR (or a record file)")
        return EXIT_HARNESS
    try:
        paths = render_report(Path(where), args.kind)
    except (RunRecordError, RunLogError, bench_report.BenchReportError) as exc:
        log_console().print(f"[red]error:[/] {exc}")
        return EXIT_HARNESS
    log_console(stderr=False).print(f"report: {paths['markdown']} (and .html)")
    return EXIT_OK


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
                target_spec, _request(args, ablation=False), out / f"run-{name}", console
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


def cmd_baseline(args: argparse.Namespace) -> int:
    from evals.read import baseline
    from evals.run.runlog import RunLog, RunLogError

    console = log_console()
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


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """How scenarios are run: shared by ``run`` and ``compare`` (which runs two targets)."""
    parser.add_argument(
        "--golden",
        default="golden",
        type=Path,
        help="golden scenario directory or file (default: golden)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=4, help="concurrent tool calls (default: 4)"
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="per-call timeout in seconds (default: 30)"
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=10,
        help="result depth for retrieval metrics: n_results/top_k raised to this (default: 10)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ID_OR_TAG",
        help="run only scenarios with this id or tag (repeatable)",
    )
    parser.add_argument(
        "--disable-check",
        action="append",
        metavar="NAME",
        help="switch a check off by name, e.g. schema_valid (repeatable)",
    )
    parser.add_argument("--no-ragas", action="store_true", help="skip ragas metrics")
    parser.add_argument(
        "--no-llm",
        action="store_true",
        help="skip LLM-judged ragas metrics even when OPENAI_API_KEY is set",
    )
    parser.add_argument("--quiet", action="store_true", help="do not print each failed check")
    parser.add_argument(
        "--tool-map",
        action="append",
        metavar="GOLDEN=THEIRS|FILE",
        help="call a golden tool by the target's own name (pairs, comma-separated, repeatable, "
        "or a YAML/JSON {golden: theirs} file); the run log keeps the golden names",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="a backend that serves only some of the golden tools: their scenarios are not run, "
        "and run (exit 0, not 3), gate and compare judge the tools it serves and list the rest "
        "as not served",
    )


DESCRIPTION = "Run golden scenarios against an MCP backend, gate releases on the scores, report."


def build_parser(prog: str = "python -m evals") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def add_commands(sub: Any) -> None:
    """Every eval command as a subcommand of `sub` (this module's parser, or the `ocm` program's),
    each setting `func`."""
    run = sub.add_parser(
        "run",
        parents=[target_parent(), output_parent("the run log", "reports/runs/<UTC timestamp>")],
        help="run the golden scenarios against a target and write a run log",
        description="Run the golden scenarios against a target and write a run log.",
    )
    run.add_argument(
        "--ablation",
        action="store_true",
        help="also run the retrieval scenarios in hybrid, vector and keyword mode",
    )
    run.add_argument(
        "--strict", action="store_true", help="exit 1 when any scenario fails (default: 0)"
    )
    run.add_argument("--print-dir", action="store_true", help="print the run directory on stdout")
    _add_run_options(run)
    run.set_defaults(func=cmd_run)

    der = sub.add_parser(
        "derive",
        help="write evaluation cases derived from the corpus facts (one .jsonl per case family), "
        "to run with 'run --golden DIR'",
    )
    der.add_argument("--out", default="reports/derived/cases", help="case directory")
    der.add_argument(
        "--family", action="append", metavar="NAME", help="only this family (repeatable)"
    )
    der.add_argument(
        "--per-family",
        type=int,
        default=None,
        metavar="N",
        help="a seeded sample of N cases per family (default: every case)",
    )
    der.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    der.add_argument("--corpus", default=None, help="corpus folder (default: the committed one)")
    der.set_defaults(func=cmd_derive)

    fam = sub.add_parser(
        "families",
        help="accuracy per derived case family of a run log (with --against: before and after)",
    )
    fam.add_argument("--run", required=True, help="run log directory")
    fam.add_argument("--against", default=None, help="an earlier run log of the same cases")
    fam.set_defaults(func=cmd_families)

    gate = sub.add_parser(
        "gate", help="apply thresholds and the baseline to a run log (exit 0/1/2)"
    )
    gate.add_argument("--run", required=True, help="run log directory")
    gate.add_argument(
        "--allow-missing",
        action="store_true",
        help="judge only the tools the backend serves: the floors, critical scenarios and "
        "baseline entries of the others are listed as not served, not failed",
    )
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
        help="where to write gate.record.json, gate.md, junit.xml (default: the run directory)",
    )
    gate.set_defaults(func=cmd_gate)

    report = sub.add_parser(
        "report",
        help="the report of any run record by its kind: a run log's eval report (report.md + "
        ".html with plots), a bench's (bench.md + .html), any other kind's <kind>.report.md",
    )
    report.add_argument(
        "--run", help="a folder with a run record (*.record.json: run, bench, fuzz, ...) or one"
    )
    report.add_argument("--bench", help="the same as --run (kept for bench folders)")
    report.add_argument(
        "--kind", default=None, help="which record of a folder that holds several (run, gate)"
    )
    report.set_defaults(func=cmd_report)

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
    _add_run_options(comp)
    comp.set_defaults(func=cmd_compare)

    base = sub.add_parser("baseline", help="write the baseline file from a run log")
    base.add_argument("--run", required=True, help="run log directory")
    base.add_argument(
        "--out",
        default="evals/baseline.json",
        help="baseline file to write (default: evals/baseline.json)",
    )
    base.set_defaults(func=cmd_baseline)
    from evals.routing.cli import add_parsers as add_routing_parsers
    from evals.run import contract_live, fuzz_cli
    from evals.run.security.cli import add_parsers

    fuzz_cli.add_parser(sub, [target_parent(), output_parent("fuzz.json", "reports/runs/fuzz")])
    add_parsers(sub)
    contract_live.extend_parser(sub.choices["contract"])  # --deadline, exit codes, command
    add_routing_parsers(sub)
    # every subcommand's --help starts with what it does (its one-line help where it has no
    # longer description)
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, command in sub.choices.items():
        command.description = command.description or helps.get(name)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
