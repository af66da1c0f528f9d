"""The gate's rules, each a function from the configuration and the run's aggregates or records
to findings: floors, the hybrid-vs-single-mode margin, per-family floors, calibration limits,
critical scenarios, required checks, and drops against the baseline."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from evals import registry
from evals.read import calibration, diff
from evals.read.baseline import Baseline
from evals.read.baseline import table as baseline_table
from evals.read.families import family_stats
from evals.read.findings import Finding, drop, fmt, threshold
from evals.read.gate_config import CalibrationLimits, GateConfig
from evals.read.slo import targets_for
from evals.run.runlog import RunLog, ScenarioRecord

ANY_TOOL = "*"


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


# the confidence level each accuracy-above metric counts from
_LEVEL_OF = {"accuracy_at_0.9": calibration.HIGH, "accuracy_at_0.8": calibration.ACT_ON}
# wrong answers named in a finding, at most
NAMED_WRONG = 10


def _wrong_named(metric: str, scope: calibration.ScopeCalibration) -> str:
    """The wrong answers at >= 0.8, by scenario id, so a failed bound says which they were."""
    if metric != "accuracy_at_0.8" or not scope.acted_wrong:
        return ""
    shown = ", ".join(scope.acted_wrong[:NAMED_WRONG])
    more = len(scope.acted_wrong) - NAMED_WRONG
    return f"; wrong at >= {calibration.ACT_ON}: {shown}" + (
        f" and {more} more" if more > 0 else ""
    )


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
                else f"no answer at confidence >= {_LEVEL_OF[metric]}"
            )
            skipped[f"{registry.label(metric)} not measured"].append(f"{label} ({why})")
            continue
        finding = threshold(name, metric, value, bound)
        findings.append(
            Finding(
                finding.name,
                finding.kind,
                finding.passed,
                f"{finding.message}; {scope.scored} answers" + _wrong_named(metric, scope),
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
