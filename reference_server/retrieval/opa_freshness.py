"""Both paths for opa.freshness_probe, and the optional web check of source pages.

SQL reads each document's dates and its fact provenance from `opa_documents`; the vector path
reads the same documents' metadata from the first parent chunk in each collection (so a stale
vector index shows up as a date conflict). `check_pages` fetches source pages, bounded and with
timeouts, and reports the newest "last updated"-style date each shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Sequence
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from reference_server.catalog import OPA_COLLECTIONS as COLLECTIONS
from reference_server.catalog import parse_dates
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient

_DATE_LABEL = re.compile(
    r"(?:last\s+updated|reviewed and updated|updated|revised)\s*:?\s*(?:</?\w+[^>]*>\s*)*([A-Za-z]+\s+\d{1,2},?\s+\d{4}|[A-Za-z]+\s+\d{4}|\d{4}-\d{2}-\d{2})",
    re.I,
)


def sql_documents(
    sql: SqlClient, document_ids: Sequence[str] | None, source_orgs: Sequence[str] | None
) -> dict[str, Any]:
    """Documents (dates, supersession, fact provenance) and the last index build time."""
    clauses: list[str] = []
    params: list[Any] = []
    if document_ids:
        clauses.append(f"document_id IN ({','.join('?' * len(document_ids))})")
        params += list(document_ids)
    if source_orgs:
        clauses.append(f"source_org IN ({','.join('?' * len(source_orgs))})")
        params += list(source_orgs)
    where = " AND ".join(clauses) or "1=1"
    rows = sql.query(
        "SELECT document_id, title, source_org, source_url, updated_date, effective_date, published_date, "
        f"topics, is_superseded, superseded_by, facts FROM opa_documents WHERE {where} ORDER BY document_id",
        params,
    )
    docs = [
        r
        | {
            "topics": json.loads(r["topics"]),
            "is_superseded": bool(r["is_superseded"]),
            "facts": json.loads(r["facts"]) if r.get("facts") else None,
        }
        for r in rows
    ]
    log = sql.one("SELECT built_at FROM ingestion_log ORDER BY id DESC LIMIT 1")
    return {"rows": docs, "built_at": log["built_at"] if log else None}


def vector_documents(
    vectors: VectorClient,
    document_ids: Sequence[str] | None = None,
    source_orgs: Sequence[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """The asked documents' metadata as the vector index holds it (each one's first parent
    chunk), read from the asked organisations' collections only: reading every document of
    every collection on each call grew with the corpus."""
    clauses: list[dict[str, Any]] = [{"chunk_type": "parent"}, {"section_idx": 1}]
    if document_ids:
        clauses.append({"document_id": {"$in": sorted(document_ids)}})
    orgs = [o for o in COLLECTIONS if not source_orgs or o in source_orgs]
    found: dict[str, dict[str, Any]] = {}
    for collection in (COLLECTIONS[o] for o in orgs):
        for hit in vectors.get_where(collection, {"$and": clauses}):
            m = hit.metadata
            found[str(m.get("document_id"))] = {
                "document_id": m.get("document_id"),
                "title": m.get("title"),
                "source_org": m.get("source_org"),
                "source_url": m.get("source_url"),
                "updated_date": m.get("updated_date") or None,
                "is_superseded": bool(m.get("is_superseded")),
                "superseded_by": m.get("superseded_by") or None,
                "topics": [t for t in str(m.get("topics", "")).split(";") if t],
                "facts": None,
            }
    return found


def page_date(html: str, last_modified: str | None) -> str | None:
    """The newest 'last updated'-style date a page shows (ISO), or its Last-Modified header."""
    found = []
    for m in _DATE_LABEL.finditer(html):
        text = m.group(1)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            found.append(text)
        else:
            day = re.search(r"(\d{1,2}),?\s+\d{4}", text)
            parsed = parse_dates(text)
            if parsed:
                found.append(parsed[-1][:8] + (f"{int(day.group(1)):02d}" if day else "01"))
    if not found and last_modified:
        with contextlib.suppress(TypeError, ValueError):
            found.append(parsedate_to_datetime(last_modified).date().isoformat())
    return max(found) if found else None


async def check_pages(
    docs: list[dict[str, Any]], rewrite: dict[str, str], timeout_s: float
) -> list[dict[str, Any]]:
    """Fetch each page concurrently (bounded, with timeouts); a failed fetch is skipped, not fatal.
    Returns the documents whose page shows a newer date than the corpus, with that date."""
    limit = asyncio.Semaphore(4)

    async def one(client: httpx.AsyncClient, doc: dict[str, Any]) -> dict[str, Any] | None:
        url = doc["source_url"]
        for prefix, replacement in rewrite.items():
            if url.startswith(prefix):
                url = replacement + url[len(prefix) :]
        async with limit:
            try:
                resp = await client.get(url)
            except httpx.HTTPError:
                return None
        if resp.status_code != 200:
            return None
        seen = page_date(resp.text, resp.headers.get("last-modified"))
        stored = doc.get("updated_date") or ""
        return doc | {"page_date": seen} if seen and seen > stored else None

    async with httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=True,
        headers={"User-Agent": "ocm-freshness-probe"},
    ) as client:
        results = await asyncio.gather(*(one(client, d) for d in docs[:25]))
    return [r for r in results if r]
