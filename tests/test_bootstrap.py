"""ocm_common.bootstrap: the resampling scheme its docstring states, pairs kept together, seeds."""

from __future__ import annotations

import numpy as np
import pytest

from ocm_common.bootstrap import percentile_interval
from ocm_common.percentiles import percentile


def _p95_ratio(base: np.ndarray, scaled: np.ndarray, axis: int = -1) -> np.ndarray:
    return percentile(scaled, 95, axis) / percentile(base, 95, axis)


def test_the_interval_is_the_stated_scheme_computed_by_hand() -> None:
    """n indices with replacement per resample from default_rng(seed), one (resamples, n) draw
    for paired samples, then the 2.5th and 97.5th percentiles of the statistic."""
    rng = np.random.default_rng(5)
    base, scaled = 10 * rng.lognormal(0, 0.4, 60), 14 * rng.lognormal(0, 0.4, 60)
    idx = np.random.default_rng(42).integers(0, 60, size=(3000, 60))
    by_hand = percentile(_p95_ratio(base[idx], scaled[idx]), [2.5, 97.5])
    low, high = percentile_interval(
        (base, scaled), _p95_ratio, resamples=3000, seed=42, paired=True
    )
    assert (low, high) == pytest.approx(tuple(by_hand), rel=1e-12)


def test_paired_samples_are_resampled_together() -> None:
    """Every call twice as slow on the scaled side: each paired resample keeps that, so the
    interval is the point 2; resampling the sides apart spreads it around 2."""
    base = 10 * np.random.default_rng(1).lognormal(0, 0.5, 80)
    scaled = 2 * base
    paired = percentile_interval((base, scaled), _p95_ratio, resamples=2000, seed=0, paired=True)
    apart = percentile_interval((base, scaled), _p95_ratio, resamples=2000, seed=0)
    assert paired == pytest.approx((2.0, 2.0), rel=1e-12)
    assert apart[0] < 2.0 < apart[1]


def test_a_seed_gives_one_interval_and_a_narrower_confidence_sits_inside() -> None:
    values = np.random.default_rng(3).normal(0.5, 0.2, 40)

    def mean(v: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(v, axis=axis)

    first = percentile_interval((values,), mean, resamples=2000, seed=7)
    assert percentile_interval((values,), mean, resamples=2000, seed=7) == first
    assert percentile_interval((values,), mean, resamples=2000, seed=8) != first
    half = percentile_interval((values,), mean, resamples=2000, seed=7, confidence=0.5)
    assert first[0] < half[0] < float(values.mean()) < half[1] < first[1]
