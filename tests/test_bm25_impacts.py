"""The keyword searches rank from stored BM25 impacts; the ranking must be FTS5's own bm25().

For every golden query text (and filter combinations for the OPA sections), the impact ranking
is compared with FTS5 ranking the same MATCH with the same column weights: same scores, and the
same rows in the same order wherever the scores differ."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import yaml

from reference_server.catalog import OHIP_FEES_BM25, OPA_SECTIONS_BM25, SECTION_TAGS_COLUMN
from reference_server.config import PROJECT_ROOT, Settings
from reference_server.ranking import SCORE_DECIMALS
from reference_server.retrieval.bm25_impacts import Bm25Impacts, fts_token
from reference_server.retrieval.opa_sections import Filters, filter_mask, required_tags
from reference_server.retrieval.sql import SqlClient, fts_query, fts_words

LIMIT = 25
FILTERS = [
    Filters(include_superseded=True),
    Filters(),
    Filters(source_orgs=["cpso"], policy_level="expectation"),
    Filters(source_orgs=["ontario_health", "pho"], chunk_types=("parent",)),
]


def _golden_texts() -> list[str]:
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("query", "question") and isinstance(item, str):
                    texts.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((PROJECT_ROOT / "golden").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            walk(doc)
    return [t for t in dict.fromkeys(texts) if fts_words(t)]


TEXTS = _golden_texts()


def _weights(spec_columns: list[str], weights: dict[str, float]) -> str:
    return ", ".join(repr(weights.get(c, 0.0)) for c in spec_columns)


def _fts5_ranking(db: Path, table: str, match: str, weights: str) -> list[tuple[int, float]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            f"SELECT rowid, bm25({table}, {weights}) AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY score, rowid LIMIT ?",
            (match, LIMIT),
        ).fetchall()
    finally:
        conn.close()
    return [(int(r), float(s)) for r, s in rows]


def _quoted(token: str) -> str:
    return f'"{token}"'


def _columns(db: Path, table: str) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [d[0] for d in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]
    finally:
        conn.close()


def _assert_same(got: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    # Our scores are FTS5's rounded to the precision rankings compare (reference_server.ranking)
    precision = 10.0**-SCORE_DECIMALS
    assert len(got) == len(expected)
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=0, abs=precision)
    # rows may swap only within a tie at that precision
    for (row, score), (fts_row, fts_score) in zip(got, expected, strict=True):
        if row != fts_row:
            assert score == pytest.approx(fts_score, rel=0, abs=precision)


def test_golden_texts_are_many() -> None:
    assert len(TEXTS) >= 40


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: repr(f)[8:70])
def test_opa_ranking_is_fts5_bm25(settings: Settings, filters: Filters) -> None:
    db = settings.opa_db
    sql = SqlClient(db)
    ranking = Bm25Impacts(sql, OPA_SECTIONS_BM25)
    columns = _columns(db, OPA_SECTIONS_BM25.fts_table)
    weights = _weights(columns, dict(OPA_SECTIONS_BM25.weights))
    text_columns = " ".join(c for c, _ in OPA_SECTIONS_BM25.weights)
    compared = 0
    for text in TEXTS:
        expression = " AND ".join(
            [f"{{{text_columns}}} : ({fts_query(text)})"]
            + [
                f"{SECTION_TAGS_COLUMN} : ({' OR '.join(_quoted(t) for t in group)})"
                for group in required_tags(filters)
            ]
        )
        if not filters.include_superseded:
            expression = f'({expression}) NOT {SECTION_TAGS_COLUMN} : "superseded"'
        expected = _fts5_ranking(db, OPA_SECTIONS_BM25.fts_table, expression, weights)
        mask = filter_mask(sql, filters, len(ranking.row_ids()))
        _assert_same(ranking.top(fts_words(text), LIMIT, mask), expected)
        compared += bool(expected)
    assert compared >= len(TEXTS) // 2


def test_ohip_fee_ranking_is_fts5_bm25(settings: Settings) -> None:
    db = settings.ohip_db
    ranking = Bm25Impacts(SqlClient(db), OHIP_FEES_BM25)
    weights = _weights(_columns(db, OHIP_FEES_BM25.fts_table), dict(OHIP_FEES_BM25.weights))
    compared = 0
    for text in TEXTS:
        expected = _fts5_ranking(db, OHIP_FEES_BM25.fts_table, fts_query(text), weights)
        _assert_same(ranking.top(fts_words(text), LIMIT), expected)
        compared += bool(expected)
    assert compared >= 10


def test_a_word_is_the_token_fts5_matches() -> None:
    assert fts_token("vaccinations") == fts_token("vaccination") == "vaccin"
    assert fts_token("Gloves") == "glove"
    assert fts_token("covid19") == "covid19"


def test_a_word_that_stems_like_another_counts_twice(settings: Settings) -> None:
    """FTS5 scores each phrase of the query, so 'vaccine vaccines' weighs the token twice."""
    ranking = Bm25Impacts(SqlClient(settings.opa_db), OPA_SECTIONS_BM25)
    once = dict(ranking.top(["vaccine"], 5))
    twice = dict(ranking.top(["vaccine", "vaccines"], 5))
    assert once and once.keys() == twice.keys()
    assert all(twice[row] == pytest.approx(2 * once[row]) for row in once)


def test_no_match_and_no_limit_give_nothing(settings: Settings) -> None:
    ranking = Bm25Impacts(SqlClient(settings.opa_db), OPA_SECTIONS_BM25)
    assert ranking.top(["zzzqqqnotaword"], 5) == []
    assert ranking.top(["vaccine"], 0) == []
