"""The one percentile definition of every latency figure: tables, verdicts, plots, reports.

Linear interpolation between the two closest ranks (numpy's default `method="linear"`,
Hyndman and Fan's type 7, also pandas' `quantile`). Locust's own statistics round each time
into a histogram first; load runs read that histogram back as samples and apply this same
definition (ocm_common/latency_records.py), so a p95 means one statistic wherever it is printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import ArrayLike

METHOD: Final = "linear"
DEFINITION = "percentiles by linear interpolation between closest ranks (numpy 'linear')"


def percentile(values: ArrayLike, q: float | Sequence[float], axis: int = -1) -> np.ndarray:
    """The q-th percentile(s) (0-100) along `axis`."""
    return np.asarray(np.percentile(np.asarray(values, dtype=float), q, axis=axis, method=METHOD))


def pct(values: ArrayLike, q: float) -> float:
    """One percentile (0-100) of a flat sample as a float; NaN for an empty sample."""
    flat = np.asarray(values, dtype=float).ravel()
    return float(percentile(flat, q)) if flat.size else float("nan")
