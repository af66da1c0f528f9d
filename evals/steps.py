"""The eval harness's steps as functions with typed inputs and outputs, for the commands here
and for programs that compose them (`ocm bench` runs the golden eval, the gate and the report
through these, not through command lines).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from evals.console import log_console

if TYPE_CHECKING:
    from evals.read.gate import GateReport
    from evals.run.runlog import RunLog
    from evals.run.runner import RunOptions

EVALS_DIR = Path(__file__).resolve().parent
GATE_CONFIG = EVALS_DIR / "gate.yaml"
BASELINE = EVALS_DIR / "baseline.json"
GOLDEN = Path("golden")


@dataclass(frozen=True)
class RunRequest:
    """Which scenarios to run and how: `options` (concurrency, per-call timeout, ablation, checks
    switched off, ...), a selection by id or tag, tool renames (the `--tool-map` forms, parsed
    when the run starts) and whether each failed check is printed."""

    options: RunOptions
    golden: Path = GOLDEN
    only: tuple[str, ...] = ()
    tool_map: tuple[str, ...] = ()
    quiet: bool = False


def run_golden(
    spec: str, request: RunRequest, out: Path, console: Console | None = None
) -> RunLog | None:
    """Run the scenarios against the target `spec` into `out`; None (after saying why on the
    console) on a harness error."""
    from evals.run.events import EventBus
    from evals.run.reporters import ConsoleReporter
    from evals.run.runner import execute
    from evals.run.scenario import ScenarioLoadError, load_scenarios
    from evals.run.targets import TargetError, make_target
    from evals.run.tool_descriptors import ToolDescriptorError, golden_descriptors
    from evals.run.tool_map import ToolMapError, parse_tool_map
    from ocm_common.machine import one_line

    console = console or log_console()
    try:
        scenarios = load_scenarios(request.golden, select=request.only)
        descriptors = golden_descriptors(request.golden)
        target = make_target(spec, timeout_s=request.options.timeout_s)
        options = replace(request.options, tool_map=parse_tool_map(request.tool_map))
    except (ScenarioLoadError, ToolDescriptorError, TargetError, ToolMapError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return None
    if not scenarios:
        console.print(f"[red]error:[/] no scenarios found under {request.golden}")
        return None
    bus = EventBus()
    bus.subscribe(ConsoleReporter(console, show_failures=not request.quiet))
    try:
        log = asyncio.run(
            execute(
                target,
                scenarios,
                out,
                options=options,
                bus=bus,
                extra_config={"golden": str(request.golden)},
                descriptors=descriptors,
            )
        )
    except Exception as exc:
        console.print(f"[red]harness error:[/] {type(exc).__name__}: {exc}")
        console.print(f"run log (aborted) written to {out}")
        return None
    console.print(f"run log: {out}")
    env = log.summary.environment
    console.print(
        f"model {env.get('embedding_model', 'not reported')}, index "
        f"{str(env.get('index_fingerprint') or 'not reported')[:12]}, on {one_line(env.get('machine'))}"
    )
    return log


def gate(
    run: Path,
    *,
    config: Path = GATE_CONFIG,
    baseline: Path | None = BASELINE,
    require_baseline: bool = False,
    out: Path | None = None,
    allow_missing: bool = False,
) -> GateReport:
    """The gate's verdict on a run log (printed, and returned with its exit code)."""
    from evals.read.gate import run_gate

    report = run_gate(
        run,
        config_path=config,
        baseline_path=baseline,
        require_baseline=require_baseline,
        out=out,
        allow_missing=allow_missing,
    )
    console = log_console(stderr=False)
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
    return report


def gate_target(config: Path = GATE_CONFIG) -> str:
    """The target the release gate runs: `GATE_TARGET` when set, else the gate config's
    `target`."""
    from evals.read.gate_config import GateConfigError, load_config

    chosen = os.environ.get("GATE_TARGET") or load_config(config).target
    if not chosen:
        raise GateConfigError(f"{config}: no `target` (and GATE_TARGET is not set)")
    return chosen


def golden_eval_and_gate(target: str, out: Path) -> int:
    """The release check: the golden scenarios (with ablation, two calls at a time) against
    `target` into `out`, then the gate against the committed baseline; the gate's exit code, 2
    when the eval could not run."""
    from evals.run.runner import RunOptions

    request = RunRequest(options=RunOptions(concurrency=2, ablation=True))
    if run_golden(target, request, out) is None:
        return 2
    return gate(out, require_baseline=True).exit_code


def render_report(where: Path, kind: str | None = None) -> dict[str, Path]:
    """The report of any run record, by its kind (a run log's eval report, a bench's or
    regression's bench report, any other kind's record report); raises the readers' errors."""
    from evals.read import bench_report, record_report
    from evals.read.report import write_report
    from ocm_common.run_record import locate, read_record

    path = locate(where, kind)
    record = read_record(path)
    if record.kind in ("bench", "regression"):
        return bench_report.write(path.parent)
    if record.kind == "run":
        return {"markdown": write_report(path.parent)}
    return record_report.write(path, record)


def report_or_code(where: Path) -> int:
    """`render_report`, said on the console; 0, or 2 when the record cannot be read."""
    from evals.read import bench_report
    from evals.run.runlog import RunLogError
    from ocm_common.run_record import RunRecordError

    try:
        paths = render_report(where)
    except (RunRecordError, RunLogError, bench_report.BenchReportError) as exc:
        log_console().print(f"[red]error:[/] {exc}")
        return 2
    log_console(stderr=False).print(f"report: {paths['markdown']} (and .html)")
    return 0
