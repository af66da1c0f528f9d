"""The databases are read-only: a write attempted through the server's own connections fails
and changes nothing (nothing a client sends reaches a write path; the fuzz run checks the
checksums after thousands of hostile calls too)."""

from __future__ import annotations

import sqlite3

import pytest
from fastmcp import FastMCP

from evals.run.fuzz import database_checksums
from reference_server.config import Settings

WRITES = [
    ("opa_sql", "INSERT INTO opa_documents (document_id) VALUES ('injected')"),
    ("opa_sql", "DROP TABLE opa_sections"),
    ("ohip_sql", "DELETE FROM ohip_fee_schedule"),
    ("ohip_sql", "UPDATE odb_drugs SET din = 'x'"),
    ("opa_sql", "CREATE TABLE injected (x)"),
    ("ohip_sql", "PRAGMA user_version = 99"),
]


@pytest.mark.parametrize(("database", "sql"), WRITES)
def test_sql_writes_fail_and_change_nothing(
    server: FastMCP, settings: Settings, database: str, sql: str
) -> None:
    before = database_checksums(settings.index_dir)
    client = getattr(server.runtime, database)
    with pytest.raises(sqlite3.Error, match=r"readonly|read-only|query_only|query only"):
        client.query(sql)
    # switching the guard off does not help: the connection itself is opened mode=ro
    client.query("PRAGMA query_only = OFF")
    try:
        with pytest.raises(sqlite3.Error, match=r"readonly|read-only"):
            client.query(sql)
    finally:
        client.query("PRAGMA query_only = ON")
    assert database_checksums(settings.index_dir) == before


def test_serving_leaves_the_built_index_byte_identical(settings: Settings) -> None:
    """Chroma's embedded store rewrites its files when a collection loads; the server reads a
    private copy, so starting, warming and querying every collection writes nothing to the index."""
    from reference_server.server import build_server

    before = database_checksums(settings.index_dir)
    server = build_server(settings)
    server.runtime.warm_up()
    assert database_checksums(settings.index_dir) == before
