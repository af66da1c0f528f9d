"""Refine a distilled static table on the corpus's own sentences (tokenlearn's idea).

A table made of single-entry vectors (static_embedding.distill) knows what MiniLM makes of each
word alone, not of words in company: its query vectors point on average 57 degrees from
MiniLM's for the same text. Refining fits the rows so that a text's weighted mean of rows comes
close to MiniLM's vector of that whole text, over fragments of the corpus (its sentences and
short runs of words, the length of a question), by ridge regression towards the distilled rows:

    minimise  || A V - Y ||^2 + ridge * || V - c V0 ||^2

A holds each fragment's normalised SIF weights over its rows, Y MiniLM's vectors of the
fragments, V0 the distilled rows and c the one scale that best maps them onto Y. Rows no fragment
uses stay c V0. Solved by conjugate gradients, one column per dimension, all at once.

The fragments are a seeded sample of the corpus, never a question set, so no evaluation case is
fitted. The solve runs on the CPU that builds the index, and its last bits follow that CPU's
sums as MiniLM's corpus vectors do; a query's embedding from a written table stays exact.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

# fragments fitted: more fit better (0.79 mean cosine to MiniLM on unseen questions at 25,000,
# 0.81 at 79,000) but each costs one MiniLM run at index build
FIT_FRAGMENTS = 25_000
FIT_SEED = 20261130
RIDGE = 0.1
ITERATIONS = 100
_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+|\n+")
MAX_WORDS = 40


def fragments(texts: Iterable[str], limit: int = FIT_FRAGMENTS, seed: int = FIT_SEED) -> list[str]:
    """A seeded sample of the corpus's sentences (long ones in 25-word runs) and of short runs
    of 3-8 words, each once, shortest first (MiniLM batches of like lengths pad little)."""
    rng = random.Random(seed)
    found: set[str] = set()
    for text in texts:
        for sentence in _SENTENCE_END.split(text):
            words = sentence.split()
            if 2 <= len(words) <= MAX_WORDS:
                found.add(" ".join(words))
            elif len(words) > MAX_WORDS:
                found.update(" ".join(words[i : i + 25]) for i in range(0, len(words), 20))
            if len(words) >= 6:
                n = rng.randint(3, min(8, len(words)))
                start = rng.randint(0, len(words) - n)
                found.add(" ".join(words[start : start + n]))
    ordered = sorted(found)
    if len(ordered) > limit:
        ordered = random.Random(seed).sample(ordered, limit)
    return sorted(ordered, key=lambda text: (len(text), text))


def design(
    texts: Sequence[str], rows_of: Callable[[str], list[int]], weights: np.ndarray, n_rows: int
) -> sp.csr_matrix:
    """Each text's row weights, normalised to sum to one (the mean the embedder takes)."""
    indices: list[int] = []
    values: list[float] = []
    pointers = [0]
    for text in texts:
        share: dict[int, float] = {}
        rows = rows_of(text)
        total = float(weights[rows].sum()) if rows else 0.0
        for row in rows:
            share[row] = share.get(row, 0.0) + float(weights[row]) / total
        indices.extend(share)
        values.extend(share.values())
        pointers.append(len(indices))
    return sp.csr_matrix((values, indices, pointers), shape=(len(texts), n_rows))


def refine(
    vectors: np.ndarray,
    weights: np.ndarray,
    rows_of: Callable[[str], list[int]],
    texts: Sequence[str],
    targets: np.ndarray,
    ridge: float = RIDGE,
    iterations: int = ITERATIONS,
) -> np.ndarray:
    """The rows refitted so each text's weighted mean of rows approaches its target vector."""
    start = vectors.astype(np.float64)
    a = design(texts, rows_of, weights, start.shape[0])
    y = targets.astype(np.float64)
    predicted = a @ start
    scale = float((predicted * y).sum() / max((predicted * predicted).sum(), 1e-30))
    anchor = scale * start
    at = a.T.tocsr()

    def normal(z: np.ndarray) -> np.ndarray:
        product: np.ndarray = at @ (a @ z) + ridge * z
        return product

    solution = anchor.copy()
    residual = at @ y + ridge * anchor - normal(solution)
    direction = residual.copy()
    power = (residual * residual).sum(axis=0)
    for _ in range(iterations):
        step_image = normal(direction)
        alpha = power / np.maximum((direction * step_image).sum(axis=0), 1e-30)
        solution += direction * alpha
        residual -= step_image * alpha
        new_power = (residual * residual).sum(axis=0)
        direction = residual + direction * (new_power / np.maximum(power, 1e-30))
        power = new_power
    refined: np.ndarray = solution.astype(np.float32)
    return refined
