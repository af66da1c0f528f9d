"""Refitting a static table on sentences (static_fit.py), on small described problems whose
answers are worked out by hand, never taken from a model run on this machine."""

from __future__ import annotations

import numpy as np
import pytest

from reference_server.static_fit import design, fragments, refine

# three rows; each text names the rows it is made of
ROWS = {"a": [0], "b": [1], "ab": [0, 1]}
WEIGHTS = np.array([1.0, 3.0, 1.0])


def _rows_of(text: str) -> list[int]:
    return ROWS[text]


def test_a_text_row_is_its_rows_normalised_weights() -> None:
    """ "ab": weights 1 and 3 over their sum 4 -> 0.25 and 0.75; row 2 unused."""
    matrix = design(["ab", "b"], _rows_of, WEIGHTS, 3).toarray()
    assert matrix.tolist() == [[0.25, 0.75, 0.0], [0.0, 1.0, 0.0]]


def test_refit_rows_reproduce_targets_the_table_cannot() -> None:
    """The distilled rows [1, 0] and [0, 1] give "ab" the mean [0.25, 0.75]; the targets ask
    a = [1, 1], b = [1, -1] and ab = 0.25 a + 0.75 b = [1, -0.5], which one set of rows meets,
    so with a vanishing ridge the fit finds those rows. Row 2 is in no text: it keeps the one
    scale c times its distilled value."""
    start = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]], dtype=np.float32)
    targets = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, -0.5]])
    refit = refine(start, WEIGHTS, _rows_of, ["a", "b", "ab"], targets, ridge=1e-9)
    assert refit[0] == pytest.approx([1.0, 1.0], abs=1e-4)
    assert refit[1] == pytest.approx([1.0, -1.0], abs=1e-4)
    # c = <A V0, Y> / |A V0|^2 with A V0 = [1, 0], [0, 1], [0.25, 0.75]:
    # <A V0, Y> = 1 - 1 + (0.25 - 0.375) = -0.125; |A V0|^2 = 1 + 1 + 0.625 = 2.625
    scale = -0.125 / 2.625
    assert refit[2] == pytest.approx([2 * scale, 2 * scale], abs=1e-6)


def test_fragments_are_sentences_and_short_runs_in_a_fixed_order() -> None:
    text = "Screen every two years. Refer when the result is abnormal and repeat in six months."
    once = fragments([text], limit=100, seed=1)
    assert "Screen every two years." in once
    assert once == fragments([text], limit=100, seed=1)
    assert [len(f) for f in once] == sorted(len(f) for f in once)
    assert len(fragments([text], limit=2, seed=1)) == 2
