"""One query's similarities against a large flat index, and the rows that can lead.

An exact scan reads every stored vector. At 30,000 x 384 float32 (the ODB collection at ten times
the corpus) that is 46 MB per query, which one core streams in about 4 ms: the product is bound
by memory bandwidth, not arithmetic. So a large matrix is split into contiguous row blocks scored
concurrently (numpy releases the GIL in the product). Each row's dot product is still one
single-threaded kernel over the same numbers in the same order, so the scores are those one
product gives (tests/test_flat_scan.py) and no answer depends on the thread count. Below
`PARALLEL_MIN_ROWS` rows per block a thread handoff costs more than it saves.

Rankings compare similarities rounded to `ranking.SIMILARITY_DECIMALS`, so `leading` keeps only
the rows whose raw score can round to at least the n-th best one before anything is rounded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from reference_server import ranking

PARALLEL_MIN_ROWS = 4096  # ~6.3 MB of 384-dimension float32 rows per block
# Blocks start at a multiple of 64 rows, so a kernel that works through rows in groups meets the
# same groups as in one product.
ROW_ALIGN = 64
# A row whose rounded similarity ties or beats the n-th best one lies within one rounding step
# of it (half a step on each side); twice that covers float32 arithmetic on values near 1.
ROUNDING_SLACK = 2 * 10.0**-ranking.SIMILARITY_DECIMALS

# Helper threads shared by every scan in the process. A block is handed to one only while it is
# idle: when other calls keep the cores busy, splitting gains nothing, and a caller then scores
# its blocks itself instead of queueing behind another call's.
HELPERS = 3
_helpers = ThreadPoolExecutor(HELPERS, thread_name_prefix="flat-scan")
_idle = threading.BoundedSemaphore(HELPERS)


def blocks(rows: int, threads: int) -> list[tuple[int, int]]:
    """Contiguous [start, end) row ranges, one per thread the matrix is large enough to use."""
    parts = max(1, min(threads, rows // PARALLEL_MIN_ROWS))
    if parts == 1:
        return [(0, rows)]
    step = -(-rows // parts)
    step = -(-step // ROW_ALIGN) * ROW_ALIGN
    return [(start, min(start + step, rows)) for start in range(0, rows, step)]


def products(matrix: np.ndarray, query: np.ndarray, threads: int = 1) -> np.ndarray:
    """`matrix @ query`, its row blocks scored on up to `threads` threads (idle helpers only)."""
    spans = blocks(len(matrix), threads)
    if len(spans) == 1:
        return matrix @ query
    out = np.empty(len(matrix), dtype=np.result_type(matrix, query))

    def score(span: tuple[int, int]) -> None:
        np.matmul(matrix[span[0] : span[1]], query, out=out[span[0] : span[1]])

    handed, kept = [], []
    for span in spans[1:]:
        if _idle.acquire(blocking=False):
            handed.append(_helpers.submit(_score_and_free, score, span))
        else:
            kept.append(span)
    for span in [spans[0], *kept]:
        score(span)
    for done in handed:
        done.result()
    return out


def _score_and_free(score: Callable[[tuple[int, int]], None], span: tuple[int, int]) -> None:
    try:
        score(span)
    finally:
        _idle.release()


def leading(raw: np.ndarray, n: int) -> np.ndarray:
    """Positions of the rows that can be among the n best once similarities are rounded: every
    row within `ROUNDING_SLACK` of the n-th best raw score, in position order."""
    if n >= len(raw):
        return np.arange(len(raw))
    nth = np.partition(raw, len(raw) - n)[len(raw) - n]
    return np.flatnonzero(raw >= nth - ROUNDING_SLACK)
