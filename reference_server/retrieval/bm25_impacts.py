"""Top-k BM25 from the stored impacts: FTS5's bm25() ranking, without FTS5 scoring every match.

A query's score for a row is the sum, over its words, of the impact stored for (word's token,
row) (index/bm25_impacts.py): the same sum bm25() computes, so the ranking is FTS5's
(tests/test_bm25_impacts.py compares them). numpy adds one array per word; FTS5 enumerated
and scored each matching row, which at 100x cost 63 ms per OPA query against 1.9 here.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from reference_server import ranking
from reference_server.catalog import FTS_TOKENIZER, Bm25Spec
from reference_server.retrieval.sql import SqlClient

_local = threading.local()


@lru_cache(maxsize=65_536)
def fts_token(word: str) -> str | None:
    """The token FTS5's tokenizer makes of one query word (its porter stem), by asking FTS5:
    a stemmer written again in Python could disagree with it on some words."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '{FTS_TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE word_tokens USING fts5vocab(words, instance)")
        _local.conn = conn
    with conn:
        conn.execute("DELETE FROM words")
        conn.execute("INSERT INTO words (word) VALUES (?)", (word,))
        row = conn.execute("SELECT term FROM word_tokens ORDER BY offset LIMIT 1").fetchone()
    return str(row[0]) if row else None


class Bm25Impacts:
    """Ranks one FTS5 table's rows by bm25() from its impact tables."""

    def __init__(self, sql: SqlClient, spec: Bm25Spec):
        self.sql = sql
        self.spec = spec

    def row_ids(self) -> np.ndarray:
        """The FTS table's row ids, sorted; a row's position here indexes every array."""

        def read() -> np.ndarray:
            blob = self.sql.query(f"SELECT row_ids FROM {self.spec.rows_table}")[0]["row_ids"]
            return np.frombuffer(blob, dtype=np.int64)

        return self.sql.derived.get(self.spec.rows_table, read)

    def _postings(self, tokens: set[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        if not tokens:
            return {}
        rows = self.sql.query(
            f"SELECT term, positions, impacts FROM {self.spec.terms_table} "
            f"WHERE term IN ({','.join('?' * len(tokens))})",
            sorted(tokens),
        )
        return {
            r["term"]: (
                np.frombuffer(r["positions"], dtype=np.int32),
                np.frombuffer(r["impacts"], dtype=np.float64),
            )
            for r in rows
        }

    def top(
        self, words: Sequence[str], limit: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """(row id, bm25) of the best `limit` rows matching any of the words, best first.

        `words` are the query's phrases in order (a word twice counts twice, as in FTS5); bm25
        is what FTS5's bm25() returns (negative, lower is better). `allowed`, one bool per row
        position, keeps only the rows a filter lets through. Ties go to the lower row id.
        """
        if limit <= 0:
            return []
        tokens = [fts_token(w) for w in words]
        postings = self._postings({t for t in tokens if t})
        row_ids = self.row_ids()
        scores = np.zeros(len(row_ids), dtype=np.float64)
        for token in tokens:
            if token in postings:
                positions, impacts = postings[token]
                scores[positions] += impacts
        if allowed is not None:
            scores[~allowed] = 0.0
        matched = np.flatnonzero(scores)  # every stored impact is > 0
        rounded = ranking.scores(scores[matched])  # only the matches: rounding is per query
        if limit < len(matched):
            # Everything tied with the limit-th best stays in for the id tie-break: which of
            # several tied rows a partition keeps depends on the CPU's sort kernel.
            cutoff = np.partition(rounded, len(matched) - limit)[len(matched) - limit]
            keep = rounded >= cutoff
            matched, rounded = matched[keep], rounded[keep]
        order = np.lexsort((matched, -rounded))[:limit]
        return [(int(row_ids[matched[i]]), -float(rounded[i])) for i in order]
