"""Fee codes ranked by how closely a question restates their Schedule description.

A clinician who asks for "the code for laser retinopexy for retinopathy of prematurity, one eye"
has written a description, not keywords: the answer is the code whose description says the
same thing and little else. BM25 over descriptions and requirements rewards any row sharing a
rare word, and the commentary lists (hand-written, a few dozen common codes) pull their codes
up for any question near them, so a question restating a description found its code first in
about a third of the cases. This index scores each description by the F1 of the two word sets,
weighted by rarity (IDF over all descriptions): how much of the description the question says
(precision) and how much of the question the description covers (recall). A question that
restates a description scores near 1 on it; an open question ("which codes are valid for
virtual follow-ups?") scores well below on every description, so callers can tell the two apart.

Built once per process from the read-only fee table (`sql.derived`); a call adds one posting
list per question word.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from reference_server.ranking import SCORE_DECIMALS, best_first, score
from reference_server.retrieval.ohip_text import ABBREVIATIONS, CODE_IN_TEXT, GENERIC, stem
from reference_server.retrieval.sql import STOPWORDS, SqlClient

# Words of the question's frame ("OHIP schedule code for ...") that say nothing about the service.
FRAME_WORDS = frozenset({"schedule", "bill", "billing", "code", "codes", "ohip", "fee", "fees"})
VERBATIM_BONUS = 0.01  # a description written out word for word beats one equal after stemming


@dataclass(frozen=True)
class Described:
    """One fee code's best description score for a question."""

    code: str
    score: float  # F1 of the IDF-weighted word sets, plus VERBATIM_BONUS when written verbatim


@dataclass(frozen=True)
class DescriptionIndex:
    codes: list[str]  # row -> code
    texts: list[str]  # row -> description, case and spacing folded
    weights: list[float]  # row -> sum of its words' IDF
    postings: dict[str, list[int]]  # word stem -> rows whose description has it
    idf: dict[str, float]


def words(text: str) -> set[str]:
    """The content-word stems of a text (abbreviations spelt out; no stopwords, single letters,
    question-frame words or fee codes)."""
    out: set[str] = set()
    for found in re.findall(r"[a-z0-9]+", text.lower()):
        word = ABBREVIATIONS.get(found, found)
        if len(word) < 2 or word in STOPWORDS or word in GENERIC or word in FRAME_WORDS:
            continue
        if CODE_IN_TEXT.fullmatch(word):
            continue
        out.add(stem(word))
    return out


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _build(sql: SqlClient) -> DescriptionIndex:
    rows = sql.query(
        "SELECT code, coalesce(description, '') AS description FROM ohip_fee_schedule "
        "ORDER BY rowid"
    )
    stems = [words(r["description"]) for r in rows]
    frequency: dict[str, int] = defaultdict(int)
    for row_words in stems:
        for w in row_words:
            frequency[w] += 1
    n = max(len(rows), 1)
    idf = {w: math.log(1 + n / f) for w, f in frequency.items()}
    postings: dict[str, list[int]] = defaultdict(list)
    for i, row_words in enumerate(stems):
        for w in sorted(row_words):
            postings[w].append(i)
    return DescriptionIndex(
        codes=[r["code"] for r in rows],
        texts=[_fold(r["description"]) for r in rows],
        weights=[sum(idf[w] for w in row_words) for row_words in stems],
        postings=dict(postings),
        idf=idf,
    )


def description_index(sql: SqlClient) -> DescriptionIndex:
    return sql.derived.get("ohip_descriptions.index", lambda: _build(sql))


def rank_descriptions(sql: SqlClient, q: str, limit: int) -> list[Described]:
    """The `limit` codes whose descriptions best restate q, best first (ties by code)."""
    index = description_index(sql)
    arrays = description_arrays(sql)
    asked = {w for w in words(q) if w in index.idf}
    asked_weight = sum(index.idf[w] for w in asked)
    if not asked_weight:
        return []
    # Each row's shared weight, summed word by word in the order a Python loop over `asked`
    # adds them, so every float is the one the per-row formula computes.
    shared = np.zeros(len(index.codes))
    for w in asked:
        shared[arrays.postings[w]] += index.idf[w]
    rows = np.flatnonzero(shared)
    weight = shared[rows]
    precision, recall = weight / arrays.weights[rows], weight / asked_weight
    f1 = 2 * precision * recall / (precision + recall)
    folded_q = _fold(q)
    best: dict[str, float] = {}
    for row, value in _contenders(arrays.code_ids[rows], f1, len(arrays.code_names), limit):
        row_at = int(rows[row])
        text = index.texts[row_at]
        if text and text in folded_q:
            value += VERBATIM_BONUS
        code = index.codes[row_at]
        best[code] = max(best.get(code, 0.0), score(value))
    ranked = best_first(best.items(), lambda kv: kv[1], lambda kv: kv[0])[:limit]
    return [Described(code, value) for code, value in ranked]


def _contenders(
    code_ids: np.ndarray, f1: np.ndarray, n_codes: int, limit: int
) -> list[tuple[int, float]]:
    """(position, F1) of the rows that can place a code among the best `limit`.

    Without the verbatim bonus, the `limit`-th best code scores `floor`; those `limit` codes
    keep a score of at least round(floor). A row below floor - bonus - one rounding step
    scores strictly less even with the bonus, so neither it nor a code made only of such rows
    can be ranked, and the substring test and rounding run on the few rows left."""
    positions = np.arange(len(f1))
    per_code = np.zeros(n_codes)
    np.maximum.at(per_code, code_ids, f1)
    touched = per_code[per_code > 0]
    if len(touched) > limit:
        floor = np.partition(touched, len(touched) - limit)[len(touched) - limit]
        step = 2 * 10.0**-SCORE_DECIMALS  # one rounding step, and float slack
        positions = np.flatnonzero(f1 >= floor - VERBATIM_BONUS - step)
    return [(int(i), float(f1[i])) for i in positions]


@dataclass(frozen=True)
class DescriptionArrays:
    """The index as numpy arrays, for scoring every posting of a question at once."""

    postings: dict[str, np.ndarray]  # word stem -> rows (int64)
    weights: np.ndarray  # row -> sum of its words' IDF
    code_ids: np.ndarray  # row -> position of its code in code_names
    code_names: list[str]


def _arrays(index: DescriptionIndex) -> DescriptionArrays:
    code_names = sorted(set(index.codes))
    position = {code: i for i, code in enumerate(code_names)}
    return DescriptionArrays(
        postings={w: np.asarray(rows, dtype=np.int64) for w, rows in index.postings.items()},
        weights=np.asarray(index.weights, dtype=np.float64),
        code_ids=np.asarray([position[c] for c in index.codes], dtype=np.int64),
        code_names=code_names,
    )


def description_arrays(sql: SqlClient) -> DescriptionArrays:
    return sql.derived.get("ohip_descriptions.arrays", lambda: _arrays(description_index(sql)))
