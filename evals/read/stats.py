"""Paired significance tests over per-query scores, bootstrap intervals and Holm correction.

Two backends answer the same queries, so every test is paired: the paired t-test
(``scipy.stats.ttest_rel``) and the paired randomization test (``scipy.stats.permutation_test``
with ``permutation_type="samples"``: the sign of each query's difference is flipped at random,
exact for small samples), with Cohen's d_z as the effect size and a bootstrap percentile
interval of the mean difference (`ocm_common.bootstrap`). On 0/1 outcomes (pass/fail) the randomization test is
McNemar's exact test. Seeds are fixed so a report is reproducible from its run logs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ocm_common.bootstrap import percentile_interval

RESAMPLES = 100_000  # randomization p-values resolve to ~1e-5, fine enough for Holm
SEED = 20261123


@dataclass(frozen=True)
class PairedTest:
    """B against A on ``n`` paired values; ``diff`` is mean(B - A) (not direction-adjusted)."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_t: float
    p_perm: float
    effect_size: float | None  # Cohen's d_z = mean(d) / sd(d); None when undefined


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _mean_diff(d: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(d, axis=axis)


def bootstrap_ci(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 5_000
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean (None when fewer than two values)."""
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return None, None
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    return percentile_interval(
        (data,), _mean_diff, resamples=resamples, seed=SEED, confidence=confidence
    )


def paired(a: Sequence[float], b: Sequence[float], confidence: float = 0.95) -> PairedTest:
    """Both paired tests, the effect size and the bootstrap interval of mean(B - A)."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    d = y - x
    n = int(d.size)
    diff = _mean(d)
    if n == 0 or np.all(d == 0):
        # No query moved: nothing to test (scipy would return NaN for a zero variance).
        zero = 0.0 if n else float("nan")
        return PairedTest(n, _mean(x), _mean(y), zero, zero, zero, 1.0, 1.0, 0.0 if n else None)
    if n < 2:
        # One pair cannot show a difference beyond chance (both sign flips are as extreme).
        return PairedTest(n, _mean(x), _mean(y), diff, None, None, 1.0, 1.0, None)
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        # Every query moved by the same amount: certain in direction, undefined in size.
        p_t, effect = 0.0, None
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p_t = float(stats.ttest_rel(y, x).pvalue)
        effect = diff / sd
    perm = stats.permutation_test(
        (d,),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=10_000,
        alternative="two-sided",
        rng=np.random.default_rng(SEED),
    )
    low, high = bootstrap_ci(d.tolist(), confidence)
    return PairedTest(
        n, _mean(x), _mean(y), diff, low, high, p_t, float(min(1.0, perm.pvalue)), effect
    )


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (same order as given); controls the family-wise
    error rate under any dependence between the tests."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        value = min(1.0, (m - rank) * pvalues[index])
        running = max(running, value)
        adjusted[index] = running
    return adjusted


def finite(value: float | None) -> float | None:
    """JSON-safe number: NaN and infinities become None."""
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return value
