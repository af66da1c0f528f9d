"""Ontario Health screening programs: which program a name means, and both paths to its documents.

SQL reads each current program document's structured block from `opa_documents`; the vector
path searches the Ontario Health collection and rebuilds the same blocks from chunk metadata,
so either path can answer alone. Program names are matched on whole words ("benefits" is not
"fit").
"""

from __future__ import annotations

import json
import re
from typing import Any

from reference_server.retrieval.opa_sections import Filters, vector_search
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit

PROGRAM_ALIASES = {
    "cervical": ["cervical", "cervix", "pap", "pap test", "hpv", "ocsp", "colposcopy"],
    "breast": ["breast", "mammogram", "mammography", "obsp", "high risk obsp"],
    "colorectal": [
        "colorectal",
        "colon",
        "bowel",
        "fit",
        "fecal immunochemical",
        "coloncancercheck",
        "colonoscopy",
    ],
    "lung": ["lung", "low-dose ct", "ldct", "olsp"],
}
_ALIAS_PATTERNS = {
    key: re.compile(r"\b(?:" + "|".join(re.escape(a) for a in aliases) + r")s?\b", re.I)
    for key, aliases in PROGRAM_ALIASES.items()
}


def program_key(name: str) -> str | None:
    """The local program a name refers to (whole-word aliases, first match in the text), or None."""
    found = [(m.start(), key) for key, pat in _ALIAS_PATTERNS.items() if (m := pat.search(name))]
    return min(found)[1] if found else None


def _as_program_doc(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "document_id": row["document_id"],
        "title": row.get("title") or "",
        "source_url": row.get("source_url") or "",
        "effective_date": row.get("effective_date") or None,
        "updated_date": row.get("updated_date") or None,
        "review_date": row.get("review_date") or None,
        "program": row["program"],
    }


def sql_program_docs(sql: SqlClient, key: str | None) -> list[dict[str, Any]]:
    """Current Ontario Health documents whose program block is `key` (none when key is None)."""
    if key is None:
        return []
    return [
        _as_program_doc(r | {"program": json.loads(r["program"])})
        for r in sql.derived.get("program_rows_by_key", lambda: _program_rows_by_key(sql)).get(
            key, []
        )
    ]


def _program_rows_by_key(sql: SqlClient) -> dict[str, list[dict[str, Any]]]:
    """Program documents by program key, read and keyed once per process (the index is
    read-only): decoding every program block on every call grew with the corpus (10x: most
    of opa.program_lookup's time). Blocks stay JSON text, so each call decodes its own."""
    rows = sql.query(
        "SELECT document_id, title, source_url, effective_date, updated_date, review_date, program "
        "FROM opa_documents WHERE source_org = 'ontario_health' AND is_superseded = 0 "
        "AND program IS NOT NULL ORDER BY document_id"
    )
    by_key: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_key.setdefault(json.loads(row["program"]).get("key"), []).append(row)
    return by_key


def vector_program_hits(vectors: VectorClient, query: str, limit: int = 8) -> list[VectorHit]:
    """Ontario Health passages nearest the question (current documents only)."""
    return vector_search(vectors, query, Filters(source_orgs=["ontario_health"]), limit=limit)


def program_docs_from_hits(hits: list[VectorHit], key: str | None) -> list[dict[str, Any]]:
    """Program documents rebuilt from vector-chunk metadata, one per document."""
    found: dict[str, dict[str, Any]] = {}
    for h in hits:
        m = h.metadata
        if key is None or not m.get("program") or m.get("document_id") in found:
            continue
        program = json.loads(m["program"])
        if program.get("key") == key:
            found[m["document_id"]] = _as_program_doc(dict(m) | {"program": program})
    return sorted(found.values(), key=lambda d: d["document_id"])
