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

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree as ET

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals import registry, render
from evals.derive.case import DERIVED_TAG
from evals.read import calibration, diff
from evals.read.baseline import Baseline, BaselineError
from evals.read.baseline import load as load_baseline
from evals.read.baseline import mismatch as baseline_mismatch
from evals.read.baseline import table as baseline_table
from evals.read.families import family_stats
from evals.read.findings import Finding, drop, fmt, threshold, to_junit
from evals.read.slo import targets_for
from evals.run import aggregates
from evals.run.runlog import DEFAULT_MODE, RunLog, RunLogError, ScenarioRecord
from evals.steps import BASELINE, GATE_CONFIG
from ocm_common.run_record import Clock, RecordHeader, header, write_record

EXIT_PASS, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2
DEFAULT_CONFIG = GATE_CONFIG
DEFAULT_BASELINE = BASELINE
ANY_TOOL = "*"


# ----------------------------------------------------------------------------- config


class Floors(BaseModel):
    """Absolute thresholds; for metrics where lower is better (latency) the value is a ceiling."""

    model_config = ConfigDict(extra="forbid")

    overall: dict[str, float] = Field(default_factory=dict)
    per_tool: dict[str, dict[str, float]] = Field(default_factory=dict)
    per_mode: dict[str, dict[str, float]] = Field(default_factory=dict)
    # derived case families (tag family:<name>): pass_rate is a floor, wrong_product (answers
    # about another product than the one asked, not flagged) a ceiling on the count
    per_family: dict[str, dict[Literal["pass_rate", "wrong_product"], float]] = Field(
        default_factory=dict
    )


class AblationRule(BaseModel):
    """``mode`` must beat the best of ``over`` on ``metric`` by at least ``min_margin``."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "hybrid"
    metric: str = "nDCG@10"
    over: list[str] = Field(default_factory=lambda: ["vector", "keyword"])
    min_margin: float = 0.0


class Tolerance(BaseModel):
    """Largest allowed drop against the baseline, by metric (``default`` for the rest)."""

    model_config = ConfigDict(extra="forbid")

    overall: dict[str, float] = Field(default_factory=lambda: {"default": 0.01})
    per_scenario: dict[str, float] = Field(default_factory=lambda: {"default": 0.05})

    def allowed(self, scope: Literal["overall", "per_scenario"], metric: str) -> float:
        table = {registry.canonical(k): v for k, v in getattr(self, scope).items()}
        return table.get(metric, table.get("default", 0.0))


class CalibrationLimits(BaseModel):
    """Bounds on one scope's calibration (evals/read/calibration.py); unset: not judged."""

    model_config = ConfigDict(extra="forbid")

    ece_max: float | None = Field(default=None, ge=0, le=1)
    brier_max: float | None = Field(default=None, ge=0, le=1)
    auroc_min: float | None = Field(default=None, ge=0, le=1)
    accuracy_at_0_9_min: float | None = Field(default=None, ge=0, le=1)

    def bounds(self) -> dict[str, float]:
        """Registered metric name -> bound (the registry says floor or ceiling)."""
        named = {
            "ece": self.ece_max,
            "brier": self.brier_max,
            "auroc": self.auroc_min,
            "accuracy_at_0.9": self.accuracy_at_0_9_min,
        }
        return {metric: bound for metric, bound in named.items() if bound is not None}

    def over(self, defaults: CalibrationLimits) -> CalibrationLimits:
        """These limits with ``defaults`` filling the ones left unset."""
        return CalibrationLimits.model_validate(
            {**defaults.model_dump(exclude_none=True), **self.model_dump(exclude_none=True)}
        )


class CalibrationRules(BaseModel):
    """Calibration limits overall, per tool (``"*"``: every tool that publishes a confidence)
    and per case family; a scope with fewer than ``min_answers`` answers carrying a confidence
    is skipped (a handful of answers says little about a calibration)."""

    model_config = ConfigDict(extra="forbid")

    min_answers: int = Field(10, ge=1)
    overall: CalibrationLimits = Field(default_factory=CalibrationLimits)
    per_tool: dict[str, CalibrationLimits] = Field(default_factory=dict)
    per_family: dict[str, CalibrationLimits] = Field(default_factory=dict)


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    floors: Floors = Field(default_factory=Floors)
    ablation: list[AblationRule] = Field(default_factory=list)
    tolerance: Tolerance = Field(default_factory=Tolerance)
    critical_tag: str = "critical"
    fail_on_new_failures: bool = True
    # a team gating its own backend on its own baseline: a critical scenario that failed in that
    # baseline too is a known miss (listed), not a gate failure; a newly failing one still fails
    critical_known_in_baseline: bool = False
    # checks that must have run and passed on every scenario, baseline or not
    required_checks: list[str] = Field(default_factory=list)
    # the published confidence's calibration; None: not judged
    calibration: CalibrationRules | None = None
    # the target the release gate runs (make gate, the bench's eval, make baseline): the one
    # place it is written (the Makefile and `ocm bench` read it; GATE_TARGET overrides it)
    target: str | None = None


class GateConfigError(RuntimeError):
    """A gate config that cannot be used (a harness error)."""


def load_config(path: Path) -> GateConfig:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return GateConfig.model_validate(raw)
    except FileNotFoundError:
        raise GateConfigError(f"{path}: gate config not found") from None
    except (yaml.YAMLError, ValidationError) as exc:
        raise GateConfigError(f"{path}: invalid gate config: {exc}") from None


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


def latency_ceilings(tool: str) -> dict[str, float]:
    """The spec's p50/p95 ceilings for one tool, from the one SLO file (gate.yaml may override)."""
    p50, p95 = targets_for(tool)
    return {k: v for k, v in (("p50_ms", p50), ("p95_ms", p95)) if v is not None}


def _lookup(table: Mapping[str, Any], metric: str) -> float | None:
    value = table.get(metric)
    return float(value) if isinstance(value, int | float) else None


def _merged(agg: Mapping[str, Any], scope: str, key: str | None = None) -> dict[str, float]:
    """Every metric available at a scope (retrieval, scenario pass rate, ragas, latency)."""
    merged: dict[str, float] = {}
    for family in ("scenarios", "retrieval", "ragas", "latency"):
        section = agg.get(family, {}).get(scope, {})
        values = section if key is None else section.get(key, {})
        merged.update({k: float(v) for k, v in values.items() if isinstance(v, int | float)})
    return merged


# ----------------------------------------------------------------------------- rules


def floor_findings(
    config: GateConfig,
    agg: Mapping[str, Any],
    tools: Sequence[str],
    *,
    unserved: Sequence[str] = (),
    no_ablation: str | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    overall = _merged(agg, "overall")
    for metric, bound in config.floors.overall.items():
        metric = registry.canonical(metric)
        findings.append(
            threshold(f"overall {registry.label(metric)}", metric, _lookup(overall, metric), bound)
        )
    defaults = config.floors.per_tool.get(ANY_TOOL, {})
    for tool in tools:
        per_tool = _merged(agg, "per_tool", tool)
        explicit = config.floors.per_tool.get(tool, {})
        # The spec's latency ceilings come from the one SLO file (load/slo.yaml).
        for metric, bound in {**latency_ceilings(tool), **defaults, **explicit}.items():
            metric = registry.canonical(metric)
            actual = _lookup(per_tool, metric)
            if actual is None and metric not in {registry.canonical(m) for m in explicit}:
                continue  # a default that does not apply to this tool (e.g. no retrieval queries)
            findings.append(threshold(f"{tool} {registry.label(metric)}", metric, actual, bound))
    for tool in config.floors.per_tool:
        if tool != ANY_TOOL and tool not in tools and tool not in unserved:
            findings.append(
                Finding(f"{tool} floors", "floor", False, f"{tool}: no scenarios ran for this tool")
            )
    per_mode = agg.get("retrieval", {}).get("per_mode", {})
    if no_ablation:
        return findings
    for mode, metrics in config.floors.per_mode.items():
        values = per_mode.get(mode, {})
        for metric, bound in metrics.items():
            metric = registry.canonical(metric)
            name = f"mode {mode} {registry.label(metric)}"
            finding = threshold(name, metric, _lookup(values, metric), bound)
            if finding.actual is None:
                finding = Finding(
                    name, "floor", False, f"{name}: not measured (run with --ablation)", None, bound
                )
            findings.append(finding)
    return findings


def ablation_findings(config: GateConfig, agg: Mapping[str, Any]) -> list[Finding]:
    per_mode = agg.get("retrieval", {}).get("per_mode", {})
    findings: list[Finding] = []
    for rule in config.ablation:
        metric = registry.canonical(rule.metric)
        name = f"ablation {rule.mode} vs {'/'.join(rule.over)} {registry.label(metric)}"
        mine = _lookup(per_mode.get(rule.mode, {}), metric)
        others = {m: _lookup(per_mode.get(m, {}), metric) for m in rule.over}
        if mine is None or any(v is None for v in others.values()):
            findings.append(
                Finding(name, "ablation", False, f"{name}: not measured (run with --ablation)")
            )
            continue
        best_mode, best = max(
            ((m, v) for m, v in others.items() if v is not None), key=lambda mv: mv[1]
        )
        margin = mine - best
        ok = margin >= rule.min_margin
        verdict = "ok" if ok else f"short by {rule.min_margin - margin:.4f}"
        findings.append(
            Finding(
                name,
                "ablation",
                ok,
                f"{name}: {rule.mode} {fmt(mine)} vs best single mode {best_mode} {fmt(best)}: "
                f"margin {margin:+.4f}, needs >= {rule.min_margin:+.4f} ({verdict})",
                margin,
                rule.min_margin,
                margin - rule.min_margin,
            )
        )
    return findings


def family_findings(
    config: GateConfig, records: Sequence[ScenarioRecord], notes: list[str]
) -> list[Finding]:
    """Per-family floors, for the families this run has (a golden run has none)."""
    stats = family_stats(records)
    findings: list[Finding] = []
    for name, limits in config.floors.per_family.items():
        entry = stats.get(name)
        if entry is None:
            if stats:
                notes.append(f"family {name}: floors configured but no case of it ran")
            continue
        if "pass_rate" in limits:
            floor = limits["pass_rate"]
            ok = entry.accuracy >= floor
            findings.append(
                Finding(
                    f"family {name} pass_rate",
                    "floor",
                    ok,
                    f"family {name}: {entry.passed}/{entry.cases} right = {entry.accuracy:.4f} "
                    f"{'>=' if ok else '<'} floor {floor}",
                    entry.accuracy,
                    floor,
                )
            )
        if "wrong_product" in limits:
            ceiling = limits["wrong_product"]
            ok = entry.wrong_product <= ceiling
            findings.append(
                Finding(
                    f"family {name} wrong_product",
                    "floor",
                    ok,
                    f"family {name}: {entry.wrong_product} answers about another product than "
                    f"the one asked, unflagged ({'<=' if ok else '>'} {ceiling:g})",
                    float(entry.wrong_product),
                    ceiling,
                )
            )
    return findings


def _calibration_scope(
    label: str,
    scope: calibration.ScopeCalibration,
    limits: CalibrationLimits,
    min_answers: int,
    skipped: dict[str, list[str]],
) -> list[Finding]:
    bounds = limits.bounds()
    if not bounds:
        return []
    if not scope.published:
        skipped[calibration.NO_CONFIDENCE].append(label)
        return []
    if scope.scored < min_answers:
        skipped[f"fewer than {min_answers} answers with a confidence"].append(
            f"{label} ({scope.scored})"
        )
        return []
    findings: list[Finding] = []
    for metric, bound in bounds.items():
        name = f"calibration {label} {registry.label(metric)}"
        value = scope.value(metric)
        if value is None:
            why = (
                scope.auroc_note.removeprefix("not measured: ")
                if metric == "auroc"
                else f"no answer at confidence >= {calibration.HIGH}"
            )
            skipped[f"{registry.label(metric)} not measured"].append(f"{label} ({why})")
            continue
        finding = threshold(name, metric, value, bound)
        findings.append(
            Finding(
                finding.name,
                finding.kind,
                finding.passed,
                f"{finding.message}; {scope.scored} answers",
                finding.actual,
                finding.threshold,
                finding.delta,
            )
        )
    return findings


def calibration_findings(
    config: GateConfig, log: RunLog, notes: list[str], unserved: Sequence[str] = ()
) -> list[Finding]:
    """The calibration limits, for the scopes this run has; every scope skipped is named once,
    with the reason, in the notes."""
    rules = config.calibration
    if rules is None:
        return []
    cal = calibration.from_log(log)
    skipped: dict[str, list[str]] = defaultdict(list)
    findings: list[Finding] = []
    overall = cal.scope(calibration.OVERALL, "overall")
    if overall is not None:
        findings += _calibration_scope(
            "overall", overall, rules.overall, rules.min_answers, skipped
        )
    defaults = rules.per_tool.get(ANY_TOOL, CalibrationLimits())
    tools = {s.scope: s for s in cal.of_kind("tool")}
    for tool, scope in tools.items():
        limits = rules.per_tool.get(tool, CalibrationLimits()).over(defaults)
        findings += _calibration_scope(tool, scope, limits, rules.min_answers, skipped)
    absent = [t for t in rules.per_tool if t != ANY_TOOL and t not in tools and t not in unserved]
    families = {s.scope: s for s in cal.of_kind("family")}
    for family, limits in rules.per_family.items():
        if family in families:
            findings += _calibration_scope(
                f"family {family}", families[family], limits, rules.min_answers, skipped
            )
        elif families:
            absent.append(f"family {family}")
    for reason, scopes in skipped.items():
        if scopes:
            notes.append(f"calibration rules skipped ({reason}): {', '.join(scopes)}")
    if absent:
        notes.append(
            f"calibration rules configured for scopes not in this run: {', '.join(absent)}"
        )
    return findings


def critical_findings(
    config: GateConfig,
    records: Sequence[ScenarioRecord],
    baseline: Baseline | None,
    unserved: Sequence[str] = (),
) -> list[Finding]:
    findings: list[Finding] = []
    ran = {r.id for r in records}
    for record in records:
        if config.critical_tag not in record.tags:
            continue
        name = f"critical {record.id}"
        base = baseline.scenarios.get(record.id) if baseline is not None else None
        known = config.critical_known_in_baseline and base is not None and not base.passed
        if record.passed:
            findings.append(Finding(name, "critical", True, f"{name}: passed"))
        elif known:
            reason = failure_reason(record)
            findings.append(
                Finding(name, "critical", True, f"{name}: failed in the baseline too: {reason}")
            )
        else:
            findings.append(
                Finding(
                    name, "critical", False, f"{name}: {record.status}: {failure_reason(record)}"
                )
            )
    if baseline is not None:
        for scenario_id, base in baseline.scenarios.items():
            if base.critical and scenario_id not in ran and base.tool not in unserved:
                findings.append(
                    Finding(
                        f"critical {scenario_id}",
                        "critical",
                        False,
                        f"critical {scenario_id}: in the baseline but missing from this run",
                    )
                )
    return findings


def required_check_findings(config: GateConfig, records: Sequence[ScenarioRecord]) -> list[Finding]:
    """Each required check ran (its evidence is in the run log) and held on every scenario."""
    findings: list[Finding] = []
    for name in config.required_checks:
        outcomes = [(r.id, c) for r in records for c in r.checks if c.check == name]
        failed = [(sid, c) for sid, c in outcomes if not c.passed]
        label = f"required check {name}"
        if not outcomes:
            findings.append(
                Finding(label, "required_check", False, f"{label}: never ran in this run log")
            )
        elif failed:
            shown = "; ".join(f"{sid}: {c.message}" for sid, c in failed[:5])
            findings.append(
                Finding(
                    label,
                    "required_check",
                    False,
                    f"{label}: failed on {len(failed)} of {len(outcomes)} scenarios: {shown}",
                )
            )
        else:
            findings.append(
                Finding(
                    label, "required_check", True, f"{label}: held on {len(outcomes)} scenarios"
                )
            )
    return findings


def baseline_findings(
    config: GateConfig, records: Sequence[ScenarioRecord], baseline: Baseline, notes: list[str]
) -> list[Finding]:
    """Drops against the baseline, per scenario and in the mean, and new failures."""
    changes = diff.pair(
        baseline_table(baseline), diff.table_from_records(records, with_latency=False)
    )
    by_id = {r.id: r for r in records}
    notes += [f"{sid}: new scenario (not in baseline)" for sid in changes.only_b]
    notes += [
        f"{sid}: version {changes.a[sid].version} -> {changes.b[sid].version}, not compared"
        for sid in changes.version_changed
    ]
    if changes.only_a:
        notes.append(f"in baseline but not run: {', '.join(sorted(changes.only_a))}")
    findings: list[Finding] = []
    if config.fail_on_new_failures:
        for sid in changes.new_failures():
            record = by_id[sid]
            findings.append(
                Finding(
                    f"new failure {sid}",
                    "new_failure",
                    False,
                    f"{sid}: passed in the baseline, now {record.status}: {failure_reason(record)}",
                )
            )
    # Pass/fail is the new-failure rule's business; the drops are about scores.
    metrics = [m for m in changes.metrics() if m != diff.PASS]
    for metric in metrics:
        for change in changes.deltas(metric):
            findings.append(
                drop(
                    f"{change.scenario} {registry.label(metric)}",
                    metric,
                    change.a,
                    change.b,
                    config.tolerance.allowed("per_scenario", metric),
                )
            )
    for metric in metrics:
        paired = changes.paired(metric)
        if paired.mean_a is None or paired.mean_b is None:
            continue
        findings.append(
            drop(
                f"overall {registry.label(metric)} vs baseline",
                metric,
                paired.mean_a,
                paired.mean_b,
                config.tolerance.allowed("overall", metric),
            )
        )
    return findings


def failure_reason(record: ScenarioRecord) -> str:
    return record.reason() or "failed"


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
    if all(DERIVED_TAG in r.tags for r in records):
        report.notes.append(
            "a run of derived cases only: the golden floors and ablation rules do not apply; "
            "the per-family floors do"
        )
    else:
        report.findings += floor_findings(
            config, agg, tools, unserved=unserved, no_ablation=no_ablation
        )
        if not no_ablation:
            report.findings += ablation_findings(config, agg)
    report.findings += family_findings(config, records, report.notes)
    report.findings += calibration_findings(config, log, report.notes, unserved)
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


def to_json(report: GateReport) -> dict[str, Any]:
    return {
        "result": {EXIT_PASS: "pass", EXIT_FAIL: "fail", EXIT_HARNESS: "error"}[report.exit_code],
        "exit_code": report.exit_code,
        "error": report.error,
        "failures": [asdict(f) for f in report.failures],
        "findings": [asdict(f) for f in report.findings],
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
