"""The release gate: reads a run log (never the backend) and decides pass / fail.

It fails on an absolute floor (overall, per tool, per search mode), on a hybrid-vs-single-mode
margin that is too small, on a drop larger than the tolerance against the committed baseline
(per scenario and overall), on a scenario that passed in the baseline and fails now, and on
any failing scenario tagged ``critical``, and on the calibration of the published confidence
(``calibration:``: ECE and Brier ceilings, AUROC and accuracy-at-0.9 floors overall, per tool
and per case family; a scope without a confidence, or with too few answers, is skipped with the
reason). Exit codes: 0 pass, 1 gate failed, 2 harness error
(unreadable or aborted run log, invalid config or baseline). Writes ``gate.record.json`` (its
run record), ``gate.md`` / ``gate.html`` (the shared renderer) and ``junit.xml``. The baseline comparison
is :mod:`evals.read.diff` (the same pairing ``compare`` uses); metric directions come from the
registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree as ET

from typing_extensions import TypedDict

from evals import render
from evals.derive.case import FAMILY_PREFIX
from evals.read.baseline import Baseline, BaselineError
from evals.read.baseline import load as load_baseline
from evals.read.baseline import mismatch as baseline_mismatch
from evals.read.findings import Finding, fmt, to_junit
from evals.read.findings import Kind as FindingKind
from evals.read.gate_config import GateConfig, GateConfigError, load_config
from evals.read.gate_rules import (
    ablation_findings,
    baseline_findings,
    calibration_findings,
    critical_findings,
    failure_reason,
    family_findings,
    floor_findings,
    required_check_findings,
)
from evals.run import aggregates
from evals.run.runlog import DEFAULT_MODE, RunLog, RunLogError, ScenarioRecord
from evals.run.runlog import Status as ScenarioStatus
from evals.steps import BASELINE, GATE_CONFIG
from ocm_common.run_record import Clock, RecordHeader, header, record_body, write_record

EXIT_PASS, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2
DEFAULT_CONFIG = GATE_CONFIG
DEFAULT_BASELINE = BASELINE
ANY_TOOL = "*"


# ----------------------------------------------------------------------------- results


@dataclass
class GateReport:
    findings: list[Finding] = field(default_factory=list)
    scenarios: list[ScenarioRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if not f.passed]

    @property
    def exit_code(self) -> int:
        if self.error:
            return EXIT_HARNESS
        return EXIT_FAIL if self.failures else EXIT_PASS


# ----------------------------------------------------------------------------- evaluate


def unserved_tools(log: RunLog, config: GateConfig, baseline: Baseline | None) -> list[str]:
    """Tools the gate's rules or the baseline name that the backend does not publish."""
    served = set(log.summary.tools) or {r.tool for r in log.records}
    named = {t for t in config.floors.per_tool if t != ANY_TOOL} | set(log.summary.missing_tools)
    if baseline is not None:
        named |= {s.tool for s in baseline.scenarios.values()}
    return sorted(named - served)


def no_ablation_reason(log: RunLog) -> str | None:
    """Why the ablation rules cannot apply to this backend, or None when they can (measured,
    or measurable with --ablation: a missing measurement is then still a failure)."""
    if any(r.mode != DEFAULT_MODE for r in log.records):
        return None
    surface = log.surface or {}
    if surface and not any(
        "search_mode" in ((spec.get("inputSchema") or {}).get("properties") or {})
        for spec in surface.values()
    ):
        return (
            "the backend publishes no tool with a search_mode argument: the ablation rules "
            "compare the reference server's own retrieval modes, so they are skipped"
        )
    return None


def evaluate(
    log: RunLog, config: GateConfig, baseline: Baseline | None, *, allow_missing: bool = False
) -> GateReport:
    """Apply every rule to a run log (pure: no files, no backend). With ``allow_missing``, the
    rules cover the tools the backend serves and list the rest as not served."""
    report = GateReport()
    if log.summary.status != "complete":
        report.error = f"run log is {log.summary.status}: {log.summary.error or 'unknown error'}"
        return report
    records = log.by_mode(DEFAULT_MODE)
    if not records:
        report.error = "run log has no scenarios (wrong --golden path?)"
        return report
    refused = baseline_mismatch(baseline, log.summary.environment) if baseline else None
    if refused:
        report.error = refused
        return report
    report.scenarios = list(records)
    agg = aggregates.build(log.records)
    tools = sorted({r.tool for r in records})
    unserved = unserved_tools(log, config, baseline) if allow_missing else []
    if unserved:
        report.notes.append(
            f"not served by this backend (--allow-missing): {', '.join(unserved)}; "
            "their floors, critical scenarios and baseline entries are not judged"
        )
    no_ablation = no_ablation_reason(log)
    if no_ablation:
        report.notes.append(no_ablation)
    if all(any(t.startswith(FAMILY_PREFIX) for t in r.tags) for r in records):
        report.notes.append(
            "a run of case families only (derived cases, clinician questions): the golden "
            "floors and ablation rules do not apply; the per-family floors do"
        )
    else:
        report.findings += floor_findings(
            config, agg, tools, unserved=unserved, no_ablation=no_ablation
        )
        if not no_ablation:
            report.findings += ablation_findings(config, agg)
    report.findings += family_findings(config, records, report.notes)
    calibrated = calibration_findings(config, log, report.notes, unserved)
    if config.calibration is not None and config.calibration.required and not calibrated:
        report.error = (
            "judged on nothing: the gate requires its calibration rules, and none could be "
            "applied (" + "; ".join(n for n in report.notes if "calibration" in n) + ")"
        )
        return report
    report.findings += calibrated
    report.findings += critical_findings(config, records, baseline, unserved)
    report.findings += required_check_findings(config, records)
    if baseline is None:
        report.notes.append("no baseline file: drop and new-failure checks skipped")
        return report
    if baseline.environment and not log.summary.environment.get("index_fingerprint"):
        report.notes.append(
            "the backend does not say which model and index it used: compared with the baseline "
            "without checking they match"
        )
    report.findings += baseline_findings(config, records, baseline, report.notes)
    return report


# ----------------------------------------------------------------------------- outputs


class FindingRow(TypedDict):
    """A :class:`Finding` as the gate record stores it (its fields, in their order)."""

    name: str
    kind: FindingKind
    passed: bool
    message: str
    actual: float | None
    threshold: float | None
    delta: float | None


class GateScenarioRow(TypedDict):
    id: str
    tool: str
    status: ScenarioStatus
    critical: bool
    reason: str | None


@record_body("gate")
class GateBody(TypedDict):
    """The gate record's body: the verdict, every rule applied, every scenario's outcome."""

    result: Literal["pass", "fail", "error"]
    exit_code: int
    error: str | None
    failures: list[FindingRow]
    findings: list[FindingRow]
    scenarios: list[GateScenarioRow]
    notes: list[str]


RESULTS: dict[int, Literal["pass", "fail", "error"]] = {
    EXIT_PASS: "pass",
    EXIT_FAIL: "fail",
    EXIT_HARNESS: "error",
}


def finding_row(f: Finding) -> FindingRow:
    return FindingRow(
        name=f.name,
        kind=f.kind,
        passed=f.passed,
        message=f.message,
        actual=f.actual,
        threshold=f.threshold,
        delta=f.delta,
    )


def to_json(report: GateReport) -> GateBody:
    return {
        "result": RESULTS[report.exit_code],
        "exit_code": report.exit_code,
        "error": report.error,
        "failures": [finding_row(f) for f in report.failures],
        "findings": [finding_row(f) for f in report.findings],
        "scenarios": [
            {
                "id": r.id,
                "tool": r.tool,
                "status": r.status,
                "critical": r.critical,
                "reason": None if r.passed else failure_reason(r),
            }
            for r in report.scenarios
        ],
        "notes": report.notes,
    }


def document(report: GateReport, run_dir: Path | None = None) -> render.Document:
    """The gate's verdict, failures and thresholds as a report for the shared renderer."""
    code = report.exit_code
    head = {EXIT_PASS: "PASS", EXIT_FAIL: "FAIL", EXIT_HARNESS: "HARNESS ERROR"}[code]
    tone: render.Tone = "good" if code == EXIT_PASS else "bad"
    doc = render.Document(f"Eval gate: {head}")
    if run_dir is not None:
        doc.meta.append(f"run: {run_dir}")
    if report.error:
        doc.verdict = render.Paragraph(f"Harness error: {report.error}", "bad")
        return doc
    failing = [r for r in report.scenarios if not r.passed]
    doc.verdict = render.Paragraph(
        f"{len(report.scenarios) - len(failing)}/{len(report.scenarios)} scenarios passed; "
        f"{len(report.findings) - len(report.failures)}/{len(report.findings)} gate rules held.",
        tone,
    )
    if report.failures:
        doc.section(
            "What failed",
            render.Table(
                ["rule", "kind", "detail"],
                [[f.name, f.kind, f.message] for f in report.failures],
                tones=["bad"] * len(report.failures),
            ),
        )
    if failing:
        doc.section(
            "Failing scenarios",
            render.Table(
                ["scenario", "tool", "critical", "reason"],
                [[r.id, r.tool, "yes" if r.critical else "", failure_reason(r)] for r in failing],
            ),
        )
    limits = [f for f in report.findings if f.kind in ("floor", "ablation")]
    if limits:
        doc.section(
            "Thresholds",
            render.Table(
                ["rule", "actual", "threshold", "ok"],
                [
                    [f.name, fmt(f.actual), fmt(f.threshold), "yes" if f.passed else "NO"]
                    for f in limits
                ],
                tones=["neutral" if f.passed else "bad" for f in limits],
            ),
        )
    if report.notes:
        doc.section("Notes", render.Bullets(report.notes))
    return doc


def write_outputs(
    report: GateReport, out: Path, run_dir: Path | None = None, head: RecordHeader | None = None
) -> None:
    """``gate.record.json`` (the run record; its body is :func:`to_json`), gate.md / .html and
    junit.xml."""
    out.mkdir(parents=True, exist_ok=True)
    head = head or header("gate", Clock(), report.exit_code)
    write_record(out, head, to_json(report), files=["gate.md", "gate.html", "junit.xml"])
    render.write(document(report, run_dir), out, "gate")
    tree = to_junit(report.findings, report.scenarios, report.error)
    ET.indent(tree)
    tree.write(out / "junit.xml", encoding="utf-8", xml_declaration=True)


def run_gate(
    run_dir: Path,
    *,
    config_path: Path = DEFAULT_CONFIG,
    baseline_path: Path | None = DEFAULT_BASELINE,
    require_baseline: bool = False,
    out: Path | None = None,
    allow_missing: bool = False,
) -> GateReport:
    """Load everything, evaluate, write outputs; harness problems become ``report.error``.

    ``baseline_path`` None means "no baseline"; a path that does not exist is only accepted
    when ``require_baseline`` is False (then drop checks are skipped and the note says so).
    """
    clock = Clock()
    report: GateReport
    log: RunLog | None = None
    try:
        log = RunLog.read(run_dir)
        config = load_config(config_path)
        baseline = None
        if baseline_path is not None and (require_baseline or baseline_path.exists()):
            baseline = load_baseline(baseline_path)
        report = evaluate(log, config, baseline, allow_missing=allow_missing)
    except (RunLogError, GateConfigError, BaselineError) as exc:
        report = GateReport(error=str(exc))
    settings = {
        "run": str(run_dir),
        "config": str(config_path),
        "baseline": str(baseline_path) if baseline_path else None,
        "require_baseline": require_baseline,
        "allow_missing": allow_missing,
    }
    head = header(
        "gate",
        clock,
        report.exit_code,
        target=log.summary.target if log else None,
        settings=settings,
        machine=log.summary.environment.get("machine") if log else None,
    )
    # Even a harness error is reported where CI looks for it (the run directory by default).
    write_outputs(report, out or run_dir, run_dir, head)
    return report
