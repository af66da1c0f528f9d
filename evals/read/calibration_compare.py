"""`compare`'s calibration section: B's published confidence against A's, paired per answer.

Answers are paired by scenario id and version (:mod:`evals.read.calibration` says what an
answer, "right" and the confidence are); only answers that carry a confidence on both sides are
compared. Per scope (overall and each tool):

- Brier score of each side and the mean of the per-answer differences of the Brier terms
  (B - A), with its paired bootstrap interval and the paired randomization test of
  :func:`evals.read.stats.paired` (signs of the per-answer differences flipped at random,
  seeded); the p-values are Holm-corrected across the scopes tested;
- AUROC of each side and their difference, with a paired bootstrap interval (the same answers
  drawn for both sides; resamples where either side has only right or only wrong answers are
  left out and counted);
- ECE of each side (equal-count bins, as in the run report).

The verdict is on the Brier score, which rewards a confidence that is high on right answers and
low on wrong ones (it moves with accuracy too: a backend that is right less often at the same
confidence scores worse): "calibration worse" when the Holm-adjusted p is below ``alpha`` and
B's Brier is higher, "calibration better" when lower, else "no difference". A scope where
either side publishes no confidence is "not compared", with the reason. A worse calibration is a
regression (compare exits 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import numpy as np
from scipy import stats as scipy_stats

from evals.read import calibration, calibration_answers, stats
from evals.read.calibration_answers import Answer
from evals.run.runlog import RunLog

OVERALL = calibration.OVERALL
Verdict = Literal["calibration worse", "calibration better", "no difference", "not compared"]
WORSE: Verdict = "calibration worse"
BETTER: Verdict = "calibration better"
SAME: Verdict = "no difference"
NOT_COMPARED: Verdict = "not compared"


@dataclass(frozen=True)
class AurocDiff:
    a: float | None
    b: float | None
    diff: float | None = None
    low: float | None = None
    high: float | None = None
    note: str = ""


@dataclass(frozen=True)
class ScopeComparison:
    scope: str
    n: int  # answers paired with a confidence on both sides
    verdict: Verdict
    reason: str = ""  # why not compared
    brier: stats.PairedTest | None = None  # means are the Brier scores; diff = B - A
    p_holm: float | None = None
    auroc: AurocDiff | None = None
    ece_a: float | None = None
    ece_b: float | None = None


@dataclass
class CalibrationComparison:
    alpha: float
    scopes: list[ScopeComparison] = field(default_factory=list)

    @property
    def regressions(self) -> list[ScopeComparison]:
        return [s for s in self.scopes if s.verdict == WORSE]

    def scope(self, name: str) -> ScopeComparison | None:
        return next((s for s in self.scopes if s.scope == name), None)


def _auroc_rows(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """AUROC of each row (the Mann-Whitney U over n1 * n0, average ranks for ties: equal to
    ``roc_auc_score`` row by row, vectorised for the bootstrap); NaN where a row has one class."""
    ranks = scipy_stats.rankdata(scores, axis=-1)
    n1 = labels.sum(-1)
    n0 = labels.shape[-1] - n1
    u = (ranks * labels).sum(-1) - n1 * (n1 + 1) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        result: np.ndarray = np.where((n1 > 0) & (n0 > 0), u / (n1 * n0), np.nan)
    return result


def auroc_difference(
    conf_a: np.ndarray, right_a: np.ndarray, conf_b: np.ndarray, right_b: np.ndarray
) -> AurocDiff:
    """Both AUROCs and B - A with a paired percentile-bootstrap interval (seeded)."""
    a, note_a = calibration.auroc(conf_a, right_a)
    b, note_b = calibration.auroc(conf_b, right_b)
    if a is None or b is None:
        why = "; ".join(f"{side}: {note}" for side, note in (("A", note_a), ("B", note_b)) if note)
        return AurocDiff(a, b, note=why)
    rng = np.random.default_rng(calibration.SEED)
    draw = rng.integers(0, conf_a.size, size=(calibration.RESAMPLES, conf_a.size))
    diffs = _auroc_rows(conf_b[draw], right_b[draw].astype(float)) - _auroc_rows(
        conf_a[draw], right_a[draw].astype(float)
    )
    kept = diffs[~np.isnan(diffs)]
    note = ""
    if kept.size < calibration.RESAMPLES:
        note = f"{calibration.RESAMPLES - kept.size} of {calibration.RESAMPLES} resamples had one class"
    if kept.size < calibration.RESAMPLES // 2:
        return AurocDiff(a, b, b - a, note=note + ": no interval")
    tail = (1 - calibration.LEVEL) / 2 * 100
    low, high = np.percentile(kept, [tail, 100 - tail])
    return AurocDiff(a, b, b - a, float(low), float(high), note)


def _ece(items: Sequence[Answer]) -> float:
    conf = np.array([x.confidence for x in items], dtype=float)
    right = np.array([x.right for x in items], dtype=bool)
    k = calibration.n_bins_for(conf.size)
    return calibration.ece_of(calibration.reliability(conf, right, k))


def _scope(
    scope: str, pairs: Sequence[tuple[Answer, Answer]], unpublished: tuple[bool, bool]
) -> ScopeComparison:
    if unpublished[0] or unpublished[1]:
        sides = [n for n, missing in zip("AB", unpublished, strict=True) if missing]
        return ScopeComparison(
            scope,
            0,
            NOT_COMPARED,
            f"{' and '.join(sides)}: {calibration.NO_CONFIDENCE}",
        )
    if not pairs:
        return ScopeComparison(scope, 0, NOT_COMPARED, "no answer with a confidence on both sides")
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    conf_a = np.array([x.confidence for x in a], dtype=float)
    conf_b = np.array([x.confidence for x in b], dtype=float)
    right_a = np.array([x.right for x in a], dtype=bool)
    right_b = np.array([x.right for x in b], dtype=bool)
    test = stats.paired(((conf_a - right_a) ** 2).tolist(), ((conf_b - right_b) ** 2).tolist())
    return ScopeComparison(
        scope,
        len(pairs),
        SAME,
        brier=test,
        auroc=auroc_difference(conf_a, right_a, conf_b, right_b),
        ece_a=_ece(a),
        ece_b=_ece(b),
    )


def compare_answers(
    answers_a: Sequence[Answer], answers_b: Sequence[Answer], *, alpha: float = 0.05
) -> CalibrationComparison:
    """Overall and per tool (pure): paired answers, tests, Holm across the scopes tested."""
    by_key = {(x.scenario, x.version): x for x in answers_b}
    shared = [
        (x, by_key[(x.scenario, x.version)]) for x in answers_a if (x.scenario, x.version) in by_key
    ]
    tools = sorted({x.tool for x, _ in shared})

    def unpublished(tool: str | None) -> tuple[bool, bool]:
        chosen = [(x, y) for x, y in shared if tool in (None, x.tool)]
        if not chosen:
            return False, False
        return (
            all(x.confidence is None for x, _ in chosen),
            all(y.confidence is None for _, y in chosen),
        )

    raw: list[ScopeComparison] = []
    for tool in [None, *tools]:
        pairs = [
            (x, y)
            for x, y in shared
            if tool in (None, x.tool) and x.confidence is not None and y.confidence is not None
        ]
        raw.append(_scope(tool or OVERALL, pairs, unpublished(tool)))
    tested = [s for s in raw if s.brier is not None]
    adjusted = dict(
        zip(
            (s.scope for s in tested),
            stats.holm([s.brier.p_perm for s in tested if s.brier is not None]),
            strict=True,
        )
    )
    result = CalibrationComparison(alpha)
    for s in raw:
        if s.brier is None:
            result.scopes.append(s)
            continue
        p = adjusted[s.scope]
        verdict = SAME
        if p < alpha and s.brier.n and s.brier.diff != 0:
            verdict = WORSE if s.brier.diff > 0 else BETTER
        result.scopes.append(
            ScopeComparison(s.scope, s.n, verdict, s.reason, s.brier, p, s.auroc, s.ece_a, s.ece_b)
        )
    return result


def compare_logs(a: RunLog, b: RunLog, *, alpha: float = 0.05) -> CalibrationComparison:
    """Each run's answers read through its own descriptors, then :func:`compare_answers`."""
    path_a, _ = calibration_answers.confidence_paths(a)
    path_b, _ = calibration_answers.confidence_paths(b)
    answers_a, _ = calibration_answers.answers(a.records, path_a)
    answers_b, _ = calibration_answers.answers(b.records, path_b)
    return compare_answers(answers_a, answers_b, alpha=alpha)


class ScopeComparisonJson(TypedDict):
    scope: str
    n: int
    verdict: Verdict
    reason: str | None
    brier_a: float | None
    brier_b: float | None
    brier_diff: float | None
    brier_ci: list[float | None] | None
    p: float | None
    p_holm: float | None
    auroc_a: float | None
    auroc_b: float | None
    auroc_diff: float | None
    auroc_ci: list[float | None] | None
    auroc_note: str | None
    ece_a: float | None
    ece_b: float | None


class CalibrationComparisonJson(TypedDict):
    """The ``calibration`` part of compare.json."""

    verdict_on: str
    alpha: float
    scopes: list[ScopeComparisonJson]


def to_json(c: CalibrationComparison) -> CalibrationComparisonJson:
    f = stats.finite
    return {
        "verdict_on": "Brier score: paired randomization test on per-answer Brier terms, Holm "
        "across scopes",
        "alpha": c.alpha,
        "scopes": [
            {
                "scope": s.scope,
                "n": s.n,
                "verdict": s.verdict,
                "reason": s.reason or None,
                "brier_a": f(s.brier.mean_a) if s.brier else None,
                "brier_b": f(s.brier.mean_b) if s.brier else None,
                "brier_diff": f(s.brier.diff) if s.brier else None,
                "brier_ci": [f(s.brier.ci_low), f(s.brier.ci_high)] if s.brier else None,
                "p": f(s.brier.p_perm) if s.brier else None,
                "p_holm": f(s.p_holm),
                "auroc_a": s.auroc.a if s.auroc else None,
                "auroc_b": s.auroc.b if s.auroc else None,
                "auroc_diff": s.auroc.diff if s.auroc else None,
                "auroc_ci": [s.auroc.low, s.auroc.high] if s.auroc else None,
                "auroc_note": (s.auroc.note or None) if s.auroc else None,
                "ece_a": s.ece_a,
                "ece_b": s.ece_b,
            }
            for s in c.scopes
        ],
    }
