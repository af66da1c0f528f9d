"""compare.json: the shapes of the comparison as written to disk, and :func:`to_json`, which
writes a :class:`evals.read.compare.Comparison` in them (keys in the order the file shows)."""

from __future__ import annotations

from typing import Required, TypedDict

from evals import contract, registry
from evals.contract_change import ChangeJson
from evals.read import calibration_compare, flips, paired_latency_json, stats
from evals.read.compare import (
    EXIT_HARNESS,
    EXIT_OK,
    EXIT_REGRESSION,
    Comparison,
    RunMeta,
    ScopeResult,
    Verdict,
)
from ocm_common.json_types import JsonObject


class RunJson(RunMeta, total=False):
    label: Required[str]


class PairedTestsJson(TypedDict):
    paired: list[str]
    correction: str
    verdict_on: str
    family_size: int
    resamples: int


class ScopeJson(TypedDict):
    """One scope's verdict and each side's counts and latency (``_a`` then ``_b``)."""

    verdict: Verdict
    better: list[str]
    worse: list[str]
    scenarios_a: int
    passed_a: int
    errors_a: int
    schema_violations_a: int
    p50_ms_a: float | None
    p95_ms_a: float | None
    scenarios_b: int
    passed_b: int
    errors_b: int
    schema_violations_b: int
    p50_ms_b: float | None
    p95_ms_b: float | None


class MetricJson(TypedDict):
    scope: str
    metric: str
    label: str
    higher_is_better: bool
    n: int
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci_low: float | None
    ci_high: float | None
    effect_size: float | None
    p_t: float | None
    p_perm: float | None
    p_t_holm: float | None
    p_perm_holm: float | None
    verdict: Verdict


class LatencyRecordsJson(TypedDict):
    profile: str
    tool: str
    a: JsonObject  # LatencyRecord.model_dump(): the record's own JSON form
    b: JsonObject


class ChangedScenarioJson(TypedDict):
    scenario: str
    tool: str
    metric: str
    a: float
    b: float


class ComparisonJson(TypedDict):
    """compare.json: the comparison as :func:`to_json` writes it (keys in this order)."""

    a: RunJson
    b: RunJson
    alpha: float
    exit_code: int
    result: str
    error: str | None
    tests: PairedTestsJson
    scopes: dict[str, ScopeJson]
    metrics: list[MetricJson]
    contract: list[ChangeJson] | None
    latency_records: list[LatencyRecordsJson]
    largest_changes: list[ChangedScenarioJson]
    flips: flips.FlipsJson
    latency: paired_latency_json.LatencyJson | None
    calibration: calibration_compare.CalibrationComparisonJson | None
    notes: list[str]


def _scope_json(s: ScopeResult) -> ScopeJson:
    f = stats.finite
    return {
        "verdict": s.verdict,
        "better": list(s.better),
        "worse": list(s.worse),
        "scenarios_a": s.a.scenarios,
        "passed_a": s.a.passed,
        "errors_a": s.a.errors,
        "schema_violations_a": s.a.schema_violations,
        "p50_ms_a": f(s.a.p50_ms),
        "p95_ms_a": f(s.a.p95_ms),
        "scenarios_b": s.b.scenarios,
        "passed_b": s.b.passed,
        "errors_b": s.b.errors,
        "schema_violations_b": s.b.schema_violations,
        "p50_ms_b": f(s.b.p50_ms),
        "p95_ms_b": f(s.b.p95_ms),
    }


def to_json(c: Comparison) -> ComparisonJson:
    f = stats.finite
    return {
        "a": {"label": c.label_a, **c.meta_a},
        "b": {"label": c.label_b, **c.meta_b},
        "alpha": c.alpha,
        "exit_code": c.exit_code,
        "result": {
            EXIT_OK: "no significant regression",
            EXIT_REGRESSION: "regression",
            EXIT_HARNESS: "error",
        }[c.exit_code],
        "error": c.error,
        "tests": {
            "paired": [
                "t-test (scipy.stats.ttest_rel)",
                "randomization (scipy.stats.permutation_test)",
            ],
            "correction": "Holm across all scopes and metrics",
            "verdict_on": "Holm-adjusted randomization p-value",
            "family_size": len(c.results),
            "resamples": stats.RESAMPLES,
        },
        "scopes": {s.scope: _scope_json(s) for s in c.scopes},
        "metrics": [
            {
                "scope": r.scope,
                "metric": r.metric,
                "label": r.label,
                "higher_is_better": registry.higher_is_better(r.metric),
                "n": r.test.n,
                "mean_a": f(r.test.mean_a),
                "mean_b": f(r.test.mean_b),
                "diff": f(r.test.diff),
                "ci_low": f(r.test.ci_low),
                "ci_high": f(r.test.ci_high),
                "effect_size": f(r.test.effect_size),
                "p_t": f(r.test.p_t),
                "p_perm": f(r.test.p_perm),
                "p_t_holm": f(r.p_t_holm),
                "p_perm_holm": f(r.p_perm_holm),
                "verdict": r.verdict,
            }
            for r in c.results
        ],
        "contract": None if c.contract is None else contract.to_json(c.contract),
        "latency_records": [
            {"profile": p, "tool": t, "a": ra.model_dump(), "b": rb.model_dump()}
            for p, t, ra, rb in c.latency_records
        ],
        "largest_changes": [
            {"scenario": d.scenario, "tool": d.tool, "metric": d.metric, "a": d.a, "b": d.b}
            for d in c.movers
        ],
        "flips": flips.to_json(c.flips),
        "latency": None if c.latency is None else paired_latency_json.to_json(c.latency),
        "calibration": None
        if c.calibration is None
        else calibration_compare.to_json(c.calibration),
        "notes": c.notes,
    }
