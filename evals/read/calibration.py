"""Calibration: does a backend's published confidence tell its right answers from its wrong ones?

Read from a run log only. An **answer** is a main-pass scenario record that is not a harness
error, does not expect a tool error (a ``tool_error`` check) and is not a tool error itself
(those state no confidence; they are counted, not scored). It is **right** when every check
passed, leaving aside the checks on the confidence itself (``confidence_range``: an off-topic
question answered "nothing found" with a confidence over 0.5 is a right answer stated too
confidently, which is what calibration measures, not a wrong one). Its **confidence** is the one
number in [0, 1] at the tool descriptor's ``confidence`` path (default ``confidence``;
evals/tool_descriptors.yaml). A tool none of whose answers carries one is reported "no
confidence published", never scored 0; answers of a publishing tool without one are counted.

Per scope (overall, each tool, each case family ``family:<name>``), over the answers with a
confidence:

- reliability diagram: equal-count bins (scikit-learn ``calibration_curve``,
  ``strategy="quantile"``), :data:`N_BINS` of them, fewer when there are fewer than
  :data:`MIN_PER_BIN` answers a bin; tied confidences never split, so a backend whose
  confidence takes few values gets fewer, larger bins (each bin's count is shown);
- ECE: the bins' mean |accuracy - mean confidence| weighted by their share of answers;
- Brier score: scikit-learn ``brier_score_loss``, the mean of (confidence - right)^2;
- both with seeded percentile-bootstrap 95 % intervals (answers resampled with replacement,
  ``ocm_common.bootstrap``; the ECE's bins re-cut on every resample);
- AUROC of the confidence for "right" (``roc_auc_score``): "not measured" when every answer
  is right (or every one wrong); 0.5 when the confidence is one constant value;
- accuracy among the answers at confidence >= 0.9, and how many there are;
- the answers stated at >= 0.8 (:data:`ACT_ON`, a confidence an assistant repeats without asking
  a person) that were wrong, named by scenario id, and the accuracy among those at >= 0.8;
- risk-coverage (selective prediction): keep the k most confident answers, k = 1..n, tied
  confidences taken in their expected (mean) accuracy; the area under the risk (1 - accuracy)
  curve, AURC, beside what a confidence that ranked at random (the error rate) and a perfect
  one would score, and the accuracy at a few coverages.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from evals.read import stats
from evals.read.calibration_answers import Answer, SetAside, answers, confidence_paths
from evals.run.runlog import RunLog
from ocm_common.bootstrap import percentile_interval

N_BINS = 10
MIN_PER_BIN = 5
HIGH = 0.9
# a confidence an assistant acts on: a wrong answer stated this high is the costly kind
ACT_ON = 0.8
# confidences computed by adding and subtracting steps (0.9 - 0.1 + 0.1) land a hair under
TOLERANCE = 1e-9
RESAMPLES = 2_000
SEED = 20261129
LEVEL = 0.95
COVERAGES = (0.1, 0.25, 0.5, 0.75, 1.0)
OVERALL = "overall"
NO_CONFIDENCE = "no confidence published"
ScopeKind = Literal["overall", "tool", "family"]


# ----------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Interval:
    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Bin:
    """One equal-count bin of the reliability diagram."""

    count: int
    confidence: float  # mean confidence of its answers
    accuracy: float  # share of them right


@dataclass(frozen=True)
class RiskCoverage:
    coverage: tuple[float, ...]  # k / n, k = 1..n
    accuracy: tuple[float, ...]  # accuracy of the k most confident answers (ties: expected)
    aurc: float  # mean of (1 - accuracy) over the curve
    aurc_random: float  # a confidence ranking at random: the error rate
    aurc_best: float  # every right answer ranked above every wrong one
    points: tuple[tuple[float, float], ...]  # (coverage, accuracy) at COVERAGES


@dataclass(frozen=True)
class ScopeCalibration:
    """Calibration within one scope; the figures are None when no confidence was published."""

    scope: str
    kind: ScopeKind
    tool: str | None
    answers: int  # every answer in the scope
    scored: int  # those with a confidence
    right: int  # right among the scored
    bins: tuple[Bin, ...] = ()
    ece: Interval | None = None
    brier: Interval | None = None
    auroc: float | None = None
    auroc_note: str = ""
    high_n: int = 0
    high_accuracy: float | None = None
    risk: RiskCoverage | None = None
    acted_n: int = 0  # answers at confidence >= ACT_ON
    acted_wrong: tuple[str, ...] = ()  # the wrong ones among them, by scenario id

    @property
    def acted_accuracy(self) -> float | None:
        """Accuracy among the answers at confidence >= ACT_ON (None: there are none)."""
        return 1 - len(self.acted_wrong) / self.acted_n if self.acted_n else None

    @property
    def published(self) -> bool:
        return self.scored > 0

    @property
    def without_confidence(self) -> int:
        return self.answers - self.scored

    @property
    def accuracy(self) -> float | None:
        return self.right / self.scored if self.scored else None

    def value(self, metric: str) -> float | None:
        """A registered calibration metric's value (evals/registry.py), None when not measured."""
        values = {
            "ece": self.ece.value if self.ece else None,
            "brier": self.brier.value if self.brier else None,
            "auroc": self.auroc,
            "accuracy_at_0.9": self.high_accuracy,
            "accuracy_at_0.8": self.acted_accuracy,
            "aurc": self.risk.aurc if self.risk else None,
        }
        return values[metric]


@dataclass(frozen=True)
class Calibration:
    """Every scope of one run: overall first, then tools, then case families."""

    scopes: tuple[ScopeCalibration, ...]
    set_aside: SetAside = field(default_factory=SetAside)
    notes: tuple[str, ...] = ()

    def scope(self, name: str, kind: ScopeKind | None = None) -> ScopeCalibration | None:
        return next((s for s in self.scopes if s.scope == name and kind in (None, s.kind)), None)

    def of_kind(self, kind: ScopeKind) -> list[ScopeCalibration]:
        return [s for s in self.scopes if s.kind == kind]

    @property
    def not_published(self) -> list[str]:
        """Tools with answers, none of which carries a confidence."""
        return [s.scope for s in self.of_kind("tool") if not s.published]


def n_bins_for(n: int, n_bins: int = N_BINS) -> int:
    """``n_bins``, fewer when there are fewer than :data:`MIN_PER_BIN` answers a bin."""
    return max(1, min(n_bins, n // MIN_PER_BIN))


def _quantiles(k: int) -> np.ndarray:
    # as calibration_curve cuts them (np.percentile of linspace(0, 1, k + 1) * 100)
    return np.linspace(0, 1, k + 1) * 100


def reliability(conf: np.ndarray, right: np.ndarray, k: int) -> tuple[Bin, ...]:
    """The non-empty equal-count bins: calibration_curve's accuracy and mean confidence, and
    each bin's count (counted by the same cut: np.percentile edges, np.searchsorted)."""
    prob_true, prob_pred = calibration_curve(
        right.astype(int), conf, n_bins=k, strategy="quantile", pos_label=1
    )
    edges = np.percentile(conf, _quantiles(k))
    counts = np.bincount(np.searchsorted(edges[1:-1], conf), minlength=k)
    counts = counts[counts > 0]
    if len(counts) != len(prob_true):  # pragma: no cover - scikit-learn changed its cut
        raise RuntimeError("calibration_curve's bins differ from the counted ones")
    return tuple(
        Bin(int(c), float(p), float(t))
        for c, p, t in zip(counts, prob_pred, prob_true, strict=True)
    )


def ece_of(bins: Sequence[Bin]) -> float:
    total = sum(b.count for b in bins)
    return sum(b.count * abs(b.accuracy - b.confidence) for b in bins) / total if total else 0.0


def ece_rows(conf: np.ndarray, right: np.ndarray, k: int) -> np.ndarray:
    """ECE of each row of (resamples, n) arrays, with the same equal-count cut as
    :func:`reliability` made row by row (vectorised for the bootstrap)."""
    one = np.ndim(conf) == 1
    conf = np.atleast_2d(np.asarray(conf, dtype=float))
    right = np.atleast_2d(np.asarray(right, dtype=float))
    rows, n = conf.shape
    inner = np.percentile(conf, _quantiles(k)[1:-1], axis=-1).T.reshape(rows, -1)  # (rows, k-1)
    # np.searchsorted(edges, x) with side="left" is the number of edges below x
    ids = (conf[:, :, None] > inner[:, None, :]).sum(-1) + k * np.arange(rows)[:, None]
    flat = ids.ravel()
    s_conf = np.bincount(flat, weights=conf.ravel(), minlength=rows * k).reshape(rows, k)
    s_right = np.bincount(flat, weights=right.ravel(), minlength=rows * k).reshape(rows, k)
    # sum over bins of count * |accuracy - confidence| = |sum(confidence) - sum(right)|
    result: np.ndarray = np.abs(s_conf - s_right).sum(-1) / n
    return result[0] if one else result


def _interval(
    samples: Sequence[np.ndarray], statistic: Callable[..., np.ndarray], value: float
) -> Interval:
    if samples[0].size < 2:
        return Interval(value)
    low, high = percentile_interval(
        samples, statistic, resamples=RESAMPLES, seed=SEED, confidence=LEVEL, paired=True
    )
    return Interval(value, low, high)


def auroc(conf: np.ndarray, right: np.ndarray) -> tuple[float | None, str]:
    """AUROC of the confidence for "right", or None and why it is not measured."""
    if right.all():
        return None, "not measured: all answers right"
    if not right.any():
        return None, "not measured: all answers wrong"
    value = float(roc_auc_score(right.astype(int), conf))
    if np.all(conf == conf[0]):
        return value, "one constant confidence: ranks nothing"
    return value, ""


def risk_coverage(conf: np.ndarray, right: np.ndarray) -> RiskCoverage:
    """Accuracy of the k most confident answers, k = 1..n; within a run of tied confidences
    the expected accuracy (any order of the ties equally likely)."""
    n = conf.size
    order = np.argsort(-conf, kind="stable")
    c, y = conf[order], right[order].astype(float)
    _, start, size = np.unique(-c, return_index=True, return_counts=True)
    group = np.repeat(np.arange(start.size), size)
    right_before = np.concatenate(([0.0], np.cumsum(y)))[start]
    group_accuracy = np.add.reduceat(y, start) / size
    kept = np.arange(1, n + 1)
    expected_right = right_before[group] + (kept - start[group]) * group_accuracy[group]
    accuracy = expected_right / kept
    best = np.minimum(kept, y.sum()) / kept
    points = tuple(
        (cov, float(accuracy[max(1, math.ceil(cov * n - TOLERANCE)) - 1])) for cov in COVERAGES
    )
    return RiskCoverage(
        tuple((kept / n).tolist()),
        tuple(accuracy.tolist()),
        float(np.mean(1 - accuracy)),
        float(1 - y.mean()),
        float(np.mean(1 - best)),
        points,
    )


def measure(
    scope: str,
    kind: ScopeKind,
    items: Sequence[Answer],
    *,
    tool: str | None = None,
    n_bins: int = N_BINS,
) -> ScopeCalibration:
    """Every figure of one scope (pure)."""
    scored = [a for a in items if a.confidence is not None]
    if not scored:
        return ScopeCalibration(scope, kind, tool, len(items), 0, 0)
    conf = np.array([a.confidence for a in scored], dtype=float)
    right = np.array([a.right for a in scored], dtype=bool)
    k = n_bins_for(conf.size, n_bins)
    bins = reliability(conf, right, k)
    ece = _interval(
        (conf, right.astype(float)), lambda c, r, axis=-1: ece_rows(c, r, k), ece_of(bins)
    )
    terms = (conf - right) ** 2
    low, high = stats.bootstrap_ci(terms.tolist())
    brier = Interval(float(brier_score_loss(right.astype(int), conf, pos_label=1)), low, high)
    area, note = auroc(conf, right)
    high_mask = conf >= HIGH - TOLERANCE
    acted = [a for a in scored if a.confidence is not None and a.confidence >= ACT_ON - TOLERANCE]
    return ScopeCalibration(
        scope,
        kind,
        tool,
        len(items),
        int(conf.size),
        int(right.sum()),
        bins,
        ece,
        brier,
        area,
        note,
        int(high_mask.sum()),
        float(right[high_mask].mean()) if high_mask.any() else None,
        risk_coverage(conf, right),
        len(acted),
        tuple(sorted(a.scenario for a in acted if not a.right)),
    )


def from_answers(
    items: Sequence[Answer],
    *,
    set_aside: SetAside | None = None,
    notes: Sequence[str] = (),
    n_bins: int = N_BINS,
) -> Calibration:
    """Overall, per tool and per case family (families only where the answers carry one)."""
    tools: dict[str, list[Answer]] = defaultdict(list)
    families: dict[str, list[Answer]] = defaultdict(list)
    for a in items:
        tools[a.tool].append(a)
        if a.family is not None:
            families[a.family].append(a)
    scopes = [measure(OVERALL, "overall", items, n_bins=n_bins)]
    scopes += [measure(t, "tool", tools[t], tool=t, n_bins=n_bins) for t in sorted(tools)]
    scopes += [
        measure(f, "family", families[f], tool=families[f][0].tool, n_bins=n_bins)
        for f in sorted(families)
    ]
    return Calibration(tuple(scopes), set_aside or SetAside(), tuple(notes))


def from_log(log: RunLog, *, n_bins: int = N_BINS) -> Calibration:
    """The calibration of a run log's main pass."""
    path_of, note = confidence_paths(log)
    items, set_aside = answers(log.records, path_of)
    return from_answers(items, set_aside=set_aside, notes=[note] if note else [], n_bins=n_bins)
