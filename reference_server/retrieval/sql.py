"""Read-only SQLite access shared by all tools.

Each worker thread gets its own connection, opened with `mode=ro` so nothing a client sends
can change the corpus. Rows come back as plain dicts, built straight from the row tuples and
the statement's column names (going through `sqlite3.Row` first cost a second object per row).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

from reference_server.errors import IndexMissingError
from reference_server.retrieval.derived import DerivedValues
from reference_server.text import QUESTION_STOPWORDS

_FTS_WORD = re.compile(r"[A-Za-z0-9]+")
STOPWORDS = QUESTION_STOPWORDS

# What SQLite binds to a statement's placeholders: positional (`?`) or by name (`:name`).
SqlValue: TypeAlias = str | int | float | bytes | None
Params: TypeAlias = Sequence[SqlValue] | Mapping[str, SqlValue]


def fts_words(text: str) -> list[str]:
    """The words of free text a keyword search looks for: lowercased, stopwords and one-letter
    words dropped (unless nothing else is left), each once."""
    words = [w.lower() for w in _FTS_WORD.findall(text)]
    return list(dict.fromkeys([w for w in words if w not in STOPWORDS and len(w) > 1] or words))


def fts_query(text: str, mode: str = "OR") -> str:
    """Turn free text into a safe FTS5 MATCH expression (quoted terms, stopwords dropped)."""
    return f" {mode} ".join(f'"{w}"' for w in fts_words(text))


def _as_dicts(
    description: Sequence[Sequence[object]], rows: list[tuple[SqlValue, ...]]
) -> list[dict[str, SqlValue]]:
    """Rows as dicts keyed by column name. When two names clash, ignoring case (a join's
    `a.*, b.*`), each name reads its first matching column, as `dict(sqlite3.Row)` did."""
    names = [str(column[0]) for column in description]
    lowered = [n.lower() for n in names]
    if len(set(lowered)) == len(lowered):
        return [dict(zip(names, row, strict=True)) for row in rows]
    picks = {n: lowered.index(n.lower()) for n in names}
    return [{n: row[i] for n, i in picks.items()} for row in rows]


class SqlClient:
    """Thread-local read-only connections to one SQLite database."""

    def __init__(self, path: Path):
        self.path = path
        self._local = threading.local()
        self.derived = DerivedValues()  # whole-table reads, decoded or not (retrieval/derived.py)

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if not self.path.exists():
                raise IndexMissingError(str(self.path))
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            conn.execute("PRAGMA query_only = ON")
            self._local.conn = conn
        return conn

    def query(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        cursor = self._conn().execute(sql, params)
        rows = cursor.fetchall()
        return _as_dicts(cursor.description, rows) if rows else []

    def query_once(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        """`query` for whole reads of small reference tables, run once per process.

        The index is read-only, so the rows never change: repeating the read on every call
        costs time that grows with the table (63 ms at 10x for the ADP sections, measured).
        Callers get fresh dicts, so a caller that edits a row cannot change the memo."""
        rows = self.derived.get(f"query_once:{sql}:{params!r}", lambda: self.query(sql, params))
        return [dict(r) for r in rows]

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        cursor = self._conn().execute(sql, params)
        row = cursor.fetchone()
        return _as_dicts(cursor.description, [row])[0] if row is not None else None


Row = TypeVar("Row")


def select_list(row_type: type[Any], alias: str = "") -> str:
    """The SELECT list that reads exactly a row dataclass's fields."""
    return ", ".join(alias + f.name for f in fields(row_type))


def as_rows(row_type: type[Row], rows: Sequence[dict[str, SqlValue]]) -> list[Row]:
    """The client's row dicts as typed rows, each dict becoming the row's attributes: no copy
    and no per-field init, since a call can read hundreds of rows (the SELECT must name
    exactly the type's fields: `select_list`)."""
    out = []
    for r in rows:
        row = object.__new__(row_type)
        object.__setattr__(row, "__dict__", r)
        out.append(row)
    return out
