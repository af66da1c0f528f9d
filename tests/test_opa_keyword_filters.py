"""The OPA keyword search's filters are tags in the FTS row (`catalog.section_tags`), applied
as a row mask over the BM25 impacts.

The tags must select exactly the rows the section columns select; a synthetic copy of the index
must keep them (they are filters, not text to vary)."""

from __future__ import annotations

import sqlite3

import pytest

from reference_server.catalog import section_tag, section_tags
from reference_server.config import Settings
from reference_server.index.synthetic_values import Roles
from reference_server.retrieval.opa_sections import Filters, keyword_search, required_tags
from reference_server.retrieval.sql import SqlClient, fts_query

QUERY = "consent documentation virtual care records cleaning"
FILTERS = [
    Filters(),
    Filters(source_orgs=["ontario_health", "pho"]),
    Filters(source_orgs=["cpso"], policy_level="expectation"),
    Filters(document_type="advice", chunk_types=("parent",)),
    Filters(chunk_types=("child",), include_superseded=True),
    Filters(include_superseded=True),
]


def _by_columns(conn: sqlite3.Connection, filters: Filters) -> set[str]:
    """The section ids the same query finds when the filters are read from the section row."""
    clauses, params = ["opa_sections_fts MATCH ?"], [fts_query(QUERY)]
    if filters.source_orgs:
        clauses.append(f"s.source_org IN ({','.join('?' * len(filters.source_orgs))})")
        params += filters.source_orgs
    if filters.document_type:
        clauses.append("s.document_type = ?")
        params.append(filters.document_type)
    if filters.policy_level:
        clauses.append("s.policy_level = ?")
        params.append(filters.policy_level)
    if not filters.include_superseded:
        clauses.append("s.is_superseded = 0")
    clauses.append(f"s.chunk_type IN ({','.join('?' * len(filters.chunk_types))})")
    params += filters.chunk_types
    rows = conn.execute(
        "SELECT s.section_id FROM opa_sections_fts f JOIN opa_sections s ON s.rowid = f.rowid "
        f"WHERE {' AND '.join(clauses)}",
        params,
    )
    return {r[0] for r in rows}


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: repr(f)[8:60])
def test_tags_select_the_rows_the_section_columns_select(
    settings: Settings, filters: Filters
) -> None:
    conn = sqlite3.connect(f"file:{settings.opa_db}?mode=ro", uri=True)
    expected = _by_columns(conn, filters)
    assert expected, "the query must match some sections under every filter"
    got = keyword_search(SqlClient(settings.opa_db), QUERY, filters, limit=10**6)
    assert {r.section_id for r in got} == expected
    scores = [r.bm25 for r in got]
    assert scores == sorted(scores)  # best (most negative) first


def test_a_filter_that_keeps_every_row_adds_no_group() -> None:
    assert required_tags(Filters(include_superseded=True)) == []
    both = required_tags(Filters(source_orgs=["ontario_health", "pho"], chunk_types=("parent",)))
    assert both == [["orgontariohealth", "orgpho"], ["chunkparent"]]


def test_tags_are_single_tokens_and_copies_keep_them() -> None:
    tags = section_tags("ontario_health", "guideline", "child", None, True)
    assert tags == "orgontariohealth typeguideline chunkchild superseded"
    assert section_tag("level", "expectation") == "levelexpectation"
    keep = Roles({}).transform("filter_tags")
    assert keep(tags, 3) == tags
