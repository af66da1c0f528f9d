"""The eval commands of `ocm` (`ocm {run,derive,families,gate,report,compare,baseline,fuzz,security,contract} ...`):
`add_commands` mounts them at the top of the program's tree (ocm_cli/program.py).

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evals.cli_options import out_dir, output_parent, target_parent
from evals.compare_command import add_compare_parser
from evals.console import log_console
from evals.run_options import add_run_options, run_request
from evals.steps import run_golden

if TYPE_CHECKING:
    pass

EXIT_OK, EXIT_FAIL, EXIT_HARNESS, EXIT_MISSING_TOOLS = 0, 1, 2, 3


def _default_out() -> Path:
    return out_dir(None, "reports/runs")


def cmd_run(args: argparse.Namespace) -> int:
    console = log_console()
    out = Path(args.out) if args.out else _default_out()
    log = run_golden(args.target, run_request(args, ablation=args.ablation), out, console)
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
    from rich.markup import escape

    from evals.derive.build import derive, record_of, write
    from evals.derive.corpus import Corpus
    from evals.derive.registry import skipped
    from evals.run.scenario import Scenario
    from ocm_common import clinician_questions
    from ocm_common.run_record import Clock, header, write_record

    clock = Clock()
    console = log_console()
    asked = list(args.family or ())
    try:
        questions = clinician_questions.cases(Path(args.questions)) if args.questions else {}
        if args.unfitted_questions:
            questions.update(
                clinician_questions.cases(Path(args.unfitted_questions), unfitted=True)
            )
        asked_of_file = clinician_questions.all_families() if questions else set()
        from_corpus = [f for f in asked if f not in asked_of_file]
        cases = (
            derive(
                Corpus(Path(args.corpus)) if args.corpus else Corpus(),
                families=from_corpus,
                per_family=args.per_family,
                seed=args.seed,
            )
            if from_corpus or not asked
            else {}
        )
        # every hand-written question is asked: --per-family samples the corpus's families only
        for family, found in questions.items():
            if not asked or family in asked:
                cases[family] = [Scenario.model_validate(c) for c in found]
    except (ValueError, OSError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_HARNESS
    written = write(cases, Path(args.out))
    total = sum(len(c) for c in cases.values())
    sizes = ", ".join(f"{name} {len(c)}" for name, c in cases.items())
    console.print(f"{total} derived cases in {args.out} ({sizes})")
    for name in cases:
        for reason, n in skipped(name).items():
            console.print(f"  {name}: skipped {n} source rows: {reason}")
    settings = {
        k: getattr(args, k)
        for k in ("family", "per_family", "seed", "corpus", "questions", "unfitted_questions")
    }
    head = header("derived", clock, EXIT_OK, target="corpus", settings=settings)
    write_record(Path(args.out), head, record_of(cases), [p.name for p in written])
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


def add_commands(sub: Any) -> None:
    """Every eval command as a subcommand of `sub` (the `ocm` program's), each setting `func`."""
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
    add_run_options(run)
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
    der.add_argument(
        "--questions",
        default=None,
        metavar="FILE",
        help="also ask a clinician-question file's questions (ocm_common/clinician_questions.py): "
        "families opa.clinician_policy and opa.clinician_search, every question; with --family "
        "naming only those, no corpus family is derived",
    )
    der.add_argument(
        "--unfitted-questions",
        default=None,
        metavar="FILE",
        help="also ask questions no confidence was fitted on, as families "
        "opa.clinician_policy_unfitted and opa.clinician_search_unfitted",
    )
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

    add_compare_parser(sub)

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
