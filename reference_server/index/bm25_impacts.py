"""BM25 impacts: each (term, row) summand of FTS5's bm25(), computed once at index build.

FTS5's bm25() sums, over the query's phrases, idf(t) * F(k1 + 1) / (F + k1 (1 - b + b |d| / avgdl)),
where F is the column-weighted count of t in the row and |d| the row's length in tokens. Each
summand depends on one term and one row, so it can be stored: a query then adds the arrays of
its terms (retrieval/bm25_impacts.py) instead of FTS5 enumerating and scoring every match, which
is what grew with the corpus (45 ms per OPA query at 100x, `ocm query-audit`).

The counts come from FTS5 itself (its `fts5vocab` instance table), so terms are the porter
tokens FTS5 matches on and lengths are the ones bm25() uses.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator

import numpy as np

from reference_server.catalog import Bm25Spec

_BATCH = 100_000


def _row_lengths(conn: sqlite3.Connection, vocab: str, row_ids: np.ndarray) -> np.ndarray:
    """Tokens per row in all columns, by row position (FTS5's |d|, `xColumnSize(-1)`)."""
    lengths = np.zeros(len(row_ids), dtype=np.float64)
    counted = conn.execute(f"SELECT doc, count(*) FROM temp.{vocab} GROUP BY doc").fetchall()
    if counted:
        docs, counts = zip(*counted, strict=True)
        lengths[np.searchsorted(row_ids, np.asarray(docs, dtype=np.int64))] = counts
    return lengths


def _postings(
    conn: sqlite3.Connection, vocab: str, spec: Bm25Spec
) -> Iterator[tuple[str, list[int], list[float]]]:
    """(term, row ids, weighted counts F) per term, in term order, over the spec's columns."""
    weight_of = " ".join(f"WHEN {_quote(c)} THEN {w!r}" for c, w in spec.weights)
    columns = ", ".join(_quote(c) for c, _ in spec.weights)
    cursor = conn.execute(
        f"SELECT term, doc, sum(CASE col {weight_of} END) FROM temp.{vocab} "
        f"WHERE col IN ({columns}) GROUP BY term, doc ORDER BY term, doc"
    )
    term: str | None = None
    docs: list[int] = []
    counts: list[float] = []
    while batch := cursor.fetchmany(_BATCH):
        for t, doc, weighted in batch:
            if t != term:
                if term is not None:
                    yield term, docs, counts
                term, docs, counts = t, [], []
            docs.append(doc)
            counts.append(weighted)
    if term is not None:
        yield term, docs, counts


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def write_impacts(conn: sqlite3.Connection, spec: Bm25Spec) -> int:
    """(Re)write the spec's impact tables from its FTS5 table; returns the number of terms.

    Rows are stored by position in the sorted row ids (`rows_table`), so postings are small
    int32 arrays whatever the row ids (synthetic copies use large ones).
    """
    vocab = f"{spec.fts_table}_instances"
    conn.execute(f"DROP TABLE IF EXISTS temp.{vocab}")
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{vocab} USING fts5vocab(main, {spec.fts_table}, instance)"
    )
    for table in (spec.terms_table, spec.rows_table):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(
        f"CREATE TABLE {spec.terms_table} (term TEXT PRIMARY KEY, positions BLOB NOT NULL, "
        "impacts BLOB NOT NULL) WITHOUT ROWID"
    )
    conn.execute(f"CREATE TABLE {spec.rows_table} (row_ids BLOB NOT NULL)")
    row_ids = np.fromiter(
        (r for (r,) in conn.execute(f"SELECT rowid FROM {spec.fts_table} ORDER BY rowid")),
        dtype=np.int64,
    )
    conn.execute(f"INSERT INTO {spec.rows_table} VALUES (?)", (row_ids.tobytes(),))
    lengths = _row_lengths(conn, vocab, row_ids)
    n_rows = len(row_ids)
    avgdl = float(lengths.sum()) / n_rows if n_rows else 1.0
    k1, b = spec.k1, spec.b
    n_terms = 0
    pending: list[tuple[str, bytes, bytes]] = []
    for term, docs, counts in _postings(conn, vocab, spec):
        positions = np.searchsorted(row_ids, np.asarray(docs, dtype=np.int64)).astype(np.int32)
        weighted = np.asarray(counts, dtype=np.float64)
        idf = math.log((n_rows - len(docs) + 0.5) / (len(docs) + 0.5))
        if idf <= 0.0:
            idf = 1e-6  # as FTS5 does for terms in more than half the rows
        # the same operations, in the same order, as fts5Bm25Function
        impacts = idf * (
            (weighted * (k1 + 1.0)) / (weighted + k1 * (1 - b + b * lengths[positions] / avgdl))
        )
        pending.append((term, positions.tobytes(), impacts.tobytes()))
        n_terms += 1
        if len(pending) >= 5_000:
            conn.executemany(f"INSERT INTO {spec.terms_table} VALUES (?,?,?)", pending)
            pending.clear()
    conn.executemany(f"INSERT INTO {spec.terms_table} VALUES (?,?,?)", pending)
    conn.execute(f"DROP TABLE temp.{vocab}")
    return n_terms
