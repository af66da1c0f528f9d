"""Hybrid section search over the OPA corpus, shared by the section-level `opa.*` tools.

Two paths, run by the dual-path runner:
- keyword (SQL): FTS5's BM25 over title, heading, topics and text, ranked from the impacts the
  index stores (retrieval/bm25_impacts.py), with the metadata filters as a row mask;
- vector: cosine similarity over the per-organisation Chroma collections, with `where` filters.
Fusion is reciprocal-rank fusion of the two ranked lists, collapsed to one hit per parent
section (its best chunk), then the spec's boosts: exact phrase +50 %, title match +30 %,
CPSO expectation +20 %, recency decay over 5 years, superseded -70 %.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from reference_server import ranking
from reference_server.catalog import OPA_COLLECTIONS as COLLECTIONS
from reference_server.catalog import (
    OPA_SECTIONS_BM25,
    SECTION_TAGS_COLUMN,
    SUPERSEDED_TAG,
    section_tag,
)
from reference_server.config import Fusion, Settings
from reference_server.retrieval import rerank
from reference_server.retrieval.bm25_impacts import Bm25Impacts
from reference_server.retrieval.sql import STOPWORDS, SqlClient, fts_words
from reference_server.retrieval.vector import VectorClient, VectorHit
from reference_server.scoring.confidence import OPA, Counts
from reference_server.scoring.conflicts import Conflict, compare

CANDIDATES = 40
# Fusion parameters, chosen on the OPA golden set (`make eval`, ablation table): weighted
# reciprocal-rank fusion with a small k and the vector list counting double (keyword matches
# on common words such as 'requirements' are noisier than embeddings).
RRF_K = 10
VEC_W = 2.0


@dataclass
class Filters:
    source_orgs: list[str] | None = None
    document_type: str | None = None
    topics: list[str] | None = None
    include_superseded: bool = False
    policy_level: str | None = None
    chunk_types: tuple[str, ...] = ("parent", "child")


# A section row as SQL returns it (document fields joined in).
SectionRow = dict[str, Any]


@dataclass
class SectionHit:
    """One parent section in the fused ranking, represented by its best-matching chunk."""

    section_id: str
    parent_id: str
    row: dict[str, Any]
    score: float = 0.0
    sql_rank: int | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    vector_meta: dict[str, Any] = field(default_factory=dict)

    @property
    def from_sql(self) -> bool:
        return self.sql_rank is not None

    @property
    def from_vector(self) -> bool:
        return self.vector_rank is not None


SECTION_COLUMNS = """
  s.section_id, s.document_id, s.parent_id, s.chunk_type, s.section_idx, s.chunk_idx, s.section_heading,
  s.text, s.policy_level, s.ipac, d.source_org, d.document_type, d.title AS document_title, d.source_url,
  d.policy_number, d.published_date, d.effective_date, d.updated_date, d.review_date, d.topics,
  d.is_superseded, d.superseded_by
"""


def decode_row(row: dict[str, Any]) -> dict[str, Any]:
    row = dict(row)
    row["topics"] = json.loads(row.get("topics") or "[]")
    row["is_superseded"] = bool(row.get("is_superseded"))
    if row.get("ipac"):
        row["ipac"] = json.loads(row["ipac"])
    return row


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


def _topic_match(topics: list[str], wanted: list[str] | None) -> bool:
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
    numpy addition, `python -m scale.query_audit`); the section rows are read for the top rows
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
    decoded = [decode_row({**by_rowid[i], "bm25": score}) for i, score in ranked if i in by_rowid]
    return [r for r in decoded if _topic_match(r["topics"], filters.topics)][:limit]


def vector_search(
    vectors: VectorClient, query: str, filters: Filters, limit: int = CANDIDATES
) -> list[VectorHit]:
    """Vector path: one query embedding, the organisations' collections, metadata filters."""
    # Only selective filters go to Chroma; superseded documents are few, so they are filtered after.
    clauses: list[dict[str, Any]] = []
    if filters.document_type:
        clauses.append({"document_type": filters.document_type})
    if filters.policy_level:
        clauses.append({"policy_level": filters.policy_level})
    if len(filters.chunk_types) == 1:
        clauses.append({"chunk_type": filters.chunk_types[0]})
    where = clauses[0] if len(clauses) == 1 else ({"$and": clauses} if clauses else None)
    orgs = filters.source_orgs or list(COLLECTIONS)
    hits = vectors.search_many([COLLECTIONS[o] for o in orgs], query, limit * 2, where)
    kept = [
        h
        for h in hits
        if (filters.include_superseded or not h.metadata.get("is_superseded"))
        and _topic_match(str(h.metadata.get("topics", "")).split(";"), filters.topics)
    ]
    return kept[:limit]


def row_from_vector(hit: VectorHit) -> dict[str, Any]:
    """A section row rebuilt from the vector store alone, so the vector path needs no SQL."""
    m = hit.metadata

    def opt(key: str) -> Any:
        return m.get(key) or None

    return {
        "section_id": hit.id,
        "document_id": m.get("document_id"),
        "parent_id": opt("parent_id"),
        "chunk_type": m.get("chunk_type", "parent"),
        "section_idx": int(m.get("section_idx") or 0),
        "chunk_idx": int(m.get("chunk_idx") or 0) or None,
        "section_heading": m.get("section_heading", ""),
        "text": hit.text.split("\n", 1)[1] if "\n" in hit.text else hit.text,
        "policy_level": opt("policy_level"),
        "ipac": json.loads(m["ipac"]) if m.get("ipac") else None,
        "source_org": m.get("source_org"),
        "document_type": m.get("document_type"),
        "document_title": m.get("title", ""),
        "source_url": m.get("source_url", ""),
        "policy_number": opt("policy_number"),
        "published_date": opt("published_date"),
        "effective_date": opt("effective_date"),
        "updated_date": opt("updated_date"),
        "review_date": opt("review_date"),
        "topics": [t for t in str(m.get("topics", "")).split(";") if t],
        "is_superseded": bool(m.get("is_superseded")),
        "superseded_by": opt("superseded_by"),
    }


def fetch_sections(sql: SqlClient, ids: list[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    rows = sql.query(
        f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.section_id IN ({",".join("?" * len(ids))})""",
        ids,
    )
    return {r["section_id"]: decode_row(r) for r in rows}


@dataclass
class SectionTree:
    """One section row (SQL path of opa.get_section) with its parent or children when asked."""

    row: dict[str, Any]
    parent: dict[str, Any] | None = None
    children: list[dict[str, Any]] = field(default_factory=list)


def sql_lookup(
    sql: SqlClient, section_id: str, include_parent: bool, include_children: bool
) -> SectionTree | None:
    """SQL path by id: the section, its parent (for a child) and its children (for a parent)."""
    by_id = f"SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id WHERE s.section_id = ?"
    row = sql.one(by_id, (section_id,))
    if row is None:
        return None
    tree = SectionTree(decode_row(row))
    if row["parent_id"] and include_parent:
        parent = sql.one(by_id, (row["parent_id"],))
        tree.parent = decode_row(parent) if parent else None
    if row["chunk_type"] == "parent" and include_children:
        kids = sql.query(
            f"SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id "
            "WHERE s.parent_id = ? ORDER BY s.chunk_idx",
            (section_id,),
        )
        tree.children = [decode_row(k) for k in kids]
    return tree


def vector_lookup(vectors: VectorClient, section_id: str) -> VectorHit | None:
    """Vector path by id: the chunk from whichever organisation's collection holds it."""
    for collection in COLLECTIONS.values():
        hits = vectors.get(collection, [section_id])
        if hits:
            return hits[0]
    return None


def _query_terms(query: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", query.lower()) if w not in STOPWORDS and len(w) > 2]


def boost(hit: SectionHit, query: str, today: date) -> float:
    """The spec's multiplicative boosts and penalties for one hit."""
    row = hit.row
    factor = 1.0
    q = query.lower().strip()
    if len(q.split()) >= 2 and q in row["text"].lower():
        factor *= 1.5
    terms = _query_terms(query)
    title = row["document_title"].lower()
    if terms and sum(t in title for t in terms) / len(terms) >= 0.5:
        factor *= 1.3
    if row["source_org"] == "cpso" and row.get("policy_level") == "expectation":
        factor *= 1.2
    updated = row.get("updated_date") or row.get("effective_date")
    if updated:
        years = max(0.0, (today - date.fromisoformat(str(updated)[:10])).days / 365.25)
        factor *= 1.0 - 0.2 * min(years, 5.0) / 5.0  # linear decay to 0.8 at five years
    if row["is_superseded"]:
        factor *= 0.3
    return factor


def fuse(
    sql_rows: list[dict[str, Any]] | None,
    vector_hits: list[VectorHit] | None,
    query: str,
    today: date,
    fusion: Fusion | None = None,
) -> list[SectionHit]:
    """Weighted RRF of both lists, one hit per parent section, boosts applied; best first.
    ``fusion`` (the server's settings) may change k, the vector weight or switch boosts off."""
    rrf_k = fusion.rrf_k if fusion else RRF_K
    vec_w = fusion.vector_weight if fusion else VEC_W
    boosts = fusion.boosts if fusion else True
    by_parent: dict[str, SectionHit] = {}

    def parent_of(row_or_meta: dict[str, Any], section_id: str) -> str:
        return row_or_meta.get("parent_id") or section_id

    for rank, row in enumerate(sql_rows or [], start=1):
        pid = parent_of(row, row["section_id"])
        hit = by_parent.get(pid)
        if hit is None:
            by_parent[pid] = SectionHit(row["section_id"], pid, row, sql_rank=rank)
        elif hit.sql_rank is None:
            hit.sql_rank = rank
    for rank, vhit in enumerate(vector_hits or [], start=1):
        pid = parent_of(vhit.metadata, vhit.id)
        hit = by_parent.get(pid)
        if hit is None:
            hit = by_parent[pid] = SectionHit(vhit.id, pid, row_from_vector(vhit))
        if hit.vector_rank is None:
            hit.vector_rank = rank
            hit.vector_similarity = vhit.similarity
            hit.vector_meta = vhit.metadata
    for hit in by_parent.values():
        rrf = 0.0
        if hit.sql_rank is not None:
            rrf += 1.0 / (rrf_k + hit.sql_rank)
        if hit.vector_rank is not None:
            rrf += vec_w / (rrf_k + hit.vector_rank)
        fused = rrf * (rrf_k + 1) * (boost(hit, query, today) if boosts else 1.0)
        hit.score = ranking.score(fused)
    return sorted(by_parent.values(), key=lambda h: (-h.score, h.section_id))


def metadata_conflicts(hits: list[SectionHit]) -> list[Conflict]:
    """Where the vector store's copy of a section's metadata disagrees with SQL (a stale index)."""
    conflicts = []
    for hit in hits:
        meta = hit.vector_meta
        if not meta:
            continue
        checks = [
            ("is_superseded", hit.row["is_superseded"], meta.get("is_superseded")),
            ("updated_date", str(hit.row.get("updated_date") or ""), meta.get("updated_date")),
            ("policy_level", hit.row.get("policy_level") or "", meta.get("policy_level")),
        ]
        if hit.row.get("ipac") and meta.get("ipac"):
            sql_block = json.dumps(hit.row["ipac"], sort_keys=True)
            checks.append(("ipac", sql_block, json.dumps(json.loads(meta["ipac"]), sort_keys=True)))
        for name, sql_value, vector_value in checks:
            c = compare(
                f"{hit.section_id}.{name}",
                sql_value,
                vector_value,
                "SQL metadata is authoritative; rebuild the index",
            )
            if c:
                conflicts.append(c)
    return conflicts


async def rerank_sections(
    settings: Settings, query: str, hits: list[SectionHit], spent_ms: float = 0.0
) -> tuple[list[SectionHit], dict[str, Any]]:
    """Fused hits through the optional reranker (OCM_RERANK); `_meta` to report what it did.
    `spent_ms` (the dual-path time) keeps the rerank call inside the whole-tool timeout."""
    ranked, outcome = await rerank.rerank(
        settings,
        query,
        hits,
        id_of=lambda h: h.section_id,
        text_of=lambda h: (
            f"{h.row['document_title']} - {h.row['section_heading']}\n{h.row['text']}"
        ),
        spent_ms=spent_ms,
    )
    return ranked, ({"rerank": outcome.meta()} if outcome else {})


def section_counts(hits: list[SectionHit]) -> Counts:
    """The OPA evidence of the sections an answer uses: a section both paths found is an SQL hit
    corroborated by the vector path; each vector passage is a passage (see scoring/confidence.py)."""
    return Counts(
        sql_records=sum(h.from_sql for h in hits),
        vector_passages=sum(h.from_vector for h in hits),
        profile=OPA,
        corroborated=sum(h.from_sql and h.from_vector for h in hits),
    )


def truncate(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
