"""The CEP clinical-tools store behind opa.clinical_tools, in the paths' naming scheme.

SQL path: every CEP document carrying a structured `tool` block (a few dozen rows; the tool
filters them by condition, name, category and feature). Vector path: CEP chunks nearest the
request's words, whose metadata carry the same tool block so the path can answer alone.
"""

from __future__ import annotations

import json
from typing import Any

from reference_server.retrieval import opa_sections
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit

LIMIT = 20


def keyword_search(sql: SqlClient) -> list[dict[str, Any]]:
    """SQL path: all CEP tool documents, tool block and topics decoded.

    Decoded once per process (the index is read-only): decoding them on every call grew with
    the catalogue (1.8 ms per call at 10x). Callers share the documents and must not edit them."""

    def decoded() -> list[dict[str, Any]]:
        rows = sql.query(
            "SELECT document_id, title, source_url, updated_date, topics, tool FROM opa_documents "
            "WHERE source_org = 'cep' AND tool IS NOT NULL"
        )
        return [
            with_match_names(r | {"tool": json.loads(r["tool"]), "topics": json.loads(r["topics"])})
            for r in rows
        ]

    return list(sql.derived.get("opa_cep_tools.documents", decoded))


def with_match_names(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with its tool's conditions and its topics lower-cased once, as a tuple and as
    one string joined by a control character (requests refuse those), so matching a condition
    against every document does not lower the same names on every call (100x: ~3,000 documents)."""
    names = tuple(n.lower() for n in [*doc["tool"].get("conditions", []), *doc["topics"]])
    return doc | {
        "match_names": names,
        "match_text": "\x00".join(names),
        "title_lower": doc["title"].lower(),
    }


def vector_search(vectors: VectorClient, query: str, limit: int = LIMIT) -> list[VectorHit]:
    """Vector path: CEP chunks nearest the query."""
    return opa_sections.vector_search(
        vectors, query, opa_sections.Filters(source_orgs=["cep"]), limit=limit
    )


def tools_from_vectors(hits: list[VectorHit]) -> list[dict[str, Any]]:
    """CEP tool documents rebuilt from vector-chunk metadata, one per document."""
    found: dict[str, dict[str, Any]] = {}
    for h in hits:
        m = h.metadata
        if m.get("tool") and m.get("document_id") not in found:
            found[m["document_id"]] = with_match_names(
                {
                    "document_id": m["document_id"],
                    "title": m.get("title", ""),
                    "source_url": m.get("source_url", ""),
                    "updated_date": m.get("updated_date") or None,
                    "topics": [t for t in str(m.get("topics", "")).split(";") if t],
                    "tool": json.loads(m["tool"]),
                }
            )
    return list(found.values())
