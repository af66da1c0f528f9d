"""The description ranking scored with numpy ranks exactly as the per-row formula does.

`plain_ranking` is the formula written out row by row (shared IDF weight, F1 of precision and
recall, the verbatim bonus, each code's best row, rounded scores, ties by code); the numpy
version must return the same codes with the same scores, on a described fee table and on the
real one.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from reference_server.ranking import best_first, score
from reference_server.retrieval.ohip_descriptions import (
    VERBATIM_BONUS,
    Described,
    _fold,
    description_index,
    rank_descriptions,
    words,
)
from reference_server.retrieval.sql import SqlClient
from tests.conftest import make_settings

# A described fee table: two rows of one code (its best row counts), descriptions written
# word for word into a question (the verbatim bonus), rows equal after stemming, and more
# codes sharing a word than the limit, so that the cut-off decides.
FEE_ROWS = [
    ("A001", "Minor assessment of a patient"),
    ("A007", "Intermediate assessment of a patient"),
    ("A007", "Intermediate assessment - pronouncement of death"),
    ("E078", "Chronic disease assessment premium"),
    ("K005", "Primary mental health care, individual care, per unit"),
    ("K007", "Psychotherapy, individual care, per unit"),
    ("K013", "Counselling, individual care, first three units"),
    ("K033", "Counselling, individual care, additional units"),
    ("E409", "Laser retinopexy for retinopathy of prematurity, one eye"),
    ("E410", "Laser retinopexy for retinopathy of prematurity, both eyes"),
    ("Z101", "Excision of skin lesion"),
    ("Z102", "Excisions of skin lesions"),
    ("G001", ""),
]
QUESTIONS = [
    "code for an intermediate assessment of a patient",
    "laser retinopexy for retinopathy of prematurity, one eye",
    "individual care counselling, first three units",
    "individual care per unit",
    "excision of skin lesion",
    "assessment",
    "chronic disease assessment premium for a patient",
    "which codes are valid for virtual follow-ups?",
    "ohip schedule code",
]


def plain_ranking(sql: SqlClient, q: str, limit: int) -> list[Described]:
    """The ranking computed row by row in Python, as the module's docstring defines it."""
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


@pytest.fixture
def described_table(tmp_path: Path) -> SqlClient:
    path = tmp_path / "ohip.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE ohip_fee_schedule (code TEXT, description TEXT)")
        conn.executemany("INSERT INTO ohip_fee_schedule VALUES (?, ?)", FEE_ROWS)
    return SqlClient(path)


@pytest.mark.parametrize("limit", [1, 2, 3, 20])
@pytest.mark.parametrize("q", QUESTIONS)
def test_same_ranking_as_the_plain_formula(described_table: SqlClient, q: str, limit: int) -> None:
    assert rank_descriptions(described_table, q, limit) == plain_ranking(described_table, q, limit)


def test_verbatim_description_wins_over_its_stemmed_twin(described_table: SqlClient) -> None:
    # "excision of skin lesion" restates Z101 word for word and Z102 only after stemming.
    ranked = rank_descriptions(described_table, "excision of skin lesion", 2)
    assert [d.code for d in ranked] == ["Z101", "Z102"]
    assert ranked[0].score == pytest.approx(ranked[1].score + VERBATIM_BONUS)


def test_same_ranking_on_the_real_fee_table() -> None:
    settings = make_settings()
    if not settings.ohip_db.exists():
        pytest.skip("index not built")
    sql = SqlClient(settings.ohip_db)
    texts = [r["description"] for r in sql.query("SELECT description FROM ohip_fee_schedule")]
    # Questions made of each 37th description, alone and with a frame and another's words.
    questions = [t for t in texts[::37] if t] + [
        f"OHIP code for {a} after {b}" for a, b in zip(texts[5::53], texts[11::53], strict=False)
    ]
    assert len(questions) > 100
    for q in questions:
        for limit in (5, 20):
            assert rank_descriptions(sql, q, limit) == plain_ranking(sql, q, limit), q
