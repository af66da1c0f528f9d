"""The synthetic copies in one SQLite index file: which tables hold corpus records, each
column's role (id, title, category or text), copies 1..factor-1 of every row inserted with
offset rowids, and the BM25 impacts written again for the scaled FTS tables.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from rich.progress import Progress

from reference_server.catalog import BM25_SPECS
from reference_server.index.bm25_impacts import write_impacts
from reference_server.index.synthetic_values import (
    BATCH,
    CATEGORICAL_MAX,
    ID_NAME,
    ROWID_STRIDE,
    TITLE,
    Roles,
    refers_to_id,
)

SKIP_TABLES = {"ingestion_log", "query_cache"}  # build records and caches, not corpus
FTS_SHADOW = re.compile(r"_(data|idx|content|docsize|config)$")
# derived from a whole FTS table, so rewritten for the scaled table rather than copied
IMPACT_TABLES = {t for spec in BM25_SPECS for t in (spec.terms_table, spec.rows_table)}


def corpus_tables(conn: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """(base tables, FTS5 tables) that hold corpus records (FTS shadow tables excluded)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    fts = [name for name, sql in rows if "USING FTS5" in (sql or "").upper()]
    base = [
        name
        for name, _ in rows
        if name not in fts
        and not name.startswith("sqlite_")
        and name not in SKIP_TABLES
        and not any(name.startswith(f + "_") and FTS_SHADOW.search(name) for f in fts)
        and name not in IMPACT_TABLES
    ]
    return base, fts


_PRIORITY = {"id": 3, "title": 2, "text": 1, "category": 0}


def _column_role(
    col: str, kind: str | None, distinct: int, total: int, keyed: set[str], indexed: set[str]
) -> str:
    if kind == "integer" and col in keyed:
        return "id"  # an integer key: copies are offset like rowids
    if kind not in ("text", None):
        return "category"
    if col in keyed or ID_NAME.search(col) or (col in indexed and distinct > CATEGORICAL_MAX):
        return "id"
    if TITLE.search(col):
        return "title"
    if distinct <= CATEGORICAL_MAX and distinct * 2 < total:
        return "category"
    return "text"


def sql_roles(conn: sqlite3.Connection) -> Roles:
    """Column roles for one database, by column name (FTS tables reuse their base names).

    A name keeps its strongest role across tables (id > title > text > category), so the
    same value is transformed alike wherever it appears and references stay consistent."""
    base, _ = corpus_tables(conn)
    roles: dict[str, str] = {}
    for table in base:
        info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        keyed = {r[1] for r in info if r[5]}
        keyed |= {r[3] for r in conn.execute(f'PRAGMA foreign_key_list("{table}")')}
        indexed = set()
        for idx in conn.execute(f'PRAGMA index_list("{table}")').fetchall():
            indexed |= {r[2] for r in conn.execute(f'PRAGMA index_info("{idx[1]}")')}
        total = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        for _, col, *_rest in info:
            kind, distinct, structured = conn.execute(
                f'SELECT max(typeof("{col}")), count(DISTINCT "{col}"), '
                f"max(substr(\"{col}\", 1, 1) IN ('{{', '[')) FROM \"{table}\""
            ).fetchone()
            role = _column_role(col, kind, distinct, total, keyed, indexed)
            if role == "category" and structured:
                role = "text"  # JSON blocks are records (their ids and text are copied as such)
            if _PRIORITY[role] > _PRIORITY[roles.get(col, "category")] or col not in roles:
                roles[col] = role
    ids = {name for name, role in roles.items() if role == "id"}
    for name in roles:
        if refers_to_id(name, ids):
            roles[name] = "id"
    return Roles(roles)


def _copy_table(
    conn: sqlite3.Connection, table: str, roles: Roles, factor: int, advance: Callable[[int], None]
) -> int:
    """Insert copies 1..factor-1 of the table's original rows (rowid r -> r + k * stride)."""
    columns = [d[0] for d in conn.execute(f'SELECT * FROM "{table}" LIMIT 0').description]
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    # An INTEGER PRIMARY KEY is the rowid itself: its (offset) value sets the rowid.
    rowid_alias = sum(1 for r in info if r[5]) == 1 and any(
        r[5] and r[2].upper() == "INTEGER" for r in info
    )
    names = columns if rowid_alias else ["rowid", *columns]
    transforms = [roles.transform(c) for c in columns]
    rows = conn.execute(
        f'SELECT rowid, * FROM "{table}" WHERE rowid < ?', (ROWID_STRIDE,)
    ).fetchall()
    insert = (
        f'INSERT INTO "{table}" ({", ".join(f"{chr(34)}{c}{chr(34)}" for c in names)}) '
        f"VALUES ({', '.join('?' * len(names))})"
    )
    for k in range(1, factor):
        batch = [
            (
                *(() if rowid_alias else (row[0] + k * ROWID_STRIDE,)),
                *(t(v, k) for t, v in zip(transforms, row[1:], strict=True)),
            )
            for row in rows
        ]
        for start in range(0, len(batch), BATCH):
            conn.executemany(insert, batch[start : start + BATCH])
            advance(len(batch[start : start + BATCH]))
    return len(rows) * factor


def scale_database(path: Path, factor: int, progress: Progress) -> dict[str, int]:
    """Add the synthetic copies to one SQLite file in place; row counts per table."""
    conn = sqlite3.connect(path)
    try:
        roles = sql_roles(conn)
        base, fts = corpus_tables(conn)
        tables = base + fts
        total = sum(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
        task = progress.add_task(f"{path.name}: synthetic rows", total=total * (factor - 1))
        counts = {
            t: _copy_table(conn, t, roles, factor, lambda n: progress.advance(task, n))
            for t in tables
        }
        # BM25 impacts depend on the whole FTS table (idf, average length): written again
        specs = [spec for spec in BM25_SPECS if spec.fts_table in fts]
        impacts = progress.add_task(f"{path.name}: BM25 impacts", total=len(specs))
        for spec in specs:
            write_impacts(conn, spec)
            progress.advance(impacts)
        conn.commit()  # no VACUUM: it renumbers rowids, and FTS rows are joined by rowid
        return counts
    finally:
        conn.close()
