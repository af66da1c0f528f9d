"""The release gate: reads a run log (never the backend) and decides pass / fail.

It fails on an absolute floor (overall, per tool, per search mode), on a hybrid-vs-single-mode
margin that is too small, on a drop larger than the tolerance against the committed baseline
(per scenario and overall), on a scenario that passed in the baseline and fails now, and on
any failing scenario tagged ``critical``. Exit codes: 0 pass, 1 gate failed, 2 harness error
(unreadable or aborted run log, invalid config or baseline). Writes ``gate.json``,
``gate.md`` and ``junit.xml``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree as ET

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals import aggregates
from evals.baseline import Baseline, BaselineError, scores_of
from evals.baseline import load as load_baseline
from evals.metrics import canonical, label
from evals.runlog import DEFAULT_MODE, RunLog, RunLogError, ScenarioRecord

EXIT_PASS, EXIT_FAIL, EXIT_HARNESS = 0, 1, 2
DEFAULT_CONFIG = Path(__file__).with_name("gate.yaml")
DEFAULT_BASELINE = Path(__file__).with_name("baseline.json")
ANY_TOOL = "*"


# ----------------------------------------------------------------------------- config


class Floors(BaseModel):
    """Absolute thresholds. For metrics ending in ``_ms`` (latency) the value is a ceiling."""

    model_config = ConfigDict(extra="forbid")

    overall: dict[str, float] = Field(default_factory=dict)
    per_tool: dict[str, dict[str, float]] = Field(default_factory=dict)
    per_mode: dict[str, dict[str, float]] = Field(default_factory=dict)


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
        table = {canonical(k): v for k, v in getattr(self, scope).items()}
        return table.get(metric, table.get("default", 0.0))


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    floors: Floors = Field(default_factory=Floors)
    ablation: list[AblationRule] = Field(default_factory=list)
    tolerance: Tolerance = Field(default_factory=Tolerance)
    critical_tag: str = "critical"
    fail_on_new_failures: bool = True
    # checks that must have run and passed on every scenario, baseline or not
    required_checks: list[str] = Field(default_factory=list)


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


Kind = Literal["floor", "ablation", "drop", "new_failure", "critical", "required_check"]


@dataclass(frozen=True)
class Finding:
    """One gate rule applied: what, whether it held, and by how much it missed."""

    name: str
    kind: Kind
    passed: bool
    message: str
    actual: float | None = None
    threshold: float | None = None
    delta: float | None = None


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


def lower_is_better(metric: str) -> bool:
    return metric.endswith("_ms")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}" if abs(value) >= 100 else f"{value:.4f}"


def _threshold(name: str, metric: str, actual: float | None, bound: float) -> Finding:
    ceiling = lower_is_better(metric)
    shown = label(metric)
    if actual is None:
        return Finding(
            name,
            "floor",
            False,
            f"{name}: {shown} not measured (threshold {_fmt(bound)})",
            None,
            bound,
        )
    ok = actual <= bound if ceiling else actual >= bound
    delta = actual - bound
    relation = "<=" if ceiling else ">="
    verdict = "ok" if ok else f"missed by {abs(delta):.4f}"
    return Finding(
        name,
        "floor",
        ok,
        f"{name}: {shown} = {_fmt(actual)}, needs {relation} {_fmt(bound)} ({verdict})",
        actual,
        bound,
        delta,
    )


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
    config: GateConfig, agg: Mapping[str, Any], tools: Sequence[str]
) -> list[Finding]:
    findings: list[Finding] = []
    overall = _merged(agg, "overall")
    for metric, bound in config.floors.overall.items():
        metric = canonical(metric)
        findings.append(
            _threshold(f"overall {label(metric)}", metric, _lookup(overall, metric), bound)
        )
    defaults = config.floors.per_tool.get(ANY_TOOL, {})
    for tool in tools:
        per_tool = _merged(agg, "per_tool", tool)
        explicit = config.floors.per_tool.get(tool, {})
        for metric, bound in {**defaults, **explicit}.items():
            metric = canonical(metric)
            actual = _lookup(per_tool, metric)
            if actual is None and metric not in {canonical(m) for m in explicit}:
                continue  # a default that does not apply to this tool (e.g. no retrieval queries)
            findings.append(_threshold(f"{tool} {label(metric)}", metric, actual, bound))
    for tool in config.floors.per_tool:
        if tool != ANY_TOOL and tool not in tools:
            findings.append(
                Finding(f"{tool} floors", "floor", False, f"{tool}: no scenarios ran for this tool")
            )
    per_mode = agg.get("retrieval", {}).get("per_mode", {})
    for mode, metrics in config.floors.per_mode.items():
        values = per_mode.get(mode, {})
        for metric, bound in metrics.items():
            metric = canonical(metric)
            name = f"mode {mode} {label(metric)}"
            finding = _threshold(name, metric, _lookup(values, metric), bound)
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
        metric = canonical(rule.metric)
        name = f"ablation {rule.mode} vs {'/'.join(rule.over)} {label(metric)}"
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
                f"{name}: {rule.mode} {_fmt(mine)} vs best single mode {best_mode} {_fmt(best)}: "
                f"margin {margin:+.4f}, needs >= {rule.min_margin:+.4f} ({verdict})",
                margin,
                rule.min_margin,
                margin - rule.min_margin,
            )
        )
    return findings


def critical_findings(
    config: GateConfig, records: Sequence[ScenarioRecord], baseline: Baseline | None
) -> list[Finding]:
    findings: list[Finding] = []
    ran = {r.id for r in records}
    for record in records:
        if config.critical_tag not in record.tags:
            continue
        name = f"critical {record.id}"
        if record.passed:
            findings.append(Finding(name, "critical", True, f"{name}: passed"))
        else:
            findings.append(
                Finding(
                    name, "critical", False, f"{name}: {record.status}: {failure_reason(record)}"
                )
            )
    if baseline is not None:
        for scenario_id, base in baseline.scenarios.items():
            if base.critical and scenario_id not in ran:
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
    findings: list[Finding] = []
    current: dict[str, dict[str, float]] = {}
    previous: dict[str, dict[str, float]] = {}
    for record in records:
        base = baseline.scenarios.get(record.id)
        if base is None:
            notes.append(f"{record.id}: new scenario (not in baseline)")
            continue
        if base.version != record.version:
            notes.append(f"{record.id}: version {base.version} -> {record.version}, not compared")
            continue
        if config.fail_on_new_failures and base.passed and not record.passed:
            findings.append(
                Finding(
                    f"new failure {record.id}",
                    "new_failure",
                    False,
                    f"{record.id}: passed in the baseline, now {record.status}: {failure_reason(record)}",
                )
            )
        now = scores_of(record.metrics, record.ragas)
        current[record.id], previous[record.id] = now, dict(base.scores)
        for metric, before in base.scores.items():
            if metric not in now:
                continue
            findings.append(
                _drop(
                    f"{record.id} {label(metric)}",
                    metric,
                    before,
                    now[metric],
                    config.tolerance.allowed("per_scenario", metric),
                )
            )
    missing = sorted(set(baseline.scenarios) - {r.id for r in records})
    if missing:
        notes.append(f"in baseline but not run: {', '.join(missing)}")
    metrics = sorted({m for scores in previous.values() for m in scores})
    for metric in metrics:
        shared = [sid for sid in previous if metric in previous[sid] and metric in current[sid]]
        if not shared:
            continue
        before = sum(previous[sid][metric] for sid in shared) / len(shared)
        after = sum(current[sid][metric] for sid in shared) / len(shared)
        findings.append(
            _drop(
                f"overall {label(metric)} vs baseline",
                metric,
                before,
                after,
                config.tolerance.allowed("overall", metric),
            )
        )
    return findings


def _drop(name: str, metric: str, before: float, after: float, allowed: float) -> Finding:
    drop = (after - before) if lower_is_better(metric) else (before - after)
    ok = drop <= allowed + 1e-12
    verdict = "ok" if ok else f"exceeds tolerance {allowed:.4f} by {drop - allowed:.4f}"
    return Finding(
        name,
        "drop",
        ok,
        f"{name}: {_fmt(before)} -> {_fmt(after)} (change {after - before:+.4f}; {verdict})",
        after,
        before,
        after - before,
    )


def failure_reason(record: ScenarioRecord) -> str:
    return record.reason() or "failed"


# ----------------------------------------------------------------------------- evaluate


def evaluate(log: RunLog, config: GateConfig, baseline: Baseline | None) -> GateReport:
    """Apply every rule to a run log (pure: no files, no backend)."""
    report = GateReport()
    if log.summary.status != "complete":
        report.error = f"run log is {log.summary.status}: {log.summary.error or 'unknown error'}"
        return report
    records = log.by_mode(DEFAULT_MODE)
    if not records:
        report.error = "run log has no scenarios (wrong --golden path?)"
        return report
    report.scenarios = list(records)
    agg = aggregates.build(log.records)
    tools = sorted({r.tool for r in records})
    report.findings += floor_findings(config, agg, tools)
    report.findings += ablation_findings(config, agg)
    report.findings += critical_findings(config, records, baseline)
    report.findings += required_check_findings(config, records)
    if baseline is None:
        report.notes.append("no baseline file: drop and new-failure checks skipped")
    else:
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


def to_markdown(report: GateReport, run_dir: Path | None = None) -> str:
    code = report.exit_code
    head = {EXIT_PASS: "PASS", EXIT_FAIL: "FAIL", EXIT_HARNESS: "HARNESS ERROR"}[code]
    lines = [f"# Eval gate: {head}", ""]
    if run_dir is not None:
        lines += [f"Run: `{run_dir}`", ""]
    if report.error:
        lines += [f"**Harness error:** {report.error}", ""]
        return "\n".join(lines) + "\n"
    failing_scenarios = [r for r in report.scenarios if not r.passed]
    lines.append(
        f"{len(report.scenarios) - len(failing_scenarios)}/{len(report.scenarios)} scenarios passed; "
        f"{len(report.findings) - len(report.failures)}/{len(report.findings)} gate rules held."
    )
    lines.append("")
    if report.failures:
        lines += ["## What failed", "", "| rule | kind | detail |", "| --- | --- | --- |"]
        lines += [f"| {f.name} | {f.kind} | {_md(f.message)} |" for f in report.failures]
        lines.append("")
    if failing_scenarios:
        lines += [
            "## Failing scenarios",
            "",
            "| scenario | tool | critical | reason |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {r.id} | {r.tool} | {'yes' if r.critical else ''} | {_md(failure_reason(r))} |"
            for r in failing_scenarios
        ]
        lines.append("")
    thresholds = [f for f in report.findings if f.kind in ("floor", "ablation")]
    if thresholds:
        lines += [
            "## Thresholds",
            "",
            "| rule | actual | threshold | ok |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {f.name} | {_fmt(f.actual)} | {_fmt(f.threshold)} | {'yes' if f.passed else '**no**'} |"
            for f in thresholds
        ]
        lines.append("")
    if report.notes:
        lines += ["## Notes", ""] + [f"- {_md(n)}" for n in report.notes] + [""]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_junit(report: GateReport) -> ET.ElementTree:
    """One testcase per scenario and one per gate rule."""
    root = ET.Element("testsuites", name="evals")
    scenarios = ET.SubElement(root, "testsuite", name="evals.scenarios")
    failures = errors = 0
    for record in report.scenarios:
        case = ET.SubElement(
            scenarios,
            "testcase",
            classname=f"evals.{record.tool}",
            name=record.id,
            time=f"{(record.latency_ms or 0.0) / 1000:.3f}",
        )
        if record.status == "error":
            errors += 1
            ET.SubElement(
                case, "error", message=failure_reason(record)[:500]
            ).text = failure_reason(record)
        elif record.status == "failed":
            failures += 1
            body = "\n".join(c.message or c.check for c in record.failures())
            ET.SubElement(case, "failure", message=failure_reason(record)[:500]).text = body
    scenarios.set("tests", str(len(report.scenarios)))
    scenarios.set("failures", str(failures))
    scenarios.set("errors", str(errors))
    rules = ET.SubElement(root, "testsuite", name="evals.gate")
    for finding in report.findings:
        case = ET.SubElement(
            rules, "testcase", classname=f"evals.gate.{finding.kind}", name=finding.name
        )
        if not finding.passed:
            ET.SubElement(case, "failure", message=finding.message[:500]).text = finding.message
    if report.error:
        case = ET.SubElement(rules, "testcase", classname="evals.gate", name="harness")
        ET.SubElement(case, "error", message=report.error[:500]).text = report.error
    rules.set("tests", str(len(report.findings) + (1 if report.error else 0)))
    rules.set("failures", str(len(report.failures)))
    rules.set("errors", "1" if report.error else "0")
    return ET.ElementTree(root)


def write_outputs(report: GateReport, out: Path, run_dir: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gate.json").write_text(json.dumps(to_json(report), indent=2) + "\n", encoding="utf-8")
    (out / "gate.md").write_text(to_markdown(report, run_dir), encoding="utf-8")
    tree = to_junit(report)
    ET.indent(tree)
    tree.write(out / "junit.xml", encoding="utf-8", xml_declaration=True)


def run_gate(
    run_dir: Path,
    *,
    config_path: Path = DEFAULT_CONFIG,
    baseline_path: Path | None = DEFAULT_BASELINE,
    require_baseline: bool = False,
    out: Path | None = None,
) -> GateReport:
    """Load everything, evaluate, write outputs; harness problems become ``report.error``.

    ``baseline_path`` None means "no baseline"; a path that does not exist is only accepted
    when ``require_baseline`` is False (then drop checks are skipped and the note says so).
    """
    report: GateReport
    try:
        log = RunLog.read(run_dir)
        config = load_config(config_path)
        baseline = None
        if baseline_path is not None and (require_baseline or baseline_path.exists()):
            baseline = load_baseline(baseline_path)
        report = evaluate(log, config, baseline)
    except (RunLogError, GateConfigError, BaselineError) as exc:
        report = GateReport(error=str(exc))
    # Even a harness error is reported where CI looks for it (the run directory by default).
    write_outputs(report, out or run_dir, run_dir)
    return report
