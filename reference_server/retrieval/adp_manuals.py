"""The ADP store: funding rules, exclusions, CEP thresholds and manual sections (SQL), manual and
rule passages (vector).

The ADP tables are small (tens of rules, ~500 sections), so `keyword_search` reads them whole
and adp.get filters in its merge; `vector_search` ranks passages of the device's manual and the
core manual. `rows_from_passages` turns rule passages back into SQL-shaped rows for answers when
the SQL path is down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reference_server.catalog import ADP_CEP_ID, OFF_COLLECTIONS
from reference_server.retrieval.derived import DerivedValues
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit

COLLECTION = OFF_COLLECTIONS["adp"]
CORE = "core_manual"  # the Policies and Procedures manual every category shares
VECTOR_CANDIDATES = 8


@dataclass(eq=False)  # one per process, shared read-only between calls
class SqlData:
    funding: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    cep: dict[str, dict[str, Any]]
    sections: list[dict[str, Any]]
    descriptive: list[dict[str, Any]]
    # what callers derive from these rows (the sections' index), built once like the rows
    derived: DerivedValues = field(default_factory=DerivedValues)


def keyword_search(db: SqlClient) -> SqlData:
    """SQL path: every rule (share, exclusion, descriptive), CEP threshold and summarised
    manual section. The index is read-only, so they are read once per process and shared
    (readers never edit a row): re-reading them cost ~6.5 ms of each adp.get at 1x and 63 ms
    at 10x, copying them ~9% of its time at 10x."""
    return db.derived.get("adp_sql_data", lambda: _sql_data(db))


def _sql_data(db: SqlClient) -> SqlData:
    return SqlData(
        funding=db.query("SELECT * FROM adp_funding_rule ORDER BY rule_id"),
        exclusions=db.query("SELECT * FROM adp_exclusion ORDER BY exclusion_id"),
        cep={r["household"]: r for r in db.query("SELECT * FROM adp_cep_threshold")},
        sections=db.query(
            "SELECT id, policy_uid, adp_doc, manual, section_ref, heading, page_num, topics, summary "
            "FROM adp_sections WHERE kind = 'policy' AND summary != '' ORDER BY id"
        ),
        descriptive=db.query("SELECT * FROM adp_descriptive_rule ORDER BY rule_id"),
    )


def vector_search(
    vectors: VectorClient,
    query: str,
    category: str | None,
    with_cep: bool,
    limit: int = VECTOR_CANDIDATES,
) -> list[VectorHit]:
    """Vector path: passages of the category's manual and the core manual (+ the CEP passage)."""
    where = {"adp_doc": {"$in": [category, CORE]}} if category else None
    hits = vectors.search(COLLECTION, query, n_results=limit, where=where)
    if with_cep:
        hits += vectors.get(COLLECTION, [ADP_CEP_ID])
    return hits


def rows_from_passages(hits: list[VectorHit], doc_type: str) -> list[dict[str, Any]]:
    """Passage metadata in the SQL row shape, for answers when the SQL path is down."""
    rows = []
    for h in hits:
        m = h.metadata
        if m.get("doc_type") == doc_type:
            row = {**m, "id": h.id, "section_ref": m.get("section"), "page_num": m.get("page")}
            if doc_type == "descriptive_rule":  # its sentence is the passage after the label
                row["summary"] = h.text.split("): ", 1)[-1]
            rows.append(row)
    return rows
