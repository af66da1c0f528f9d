"""Compare two backends from their run logs: B against A, per tool and overall.

Reads two run logs (never a backend): scenarios are paired by id and version
(:mod:`evals.read.diff`); for every scope (overall and each tool) and every metric both runs
scored (pass/fail and the retrieval metrics by default; ragas scores with ``metrics``) it runs the paired t-test and the
paired randomization test over per-query values (:mod:`evals.read.stats`), Holm-corrects
each test's p-values across the whole family of scopes and metrics, and gives Cohen's d_z and
a bootstrap interval of the mean difference. The verdict of a metric is the direction of its
change when the Holm-adjusted randomization p-value is below ``alpha``. Latency percentiles,
schema violations, errors and a contract diff of the two tool surfaces are reported beside.

Scenario by scenario (:mod:`evals.read.flips`): every scenario that went from pass to fail,
per tool, with the checks B failed; McNemar's exact test on the pass/fail pairs (overall, and
per tool Holm-corrected), which suits a tool's dozen scenarios; every checked fact that changed.

Latency (:mod:`evals.read.paired_latency`): when the two targets were measured interleaved
(:mod:`evals.run.interleaved`, ``compare --a --b``), each tool's paired calls are judged: B is
slower when the Holm-corrected one-sided Wilcoxon p is below ``alpha`` and the median ratio and
difference pass the practical threshold. Two run logs alone were not interleaved: the same
figures per tool, paired per scenario, are reported and never judged.

Calibration (:mod:`evals.read.calibration_compare`): per tool and overall, paired on the shared
answers that carry a confidence on both sides: Brier scores with the paired randomization test
on the per-answer Brier terms (Holm across the scopes), AUROC difference with a paired
bootstrap interval, ECE of each; "calibration worse" when B's Brier is significantly higher.

Exit code: 0 when B has no significant regression against A, 1 when it has one (a metric
significantly worse anywhere, more scenarios newly failing than McNemar's exact test allows,
any newly failing critical scenario, a tool A publishes missing from B, a tool B is
slower on by the interleaved latency rule, or a calibration significantly worse by the Brier
rule), 2 on a harness error (the interleaved measurement failing included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from evals import contract, registry
from evals.contract_change import Change
from evals.read import calibration_compare, diff, flips, paired_latency, stats
from evals.run.interleaved import InterleavedLatency
from evals.run.runlog import DEFAULT_MODE, RunLog, ScenarioRecord
from ocm_common.latency_records import LatencyRecord
from ocm_common.percentiles import percentile

EXIT_OK, EXIT_REGRESSION, EXIT_HARNESS = 0, 1, 2
OVERALL = "overall"
# The default family of tests: pass/fail and the retrieval metrics (ragas scores on request:
# the offline ones largely restate the retrieval metrics and would only widen the Holm family).
DEFAULT_FAMILIES = ("scenario", "retrieval")
Verdict = Literal["better", "worse", "no significant difference"]
BETTER: Verdict = "better"
WORSE: Verdict = "worse"
SAME: Verdict = "no significant difference"


class RunMeta(TypedDict, total=False):
    """What the report says of one run log (empty until :func:`compare_logs` reads it)."""

    target: str
    commit: str | None
    dirty: bool | None
    started_at: str
    scenarios: int | None
    status: str


@dataclass(frozen=True)
class MetricResult:
    scope: str
    metric: str
    test: stats.PairedTest
    p_t_holm: float
    p_perm_holm: float
    verdict: Verdict

    @property
    def label(self) -> str:
        return registry.label(self.metric)


@dataclass(frozen=True)
class Side:
    """Outcome counts and latency of one backend within one scope."""

    scenarios: int
    passed: int
    errors: int
    schema_violations: int
    p50_ms: float | None
    p95_ms: float | None
    latencies: tuple[float, ...] = ()


@dataclass(frozen=True)
class ScopeResult:
    scope: str
    verdict: Verdict
    better: tuple[str, ...]
    worse: tuple[str, ...]
    a: Side
    b: Side


@dataclass
class Comparison:
    label_a: str
    label_b: str
    alpha: float
    results: list[MetricResult] = field(default_factory=list)
    scopes: list[ScopeResult] = field(default_factory=list)
    contract: list[Change] | None = None
    notes: list[str] = field(default_factory=list)
    movers: list[diff.ScenarioDelta] = field(default_factory=list)
    # (profile, tool) -> A and B latency records, when both runs have latency records
    latency_records: list[tuple[str, str, LatencyRecord, LatencyRecord]] = field(
        default_factory=list
    )
    meta_a: RunMeta = field(default_factory=RunMeta)
    meta_b: RunMeta = field(default_factory=RunMeta)
    error: str | None = None
    # scenario by scenario: pass -> fail flips, McNemar's exact test, changed facts
    flips: flips.Flips = field(default_factory=flips.Flips)
    # a backend that serves only some tools: those missing from B are listed, not a regression
    allow_missing: bool = False
    # per tool: judged when measured interleaved, else reported from the run logs
    latency: paired_latency.LatencyComparison | None = None
    # the published confidence, paired per answer (Brier verdict per tool and overall)
    calibration: calibration_compare.CalibrationComparison | None = None

    @property
    def missing_tools(self) -> list[str]:
        return [c.before for c in self.contract or [] if c.what == "tool" and c.kind == "removed"]

    @property
    def regressions(self) -> list[MetricResult]:
        return [r for r in self.results if r.verdict == WORSE]

    @property
    def latency_regressions(self) -> list[paired_latency.ToolLatency]:
        return self.latency.regressions if self.latency else []

    @property
    def exit_code(self) -> int:
        if self.error or (self.latency and self.latency.error):
            return EXIT_HARNESS
        missing = self.missing_tools and not self.allow_missing
        regressed = (
            self.regressions
            or missing
            or self.flips.regression
            or self.latency_regressions
            or self.calibration_regressions
        )
        return EXIT_REGRESSION if regressed else EXIT_OK

    @property
    def calibration_regressions(self) -> list[calibration_compare.ScopeComparison]:
        return self.calibration.regressions if self.calibration else []

    def scope(self, name: str) -> ScopeResult | None:
        return next((s for s in self.scopes if s.scope == name), None)

    def result(self, scope: str, metric: str) -> MetricResult | None:
        metric = registry.canonical(metric)
        return next((r for r in self.results if r.scope == scope and r.metric == metric), None)


# ----------------------------------------------------------------------------- pieces


def _side(records: Sequence[ScenarioRecord]) -> Side:
    latencies = tuple(float(r.latency_ms) for r in records if r.latency_ms is not None)
    p50 = p95 = None
    if latencies and len(latencies) == len(records):
        p50, p95 = (float(v) for v in percentile(latencies, [50, 95]))
    return Side(
        scenarios=len(records),
        passed=sum(r.passed for r in records),
        errors=sum(
            r.status == "error" or any(c.check == "no_tool_error" for c in r.failures())
            for r in records
        ),
        schema_violations=sum(
            any(c.check == "schema_valid" for c in r.failures()) for r in records
        ),
        p50_ms=p50,
        p95_ms=p95,
        latencies=latencies,
    )


def _verdict(metric: str, test: stats.PairedTest, p_adjusted: float, alpha: float) -> Verdict:
    if p_adjusted >= alpha or test.n == 0:
        return SAME
    return BETTER if registry.improvement(metric, test.mean_a, test.mean_b) > 0 else WORSE


def _scope_verdict(
    results: Sequence[MetricResult],
) -> tuple[Verdict, tuple[str, ...], tuple[str, ...]]:
    better = tuple(r.metric for r in results if r.verdict == BETTER)
    worse = tuple(r.metric for r in results if r.verdict == WORSE)
    verdict: Verdict = WORSE if worse else BETTER if better else SAME
    return verdict, better, worse


def compare_logs(
    a: RunLog,
    b: RunLog,
    *,
    alpha: float = 0.05,
    metrics: Sequence[str] | None = None,
    label_a: str | None = None,
    label_b: str | None = None,
    allow_missing: bool = False,
    interleaved: InterleavedLatency | None = None,
    latency_error: str | None = None,
    min_ratio: float = paired_latency.MIN_RATIO,
    min_diff_ms: float = paired_latency.MIN_DIFF_MS,
) -> Comparison:
    """Everything the compare report shows, computed from two run logs (pure) and, when the
    two targets were measured interleaved, that measurement's record."""
    result = Comparison(label_a or a.summary.target, label_b or b.summary.target, alpha)
    result.allow_missing = allow_missing
    result.meta_a = _meta(a)
    result.meta_b = _meta(b)
    for name, log in (("A", a), ("B", b)):
        if log.summary.status != "complete":
            result.error = (
                f"run {name} is {log.summary.status}: {log.summary.error or 'unknown error'}"
            )
            return result
    records_a, records_b = a.by_mode(DEFAULT_MODE), b.by_mode(DEFAULT_MODE)
    changes = diff.pair(
        diff.table_from_records(records_a, with_latency=False),
        diff.table_from_records(records_b, with_latency=False),
    )
    if not changes.shared:
        result.error = "the two runs have no scenario in common (same --golden and versions?)"
        return result
    if changes.only_a:
        result.notes.append(f"only in A (not compared): {', '.join(changes.only_a)}")
    if changes.only_b:
        result.notes.append(f"only in B (not compared): {', '.join(changes.only_b)}")
    if changes.version_changed:
        result.notes.append(
            f"scenario version differs (not compared): {', '.join(changes.version_changed)}"
        )
    if metrics:
        wanted = [registry.canonical(m) for m in metrics]
    else:
        wanted = [m for m in changes.metrics() if registry.get(m).family in DEFAULT_FAMILIES]
    wanted = [m for m in wanted if registry.get(m).family != "latency"]
    scopes = [OVERALL, *changes.tools()]
    raw: list[tuple[str, str, stats.PairedTest]] = []
    for scope in scopes:
        tool = None if scope == OVERALL else scope
        for metric in wanted:
            pairs = changes.paired(metric, tool)
            if len(pairs):
                raw.append((scope, metric, stats.paired(pairs.a, pairs.b)))
    p_t = stats.holm([t.p_t for _, _, t in raw])
    p_perm = stats.holm([t.p_perm for _, _, t in raw])
    result.results = [
        MetricResult(scope, metric, test, pt, pp, _verdict(metric, test, pp, alpha))
        for (scope, metric, test), pt, pp in zip(raw, p_t, p_perm, strict=True)
    ]
    shared = set(changes.shared)
    result.flips = flips.compare_flips(records_a, records_b, shared, alpha)
    result.calibration = calibration_compare.compare_logs(a, b, alpha=alpha)
    for scope in scopes:
        chosen = [r for r in result.results if r.scope == scope]
        verdict, better, worse = _scope_verdict(chosen)

        def pick(records: Sequence[ScenarioRecord], scope: str = scope) -> list[ScenarioRecord]:
            return [r for r in records if r.id in shared and scope in (OVERALL, r.tool)]

        result.scopes.append(
            ScopeResult(
                scope, verdict, better, worse, _side(pick(records_a)), _side(pick(records_b))
            )
        )
    rule = {"alpha": alpha, "min_ratio": min_ratio, "min_diff_ms": min_diff_ms}
    if interleaved is not None:
        result.latency = paired_latency.from_interleaved(interleaved, **rule)
    else:
        result.latency = paired_latency.from_runs(records_a, records_b, shared, **rule)
        if latency_error:
            result.latency.error = f"interleaved latency measurement failed: {latency_error}"
    if a.latency_records and b.latency_records:
        by_key_b = {(r.profile, r.tool): r for r in b.latency_records}
        for rec in a.latency_records:
            key = (rec.profile, rec.tool)
            if key in by_key_b:
                result.latency_records.append((*key, rec, by_key_b[key]))
    if a.surface is not None and b.surface is not None:
        result.contract = contract.diff_surfaces(a.surface, b.surface)
    else:
        result.notes.append("contract diff skipped: a run log has no tools.json (older harness)")
    headline = "nDCG@10" if "nDCG@10" in wanted else (wanted[0] if wanted else None)
    if headline:
        moved = [d for d in changes.deltas(headline) if d.delta != 0]
        result.movers = sorted(moved, key=lambda d: (-abs(d.delta), d.scenario))[:15]
    return result


def _meta(log: RunLog) -> RunMeta:
    s = log.summary
    return {
        "target": s.target,
        "commit": s.git.get("commit"),
        "dirty": s.git.get("dirty"),
        "started_at": s.started_at,
        "scenarios": s.counts.get("scenarios"),
        "status": s.status,
    }
