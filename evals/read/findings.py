"""Findings: one rule applied to a run, whether it held and by how much it missed.

The gate produces them and writes them as JSON, JUnit XML and a rendered report; the rule
helpers here read metric directions from the registry (a ceiling for latency, a floor for
everything else) so no caller guesses from a metric's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree import ElementTree as ET

from evals import registry
from evals.run.runlog import ScenarioRecord

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


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}" if abs(value) >= 100 else f"{value:.4f}"


def threshold(name: str, metric: str, actual: float | None, bound: float) -> Finding:
    """``actual`` against a floor (or a ceiling, for metrics where lower is better)."""
    ceiling = not registry.higher_is_better(metric)
    shown = registry.label(metric)
    if actual is None:
        return Finding(
            name,
            "floor",
            False,
            f"{name}: {shown} not measured (threshold {fmt(bound)})",
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
        f"{name}: {shown} = {fmt(actual)}, needs {relation} {fmt(bound)} ({verdict})",
        actual,
        bound,
        delta,
    )


def drop(name: str, metric: str, before: float, after: float, allowed: float) -> Finding:
    """A change from ``before`` to ``after`` that may worsen by at most ``allowed``."""
    worsened = -registry.improvement(metric, before, after)
    ok = worsened <= allowed + 1e-12
    verdict = "ok" if ok else f"exceeds tolerance {allowed:.4f} by {worsened - allowed:.4f}"
    return Finding(
        name,
        "drop",
        ok,
        f"{name}: {fmt(before)} -> {fmt(after)} (change {after - before:+.4f}; {verdict})",
        after,
        before,
        after - before,
    )


def to_junit(
    findings: Sequence[Finding], scenarios: Sequence[ScenarioRecord], error: str | None = None
) -> ET.ElementTree:
    """One testcase per scenario and one per rule, for CI systems that read JUnit XML."""
    root = ET.Element("testsuites", name="evals")
    suite = ET.SubElement(root, "testsuite", name="evals.scenarios")
    failures = errors = 0
    for record in scenarios:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"evals.{record.tool}",
            name=record.id,
            time=f"{(record.latency_ms or 0.0) / 1000:.3f}",
        )
        reason = record.reason() or "failed"
        if record.status == "error":
            errors += 1
            ET.SubElement(case, "error", message=reason[:500]).text = reason
        elif record.status == "failed":
            failures += 1
            body = "\n".join(c.message or c.check for c in record.failures())
            ET.SubElement(case, "failure", message=reason[:500]).text = body
    suite.set("tests", str(len(scenarios)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    rules = ET.SubElement(root, "testsuite", name="evals.gate")
    for finding in findings:
        case = ET.SubElement(
            rules, "testcase", classname=f"evals.gate.{finding.kind}", name=finding.name
        )
        if not finding.passed:
            ET.SubElement(case, "failure", message=finding.message[:500]).text = finding.message
    if error:
        case = ET.SubElement(rules, "testcase", classname="evals.gate", name="harness")
        ET.SubElement(case, "error", message=error[:500]).text = error
    rules.set("tests", str(len(findings) + (1 if error else 0)))
    rules.set("failures", str(sum(not f.passed for f in findings)))
    rules.set("errors", "1" if error else "0")
    return ET.ElementTree(root)
