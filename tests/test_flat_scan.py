"""A large flat index scanned in row blocks on several threads gives the scores one product gives,
and keeping only the rows that can lead before rounding changes no answer."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_server import ranking
from reference_server.retrieval import flat_scan
from reference_server.retrieval.vector import FlatIndex

MIN = flat_scan.PARALLEL_MIN_ROWS


def _unit_rows(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded unit rows and a unit query, 384 dimensions (the packaged model's)."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = rng.standard_normal(384).astype(np.float32)
    return matrix, query / np.linalg.norm(query)


@pytest.mark.parametrize(
    "rows", [0, 1, MIN - 1, MIN, 2 * MIN - 1, 2 * MIN, 2 * MIN + 1, 5 * MIN + 7]
)
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_blocks_cover_every_row_once_in_order(rows: int, threads: int) -> None:
    spans = flat_scan.blocks(rows, threads)
    assert spans[0][0] == 0 and spans[-1][1] == rows
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert len(spans) <= max(1, threads)
    assert all(start % flat_scan.ROW_ALIGN == 0 for start, _ in spans)
    if rows < 2 * MIN or threads == 1:
        assert len(spans) == 1  # too small to split: one product, no thread handoff


@pytest.mark.parametrize("rows", [MIN - 1, 2 * MIN, 2 * MIN + 65, 3 * MIN + 1])
@pytest.mark.parametrize("threads", [2, 3, 4])
def test_split_products_equal_the_single_product_bit_for_bit(rows: int, threads: int) -> None:
    """Each row's dot product is the same kernel over the same numbers whichever block holds it."""
    matrix, query = _unit_rows(rows, rows * 10 + threads)
    assert np.array_equal(flat_scan.products(matrix, query, threads), matrix @ query)


def _reference(flat: FlatIndex, query: np.ndarray, n: int) -> list[tuple[str, float]]:
    """Every row rounded and sorted: the ranking `nearest` must reproduce."""
    scores = ranking.similarities(flat.matrix @ query)
    order = sorted(range(len(flat.ids)), key=lambda r: (-scores[r], flat.ids[r]))
    return [(flat.ids[r], float(scores[r])) for r in order[:n]]


# Scores on and around the rounding grid, so rows tie, nearly tie and straddle the n-th best.
_near_grid = st.builds(
    lambda step, nudge: 0.5 + step * 10.0**-ranking.SIMILARITY_DECIMALS / 2 + nudge,
    st.integers(-6, 6),
    st.sampled_from([0.0, 1e-7, -1e-7, 2e-5, -2e-5, 4.9e-5, -4.9e-5]),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_near_grid, min_size=1, max_size=40), n=st.integers(1, 12))
def test_keeping_the_rows_that_can_lead_changes_no_answer(values: list[float], n: int) -> None:
    """Two-dimensional rows whose similarity to (1, 0) is each drawn value; ids in an order
    unrelated to the scores, so the id tie-break matters."""
    vectors = {
        f"r{(i * 7919) % 1000:03d}-{i}": [v, float(np.sqrt(max(0.0, 1 - v * v)))]
        for i, v in enumerate(values)
    }
    flat = FlatIndex.build(vectors)
    query = np.array([1.0, 0.0], dtype=np.float32)
    assert flat.nearest([1.0, 0.0], n, None) == _reference(flat, query, n)


def test_with_every_helper_busy_the_caller_scores_every_block_itself() -> None:
    matrix, query = _unit_rows(3 * MIN, 7)
    taken = 0
    while flat_scan._idle.acquire(blocking=False):
        taken += 1
    try:
        assert taken == flat_scan.HELPERS
        assert np.array_equal(flat_scan.products(matrix, query, 3), matrix @ query)
    finally:
        for _ in range(taken):
            flat_scan._idle.release()


def test_concurrent_scans_each_get_their_own_scores() -> None:
    """Calls from many server threads share the helpers; none reads another's blocks."""
    matrix, _ = _unit_rows(2 * MIN + 100, 11)
    queries = [_unit_rows(1, seed)[1] for seed in range(24)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda q: flat_scan.products(matrix, q, 2), queries))
    for query, scores in zip(queries, got, strict=True):
        assert np.array_equal(scores, matrix @ query)
