"""Both paths for opa.freshness_probe, and the optional web check of source pages.

SQL reads each document's dates and its fact provenance from `opa_documents`; the vector path
reads the same documents' metadata from the first parent chunk in each collection (so a stale
vector index shows up as a date conflict). Both are decoded once per process (the index is
read-only) and filtered per call, so a call costs a pass over the documents, not a read and
decode of them: at 100x that was 205 -> 17 ms median. `check_pages` fetches source pages,
bounded and with timeouts, and reports the newest "last updated"-style date each shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from email.utils import parsedate_to_datetime
from functools import partial
from typing import TypedDict

import httpx

from reference_server.catalog import OPA_COLLECTIONS as COLLECTIONS
from reference_server.catalog import parse_dates
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient

_DATE_LABEL = re.compile(
    r"(?:last\s+updated|reviewed and updated|updated|revised)\s*:?\s*(?:</?\w+[^>]*>\s*)*([A-Za-z]+\s+\d{1,2},?\s+\d{4}|[A-Za-z]+\s+\d{4}|\d{4}-\d{2}-\d{2})",
    re.I,
)


class SeenAt(TypedDict):
    """A page a fact was checked against, and the day it was seen (corpus/FORMAT.md)."""

    url: str
    seen: str


class Fact(TypedDict):
    """One fact unit of a document with its resolved provenance, as the index stores it."""

    fact: str
    unverified: bool
    verified_from: list[SeenAt]


@dataclass(frozen=True)
class FactProvenance:
    """One document's fact units (corpus/FORMAT.md), reduced to what the probe reports."""

    facts: int
    unverified: tuple[str, ...]
    first_seen: tuple[tuple[str, str], ...]  # (fact, earliest day a verifying page was seen)
    oldest_seen: str | None  # the earliest of those days, so a call can skip a current document


def fact_provenance(facts: list[Fact]) -> FactProvenance:
    seen = {
        f["fact"]: min(s["seen"] for s in f["verified_from"]) for f in facts if f["verified_from"]
    }
    return FactProvenance(
        facts=len(facts),
        unverified=tuple(f["fact"] for f in facts if f["unverified"]),
        first_seen=tuple(seen.items()),
        oldest_seen=min(seen.values()) if seen else None,
    )


TOPIC_SEPARATOR = "\x00"  # requests refuse control characters, so no asked topic spans two


def topics_text(topics: list[str]) -> str:
    """A document's topics, lower-cased and joined, decoded once per process: a call's topic
    filter is then one substring test per asked topic and document (at 100x, testing each topic
    of each document was 52k string lowerings per call)."""
    return TOPIC_SEPARATOR.join(t.lower() for t in topics)


def reference_day(
    updated: str | None, effective: str | None = None, published: str | None = None
) -> int | None:
    """The day a document's age is counted from (its update, else effective, else published
    date) as an ordinal: decoded once per process, so tiering a call's documents is arithmetic."""
    day = updated or effective or published
    return date.fromisoformat(day[:10]).toordinal() if day else None


@dataclass(frozen=True)
class FreshnessDoc:
    """One document's dates, supersession and fact provenance, as one path holds them.

    The vector index's copy has no effective/published date and no fact provenance."""

    document_id: str
    title: str
    source_org: str
    source_url: str
    updated_date: str | None
    is_superseded: bool
    superseded_by: str | None
    topics: tuple[str, ...]
    topics_text: str  # `topics_text(topics)`
    reference_day: int | None
    fact_provenance: FactProvenance | None = None
    effective_date: str | None = None
    published_date: str | None = None


@dataclass(frozen=True)
class SqlDocuments:
    rows: list[FreshnessDoc]
    built_at: str | None  # the last index build


def _decoded_documents(sql: SqlClient) -> list[FreshnessDoc]:
    rows = sql.query(
        "SELECT document_id, title, source_org, source_url, updated_date, effective_date, published_date, "
        "topics, is_superseded, superseded_by, facts FROM opa_documents ORDER BY document_id"
    )
    out = []
    for r in rows:
        topics = json.loads(r["topics"])
        out.append(
            FreshnessDoc(
                document_id=r["document_id"],
                title=r["title"],
                source_org=r["source_org"],
                source_url=r["source_url"],
                updated_date=r["updated_date"],
                is_superseded=bool(r["is_superseded"]),
                superseded_by=r["superseded_by"],
                topics=tuple(topics),
                topics_text=topics_text(topics),
                reference_day=reference_day(
                    r["updated_date"], r["effective_date"], r["published_date"]
                ),
                fact_provenance=fact_provenance(json.loads(r["facts"])) if r["facts"] else None,
                effective_date=r["effective_date"],
                published_date=r["published_date"],
            )
        )
    return out


def all_documents(sql: SqlClient) -> list[FreshnessDoc]:
    """Every document, decoded once per process (frozen: calls share them)."""
    return sql.derived.get("opa_freshness.documents", lambda: _decoded_documents(sql))


def sql_documents(
    sql: SqlClient, document_ids: Sequence[str] | None, source_orgs: Sequence[str] | None
) -> SqlDocuments:
    """Documents (dates, supersession, fact provenance) and the last index build time.

    The documents are decoded once per process and filtered per call: decoding every
    document's fact provenance on each call cost 140 ms at 100x (6.3 MB of JSON)."""
    docs = all_documents(sql)
    if document_ids:
        wanted = set(document_ids)
        docs = [d for d in docs if d.document_id in wanted]
    if source_orgs:
        orgs = set(source_orgs)
        docs = [d for d in docs if d.source_org in orgs]
    log = sql.one("SELECT built_at FROM ingestion_log ORDER BY id DESC LIMIT 1")
    return SqlDocuments(docs, log["built_at"] if log else None)


def _first_chunks(vectors: VectorClient, collection: str) -> dict[str, FreshnessDoc]:
    """Each document's metadata as one collection holds it (its first parent chunk)."""
    found: dict[str, FreshnessDoc] = {}
    for hit in vectors.get_where(
        collection, {"$and": [{"chunk_type": "parent"}, {"section_idx": 1}]}
    ):
        m = hit.metadata
        topics = [t for t in str(m.get("topics", "")).split(";") if t]
        updated = m.get("updated_date") or None
        found[str(m.get("document_id"))] = FreshnessDoc(
            document_id=str(m.get("document_id")),
            title=str(m.get("title") or ""),
            source_org=str(m.get("source_org") or ""),
            source_url=str(m.get("source_url") or ""),
            updated_date=updated,
            is_superseded=bool(m.get("is_superseded")),
            superseded_by=m.get("superseded_by") or None,
            topics=tuple(topics),
            topics_text=topics_text(topics),
            reference_day=reference_day(updated),
        )
    return found


def vector_documents(
    vectors: VectorClient,
    document_ids: Sequence[str] | None = None,
    source_orgs: Sequence[str] | None = None,
) -> dict[str, FreshnessDoc]:
    """The asked documents' metadata as the vector index holds it, from the asked
    organisations' collections only. Each collection's documents are decoded once per process
    (a dict per document on every call cost 50-75 ms at 100x); calls share them."""
    wanted = set(document_ids) if document_ids else None
    found: dict[str, FreshnessDoc] = {}
    for org in (o for o in COLLECTIONS if not source_orgs or o in source_orgs):
        collection = COLLECTIONS[org]
        docs = vectors.derived.get(
            f"opa_freshness.first_chunks:{collection}", partial(_first_chunks, vectors, collection)
        )
        for doc_id, doc in docs.items():
            if wanted is None or doc_id in wanted:
                found[doc_id] = doc  # a later collection's copy wins
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


@dataclass(frozen=True)
class PageDate:
    """A document whose source page shows a newer date than the corpus, and that date."""

    doc: FreshnessDoc
    page_date: str


async def check_pages(
    docs: Sequence[FreshnessDoc], rewrite: dict[str, str], timeout_s: float
) -> list[PageDate]:
    """Fetch each page concurrently (bounded, with timeouts); a failed fetch is skipped, not fatal.
    Returns the documents whose page shows a newer date than the corpus, with that date."""
    limit = asyncio.Semaphore(4)

    async def one(client: httpx.AsyncClient, doc: FreshnessDoc) -> PageDate | None:
        url = doc.source_url
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
        stored = doc.updated_date or ""
        return PageDate(doc, seen) if seen and seen > stored else None

    async with httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=True,
        headers={"User-Agent": "ocm-freshness-probe"},
    ) as client:
        results = await asyncio.gather(*(one(client, d) for d in docs[:25]))
    return [r for r in results if r]
