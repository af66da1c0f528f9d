"""The one bootstrap of every interval the project reports: seeded percentile intervals of any
statistic over one or more samples, through `scipy.stats.bootstrap`.

Metric means (evals reports and comparisons), working/base latency ratios (`make bench BASE=`)
and scaled/1x p95 ratios (`make bench SCALE=`) are all read with this one resampling scheme, so
an interval means the same thing wherever it is printed:

- each resample draws n indices with replacement from `numpy.random.default_rng(seed)`, one
  (resamples, n) draw per sample (scipy's scheme); `paired` samples share one draw, so the pairs
  stay together (the same call on both servers);
- the interval is the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the statistic
  over the resamples, interpolated linearly (the percentile method: no bias correction, which a
  ratio of two percentiles of a few dozen calls would not support);
- the statistic is vectorized: `statistic(*samples, axis=-1)` reduces the last axis.

A caller keeps its own seed and resample count, so every figure reproduces from its inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

Statistic = Callable[..., np.ndarray]


def percentile_interval(
    samples: Sequence[ArrayLike],
    statistic: Statistic,
    *,
    resamples: int,
    seed: int,
    confidence: float = 0.95,
    paired: bool = False,
) -> tuple[float, float]:
    """(low, high) of the seeded percentile-bootstrap interval of `statistic` over `samples`.

    Every sample needs two or more values; paired samples need the same length."""
    result = stats.bootstrap(
        tuple(np.asarray(s, dtype=float) for s in samples),
        statistic,
        paired=paired,
        vectorized=True,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
