"""The OPA section store: the two paths the section-level `opa.*` tools search, and look-ups by id.

- keyword (SQL): FTS5's BM25 over title, heading, topics and text, ranked from the impacts the
  index stores (retrieval/bm25_impacts.py), with the metadata filters as a row mask;
- vector: cosine similarity over the per-organisation Chroma collections, with `where` filters;
- look-ups by id for opa.get_section.
Rows come back as `SectionRow` (`opa_section_rows`, JSON columns decoded), whichever path read
them; how the tools fuse and boost the two lists is theirs (tools/section_merge.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reference_server.catalog import OPA_COLLECTIONS as COLLECTIONS
from reference_server.catalog import (
    OPA_SECTIONS_BM25,
    SECTION_TAGS_COLUMN,
    SUPERSEDED_TAG,
    section_tag,
)
from reference_server.retrieval.bm25_impacts import Bm25Impacts
from reference_server.retrieval.opa_section_rows import SECTION_COLUMNS, SectionRow
from reference_server.retrieval.sql import SqlClient, fts_words
from reference_server.retrieval.vector import VectorClient, VectorHit, Where

CANDIDATES = 40


@dataclass
class Filters:
    source_orgs: list[str] | None = None
    document_type: str | None = None
    topics: list[str] | None = None
    include_superseded: bool = False
    policy_level: str | None = None
    chunk_types: tuple[str, ...] = ("parent", "child")


ALL_CHUNK_TYPES = {"parent", "child"}


def required_tags(filters: Filters) -> list[list[str]]:
    """The filters as tag groups: a row passes when it has one tag of every group (and, unless
    superseded sections are included, not `SUPERSEDED_TAG`). A filter that keeps every row
    adds no group."""
    groups = []
    if filters.source_orgs:
        groups.append([section_tag("org", v) for v in filters.source_orgs])
    if filters.document_type:
        groups.append([section_tag("type", filters.document_type)])
    if filters.policy_level:
        groups.append([section_tag("level", filters.policy_level)])
    if set(filters.chunk_types) != ALL_CHUNK_TYPES:
        groups.append([section_tag("chunk", v) for v in filters.chunk_types])
    return groups


def _rows_with_tag(sql: SqlClient) -> dict[str, np.ndarray]:
    """Per filter tag, which FTS rows carry it (one bool per row position): read once per
    process from the FTS rows' tag column, which the builder wrote from the section row."""

    def read() -> dict[str, np.ndarray]:
        rows = sql.query(
            f"SELECT {SECTION_TAGS_COLUMN} AS tags FROM opa_sections_fts ORDER BY rowid"
        )
        has: dict[str, np.ndarray] = {}
        for position, row in enumerate(rows):
            for tag in row["tags"].split():
                has.setdefault(tag, np.zeros(len(rows), dtype=bool))[position] = True
        return has

    return sql.derived.get("opa_sections_fts.tags", read)


def filter_mask(sql: SqlClient, filters: Filters, n_rows: int) -> np.ndarray | None:
    """The rows the filters let through, or None when they keep every row."""
    has = _rows_with_tag(sql)
    none = np.zeros(n_rows, dtype=bool)
    mask: np.ndarray | None = None
    for group in required_tags(filters):
        passes = np.logical_or.reduce([has.get(tag, none) for tag in group])
        mask = passes if mask is None else mask & passes
    if not filters.include_superseded and SUPERSEDED_TAG in has:
        current = ~has[SUPERSEDED_TAG]
        mask = current if mask is None else mask & current
    return mask


def _topic_match(topics: Sequence[str], wanted: list[str] | None) -> bool:
    if not wanted:
        return True
    have = {t.lower() for t in topics}
    return any(w.lower() in have or any(w.lower() in t for t in have) for w in wanted)


def sections_by_rowid(sql: SqlClient, rowids: list[int]) -> dict[int, dict[str, Any]]:
    """Section rows (with their documents' columns, not decoded) by the ranking's row ids."""
    rows = sql.query(
        f"""SELECT {SECTION_COLUMNS}, s.rowid AS section_rowid FROM opa_sections s
            JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.rowid IN ({",".join("?" * len(rowids))})""",
        rowids,
    )
    return {r.pop("section_rowid"): r for r in rows}


def keyword_search(
    sql: SqlClient, query: str, filters: Filters, limit: int = CANDIDATES
) -> list[SectionRow]:
    """SQL path: FTS5's BM25 ranking with filters; rows ordered best first.

    The ranking adds the stored impacts of the query's words (the cost per matching row is one
    numpy addition, `ocm query-audit`); the section rows are read for the top rows
    alone.
    """
    words = fts_words(query)
    if not words:
        return []
    ranking = Bm25Impacts(sql, OPA_SECTIONS_BM25)
    mask = filter_mask(sql, filters, len(ranking.row_ids()))
    ranked = ranking.top(words, limit * 2, mask)
    if not ranked:
        return []
    by_rowid = sections_by_rowid(sql, [i for i, _ in ranked])
    rows = [SectionRow.from_sql(by_rowid[i], bm25=score) for i, score in ranked if i in by_rowid]
    return [r for r in rows if _topic_match(r.topics, filters.topics)][:limit]


def vector_search(
    vectors: VectorClient,
    query: str,
    filters: Filters,
    limit: int = CANDIDATES,
    query_vector: list[float] | None = None,
) -> list[VectorHit]:
    """Vector path: one query embedding (`query_vector` when the caller made it), the
    organisations' collections, metadata filters."""
    # Only selective filters go to Chroma; superseded documents are few, so they are filtered after.
    clauses: list[Where] = []
    if filters.document_type:
        clauses.append({"document_type": filters.document_type})
    if filters.policy_level:
        clauses.append({"policy_level": filters.policy_level})
    if len(filters.chunk_types) == 1:
        clauses.append({"chunk_type": filters.chunk_types[0]})
    where: Where | None = (
        clauses[0] if len(clauses) == 1 else ({"$and": clauses} if clauses else None)
    )
    orgs = filters.source_orgs or list(COLLECTIONS)
    hits = vectors.search_many(
        [COLLECTIONS[o] for o in orgs], query, limit * 2, where, query_vector
    )
    kept = [
        h
        for h in hits
        if (filters.include_superseded or not h.metadata.get("is_superseded"))
        and _topic_match(str(h.metadata.get("topics", "")).split(";"), filters.topics)
    ]
    return kept[:limit]


def fetch_sections(sql: SqlClient, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Section rows by id as SQL returns them (JSON columns not decoded): `source.passages`
    reads their text columns alone."""
    if not ids:
        return {}
    rows = sql.query(
        f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.section_id IN ({",".join("?" * len(ids))})""",
        ids,
    )
    return {r["section_id"]: r for r in rows}


@dataclass(frozen=True)
class SectionTree:
    """One section row (SQL path of opa.get_section) with its parent or children when asked."""

    row: SectionRow
    parent: SectionRow | None = None
    children: tuple[SectionRow, ...] = ()


def sql_lookup(
    sql: SqlClient, section_id: str, include_parent: bool, include_children: bool
) -> SectionTree | None:
    """SQL path by id: the section, its parent (for a child) and its children (for a parent)."""
    by_id = f"SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id WHERE s.section_id = ?"
    found = sql.one(by_id, (section_id,))
    if found is None:
        return None
    row = SectionRow.from_sql(found)
    parent = None
    if row.parent_id and include_parent:
        found_parent = sql.one(by_id, (row.parent_id,))
        parent = SectionRow.from_sql(found_parent) if found_parent else None
    children: tuple[SectionRow, ...] = ()
    if row.chunk_type == "parent" and include_children:
        kids = sql.query(
            f"SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id "
            "WHERE s.parent_id = ? ORDER BY s.chunk_idx",
            (section_id,),
        )
        children = tuple(SectionRow.from_sql(k) for k in kids)
    return SectionTree(row, parent, children)


def vector_lookup(vectors: VectorClient, section_id: str) -> VectorHit | None:
    """Vector path by id: the chunk from whichever organisation's collection holds it."""
    for collection in COLLECTIONS.values():
        hits = vectors.get(collection, [section_id])
        if hits:
            return hits[0]
    return None


def current_headings(sql: SqlClient) -> tuple[tuple[str, str], ...]:
    """(document id, text) for every current document's title and each of its section headings,
    distinct, read once per process (which documents a short question may mean:
    tools/section_merge.py)."""

    def read() -> tuple[tuple[str, str], ...]:
        rows = sql.query(
            "SELECT document_id, title AS text FROM opa_documents WHERE is_superseded = 0 "
            "UNION SELECT document_id, section_heading AS text FROM opa_sections "
            "WHERE is_superseded = 0 ORDER BY document_id, text"
        )
        return tuple((str(r["document_id"]), str(r["text"])) for r in rows)

    return sql.derived.get("opa_sections.current_headings", read)


def companions(sql: SqlClient) -> dict[str, str]:
    """Each companion document (a policy's 'Advice to the Profession') -> the document it
    accompanies, read once per process: the two answer the same question, so whether two
    rankings lead with the same guidance counts them as one."""

    def read() -> dict[str, str]:
        rows = sql.query(
            "SELECT document_id, companion_of FROM opa_documents WHERE companion_of IS NOT NULL"
        )
        return {str(r["document_id"]): str(r["companion_of"]) for r in rows}

    return sql.derived.get("opa_sections.companions", read)
