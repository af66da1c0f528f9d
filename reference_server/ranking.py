"""Scores as rankings see them: rounded to a stated precision, ties broken by id.

Two machines running the same code on the same corpus compute similarities that differ in the
last bits (BLAS and onnxruntime pick different float kernels for AVX2, AVX-512 and ARM, and sum
in different orders). Ranking on raw floats lets such a difference reorder two hits whose
scores are equal to six digits, and a gate then reports a regression that is only the CPU. So
every ranking in both retrieval paths and in fusion sorts on a rounded score and breaks ties by
id; only a difference at the stated precision can reorder anything.

- Cosine similarities (the vector path) carry the embedding's cross-machine noise, measured at
  about 1e-6 on a dot product: `SIMILARITY_DECIMALS` = 4 keeps a hundred times that margin.
- Keyword scores (BM25 from stored impacts) and fused scores (weighted RRF x boosts) are
  computed from the same numbers in the same order everywhere; `SCORE_DECIMALS` = 6 only
  guards against float formatting of a future change, and stays finer than the smallest gap
  RRF makes between neighbouring ranks (about 4e-5 at rank 160 with k = 60).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import numpy as np

SIMILARITY_DECIMALS = 4
SCORE_DECIMALS = 6

T = TypeVar("T")


def similarity(value: float) -> float:
    """A cosine similarity at the precision every ranking compares."""
    return round(float(value), SIMILARITY_DECIMALS)


def similarities(values: np.ndarray) -> np.ndarray:
    """`similarity` for a whole array at once (numpy's round, same grid)."""
    return np.round(values.astype(np.float64), SIMILARITY_DECIMALS)


def score(value: float) -> float:
    """A keyword or fused score at the precision every ranking compares."""
    return round(float(value), SCORE_DECIMALS)


def scores(values: np.ndarray) -> np.ndarray:
    return np.round(values.astype(np.float64), SCORE_DECIMALS)


def best_first(
    items: Iterable[T], score_of: Callable[[T], float], id_of: Callable[[T], str]
) -> list[T]:
    """Items by rounded score, highest first, then by id: the one order every path uses."""
    return sorted(items, key=lambda item: (-score(score_of(item)), id_of(item)))
