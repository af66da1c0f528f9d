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

from reference_server.ranking import best_first, score
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
    asked = {w for w in words(q) if w in index.idf}
    asked_weight = sum(index.idf[w] for w in asked)
    if not asked_weight:
        return []
    shared: dict[int, float] = defaultdict(float)
    for w in asked:
        for row in index.postings[w]:
            shared[row] += index.idf[w]
    folded_q = _fold(q)
    best: dict[str, float] = {}
    for row, weight in shared.items():
        precision, recall = weight / index.weights[row], weight / asked_weight
        f1 = 2 * precision * recall / (precision + recall)
        if index.texts[row] and index.texts[row] in folded_q:
            f1 += VERBATIM_BONUS
        code = index.codes[row]
        best[code] = max(best.get(code, 0.0), score(f1))
    ranked = best_first(best.items(), lambda kv: kv[1], lambda kv: kv[0])[:limit]
    return [Described(code, value) for code, value in ranked]
