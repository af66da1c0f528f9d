"""The IPAC store behind opa.ipac_guidance, in the paths' naming scheme (ARCHITECTURE.md).

SQL path: PHO parent sections whose structured IPAC block is about the topic, plus keyword hits
for the topic words and the item, plus CPSO's own IPAC policy and advice to compare levels with.
Vector path: the PHO collection's parent chunks nearest the same words.

CPSO's IPAC sections are a fixed comparison set that grows with the corpus: their level
statements are split and indexed by word once per process (`cpso_statements`), so a call pays
for the statements that name its items, not for reading them all (10x corpus, measured with
`python -m scale.query_audit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reference_server.retrieval import opa_sections
from reference_server.retrieval.opa_sections import SECTION_COLUMNS, Filters, decode_row
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit
from reference_server.scoring.conflicts import StatementIndex, statements_from_text

FILTERS = Filters(source_orgs=["pho"], chunk_types=("parent",))
LIMIT = 10


@dataclass
class SqlFound:
    """PHO sections to fuse, and CPSO's IPAC statements to compare requirement levels with."""

    pho: list[dict[str, Any]]
    cpso: StatementIndex


def source_label(row: dict[str, Any]) -> str:
    """How a conflict names a section's source: 'PHO: <document title>'."""
    return f"{row['source_org'].upper()}: {row['document_title']}"


def ipac_sections(sql: SqlClient, topic: str) -> list[dict[str, Any]]:
    """Current PHO parent sections whose structured IPAC block is about this topic."""
    rows = sql.query_once(
        f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.source_org = 'pho' AND s.chunk_type = 'parent' AND d.is_superseded = 0
            AND json_extract(s.ipac, '$.topic') = ?""",
        (topic,),
    )
    return [decode_row(r) for r in rows]


def cpso_ipac_sections(sql: SqlClient) -> list[dict[str, Any]]:
    """CPSO's own IPAC policy and advice (documents tagged 'ipac'): what opa.ipac_guidance
    compares PHO's requirement levels against. Read once per process, by `cpso_statements`."""
    rows = sql.query(
        f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
            WHERE s.source_org = 'cpso' AND s.chunk_type = 'parent' AND d.is_superseded = 0
            AND EXISTS (SELECT 1 FROM json_each(d.topics) WHERE json_each.value = 'ipac')
            ORDER BY s.section_id""",
    )
    return [decode_row(r) for r in rows]


def cpso_statements(sql: SqlClient) -> StatementIndex:
    """The level statements of CPSO's IPAC sections, indexed once per process (read-only index)."""

    def build() -> StatementIndex:
        return StatementIndex(
            [
                statement
                for row in cpso_ipac_sections(sql)
                for statement in statements_from_text(
                    row["text"], row["document_id"], source_label(row)
                )
            ]
        )

    return sql.derived.get("opa_ipac.cpso_statements", build)


def keyword_search(sql: SqlClient, topic: str, query: str, limit: int = LIMIT) -> SqlFound:
    """SQL path: the topic's tagged PHO sections first, then keyword hits not already found."""
    rows = ipac_sections(sql, topic)
    seen = {r["section_id"] for r in rows}
    rows += [
        r
        for r in opa_sections.keyword_search(sql, query, FILTERS, limit=limit)
        if r["section_id"] not in seen
    ]
    return SqlFound(pho=rows, cpso=cpso_statements(sql))


def vector_search(vectors: VectorClient, query: str, limit: int = LIMIT) -> list[VectorHit]:
    """Vector path: PHO parent chunks nearest the topic words and item."""
    return opa_sections.vector_search(vectors, query, FILTERS, limit=limit)
