"""The IPAC store behind opa.ipac_guidance, in the paths' naming scheme (ARCHITECTURE.md).

SQL path: PHO parent sections whose structured IPAC block is about the topic, plus keyword hits
for the topic words and the item, plus CPSO's own IPAC policy and advice to compare levels with.
Vector path: the PHO collection's parent chunks nearest the same words.

A topic's sections grow with the corpus. Which sections carry which topic, and in which
settings, is read once per process (`topic_rows`); a call ranks the topic's sections by the same
BM25 impacts as the keyword search and reads only the best `TOPIC_LIMIT` (at 100x, 1,000
reprocessing sections were read, decoded and fused on every call). CPSO's IPAC sections are a
fixed comparison set that grows too: their level statements are split and indexed by word once
per process (`cpso_statements`), so a call pays for the statements that name its items, not for
reading them all (10x corpus, measured with `ocm query-audit`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from reference_server.catalog import OPA_SECTIONS_BM25
from reference_server.retrieval import opa_sections
from reference_server.retrieval.bm25_impacts import Bm25Impacts
from reference_server.retrieval.opa_section_rows import SECTION_COLUMNS, IpacBlock, SectionRow
from reference_server.retrieval.opa_sections import Filters
from reference_server.retrieval.sql import SqlClient, fts_words
from reference_server.retrieval.vector import VectorClient, VectorHit
from reference_server.scoring.conflicts import StatementIndex, statements_from_text

FILTERS = Filters(source_orgs=["pho"], chunk_types=("parent",))
LIMIT = 10
# The most sections an answer is built from (opa.ipac_guidance's n_sections, at most 50): more
# of a topic's sections than this cannot reach the answer, so they are not read.
TOPIC_LIMIT = 50
SETTINGS = ("office", "clinic", "procedure_room")


@dataclass
class SqlFound:
    """PHO sections to fuse, CPSO's IPAC statements to compare requirement levels with, and how
    many current sections the topic has in each setting (the read ones are a ranked subset)."""

    pho: list[SectionRow]
    cpso: StatementIndex
    topic_sections: Counter[str]


@dataclass(frozen=True)
class TopicRows:
    """Current PHO parent sections with an IPAC block: per topic, their FTS row positions (a
    mask for the impact ranking) and how many apply to each setting."""

    row_ids: dict[str, np.ndarray]  # sorted
    positions: dict[str, np.ndarray]
    per_setting: dict[str, Counter[str]]


def section_settings(ipac: IpacBlock | None) -> list[str]:
    """The settings an IPAC block applies to (all of them when it names none)."""
    return list(ipac.settings) if ipac and ipac.settings else list(SETTINGS)


def source_label(row: SectionRow) -> str:
    """How a conflict names a section's source: 'PHO: <document title>'."""
    return f"{row.source_org.upper()}: {row.document_title}"


def topic_rows(sql: SqlClient) -> TopicRows:
    """Read once per process (the index is read-only): a scan of every IPAC block."""

    def read() -> TopicRows:
        row_ids = Bm25Impacts(sql, OPA_SECTIONS_BM25).row_ids()
        rows = sql.query(
            """SELECT s.rowid AS row_id, s.ipac FROM opa_sections s
               JOIN opa_documents d ON d.document_id = s.document_id
               WHERE s.source_org = 'pho' AND s.chunk_type = 'parent' AND d.is_superseded = 0
               AND s.ipac IS NOT NULL ORDER BY s.rowid"""
        )
        by_topic: dict[str, list[int]] = {}
        per_setting: dict[str, Counter[str]] = {}
        for row in rows:
            block = IpacBlock.decode(row["ipac"])
            if block is None or block.topic is None:
                continue  # no topic a request can name
            topic = block.topic
            by_topic.setdefault(topic, []).append(row["row_id"])
            per_setting.setdefault(topic, Counter()).update(section_settings(block))
        ids = {topic: np.array(found, dtype=np.int64) for topic, found in by_topic.items()}
        positions = {}
        for topic, found in ids.items():
            at = np.searchsorted(row_ids, found).clip(max=len(row_ids) - 1)
            mask = np.zeros(len(row_ids), dtype=bool)
            mask[at[row_ids[at] == found]] = True  # a section missing from FTS ranks last
            positions[topic] = mask
        return TopicRows(ids, positions, per_setting)

    return sql.derived.get("opa_ipac.topic_rows", read)


def ipac_sections(
    sql: SqlClient, topic: str, query: str, limit: int = TOPIC_LIMIT
) -> list[SectionRow]:
    """The topic's current PHO parent sections, best keyword match for the query first, then
    (when fewer match) the others in index order: at most `limit` of them."""
    rows_of = topic_rows(sql)
    if topic not in rows_of.row_ids:
        return []
    ranking = Bm25Impacts(sql, OPA_SECTIONS_BM25)
    ranked = [i for i, _ in ranking.top(fts_words(query), limit, rows_of.positions[topic])]
    if len(ranked) < limit:
        found = set(ranked)
        rest = (i for i in rows_of.row_ids[topic].tolist() if i not in found)
        ranked += [i for _, i in zip(range(limit - len(ranked)), rest, strict=False)]
    if not ranked:
        return []
    by_rowid = opa_sections.sections_by_rowid(sql, ranked)
    return [SectionRow.from_sql(by_rowid[i]) for i in ranked if i in by_rowid]


def cpso_ipac_sections(sql: SqlClient) -> list[SectionRow]:
    """CPSO's own IPAC policy and advice (documents tagged 'ipac'): what opa.ipac_guidance
    compares PHO's requirement levels against. Read once per process, by `cpso_statements`."""
    rows = sql.query(
        f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.source_org = 'cpso' AND s.chunk_type = 'parent' AND d.is_superseded = 0
            AND EXISTS (SELECT 1 FROM json_each(d.topics) WHERE json_each.value = 'ipac')
            ORDER BY s.section_id""",
    )
    return [SectionRow.from_sql(r) for r in rows]


def cpso_statements(sql: SqlClient) -> StatementIndex:
    """The level statements of CPSO's IPAC sections, indexed once per process (read-only index)."""

    def build() -> StatementIndex:
        return StatementIndex(
            [
                statement
                for row in cpso_ipac_sections(sql)
                for statement in statements_from_text(row.text, row.document_id, source_label(row))
            ]
        )

    return sql.derived.get("opa_ipac.cpso_statements", build)


def topic_limit(n_sections: int) -> int:
    """How many of a topic's sections to read for an answer built from the best `n_sections`:
    twice that (at least LIMIT, at most TOPIC_LIMIT), so the fusion with the vector path has
    room to reorder, while a topic that grows with the corpus costs what the answer needs, not
    what the topic holds."""
    return min(TOPIC_LIMIT, max(LIMIT, 2 * n_sections))


def keyword_search(
    sql: SqlClient, topic: str, query: str, limit: int = LIMIT, topic_limit: int = TOPIC_LIMIT
) -> SqlFound:
    """SQL path: the topic's tagged PHO sections first (at most `topic_limit`, best keyword match
    first), then keyword hits not already found."""
    rows = ipac_sections(sql, topic, query, topic_limit)
    seen = {r.section_id for r in rows}
    rows += [
        r
        for r in opa_sections.keyword_search(sql, query, FILTERS, limit=limit)
        if r.section_id not in seen
    ]
    counts = topic_rows(sql).per_setting.get(topic, Counter())
    return SqlFound(pho=rows, cpso=cpso_statements(sql), topic_sections=counts)


def vector_search(vectors: VectorClient, query: str, limit: int = LIMIT) -> list[VectorHit]:
    """Vector path: PHO parent chunks nearest the topic words and item."""
    return opa_sections.vector_search(vectors, query, FILTERS, limit=limit)
