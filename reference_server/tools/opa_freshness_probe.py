"""opa.freshness_probe: which guidance documents are stale, superseded, or changed at the source.

Staleness tiers (from `updated_date`, as of the configured date): superseded documents are
definitely stale, over 2 years likely stale, over 1 year potentially stale. The vector path
checks that the vector index agrees with SQL on each document's date (a stale index is a
conflict). `check_web` fetches each document's URL with timeouts when web access is enabled
by configuration (OCM_WEB=1), and reports pages that show a newer date than the corpus.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from datetime import date
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from reference_server.catalog import OPA_COLLECTIONS as COLLECTIONS
from reference_server.catalog import parse_dates
from reference_server.errors import NotFoundError
from reference_server.retrieval.dual_path import run_dual
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import StrictModel, TextItem, ToolOutput, ToolSpec
from reference_server.tools.common import Path, SourceOrg

NAME = "opa.freshness_probe"
Staleness = Literal["potentially_stale", "likely_stale", "superseded"]
PRIORITY = {"cpso": 0, "ontario_health": 1, "pho": 2, "moh": 3, "cep": 4}
_DATE_LABEL = re.compile(
    r"(?:last\s+updated|reviewed and updated|updated|revised)\s*:?\s*(?:</?\w+[^>]*>\s*)*([A-Za-z]+\s+\d{1,2},?\s+\d{4}|[A-Za-z]+\s+\d{4}|\d{4}-\d{2}-\d{2})",
    re.I,
)


class Request(StrictModel):
    document_ids: list[TextItem] | None = Field(
        default=None, max_length=100, description="Specific documents to check."
    )
    source_orgs: list[SourceOrg] | None = Field(default=None, description="Organisations to check.")
    topics: list[TextItem] | None = Field(
        default=None, max_length=20, description="Topics to check (match any)."
    )
    check_web: bool = Field(
        default=False,
        description="Fetch source pages for newer dates (needs web access enabled by configuration).",
    )


class StaleDocument(BaseModel):
    document_id: str
    title: str
    source_org: str
    last_updated: str | None
    days_old: int | None
    staleness: Staleness
    superseded_by: str | None
    topics: list[str]


class PotentialUpdate(BaseModel):
    source_org: str
    document_id: str
    indication: str
    url: str
    detected_date: str


class Response(BaseModel):
    provenance: list[Path]
    documents_checked: int
    stale_documents: list[StaleDocument]
    potential_updates: list[PotentialUpdate]
    last_corpus_update: str | None
    as_of: str
    recommendations: list[str]
    conflicts: list[Conflict]


def tier(doc: dict[str, Any], today: date) -> tuple[Staleness | None, int | None]:
    updated = doc.get("updated_date") or doc.get("effective_date") or doc.get("published_date")
    days = (today - date.fromisoformat(updated[:10])).days if updated else None
    if doc["is_superseded"]:
        return "superseded", days
    if days is None:
        return None, None
    if days > 730:
        return "likely_stale", days
    if days > 365:
        return "potentially_stale", days
    return None, days


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
        from email.utils import parsedate_to_datetime

        with contextlib.suppress(TypeError, ValueError):
            found.append(parsedate_to_datetime(last_modified).date().isoformat())
    return max(found) if found else None


async def check_pages(rt: Runtime, docs: list[dict[str, Any]]) -> list[PotentialUpdate]:
    """Fetch each page concurrently (bounded, with timeouts); a failed fetch is skipped, not fatal."""
    rewrite = rt.settings.web_url_rewrite
    limit = asyncio.Semaphore(4)

    async def one(client: httpx.AsyncClient, doc: dict[str, Any]) -> PotentialUpdate | None:
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
        if seen and seen > stored:
            return PotentialUpdate(
                source_org=doc["source_org"],
                document_id=doc["document_id"],
                indication=f"page shows {seen}, corpus has {stored or 'no date'}",
                url=doc["source_url"],
                detected_date=seen,
            )
        return None

    timeout = httpx.Timeout(rt.settings.web_timeout_s)
    async with httpx.AsyncClient(
        timeout=timeout, follow_redirects=True, headers={"User-Agent": "ocm-freshness-probe"}
    ) as client:
        results = await asyncio.gather(*(one(client, d) for d in docs[:25]))
    return [r for r in results if r]


async def run(rt: Runtime, req: Request) -> ToolOutput:
    def sql_docs() -> dict[str, Any]:
        clauses, params = [], []
        if req.document_ids:
            clauses.append(f"document_id IN ({','.join('?' * len(req.document_ids))})")
            params += req.document_ids
        if req.source_orgs:
            clauses.append(f"source_org IN ({','.join('?' * len(req.source_orgs))})")
            params += req.source_orgs
        where = " AND ".join(clauses) or "1=1"
        rows = rt.opa_sql.query(
            f"SELECT document_id, title, source_org, source_url, updated_date, effective_date, published_date, topics, is_superseded, superseded_by FROM opa_documents WHERE {where} ORDER BY document_id",
            params,
        )
        log = rt.opa_sql.one("SELECT built_at FROM ingestion_log ORDER BY id DESC LIMIT 1")
        return {"rows": rows, "built_at": log["built_at"] if log else None}

    def vector_docs() -> dict[str, dict[str, Any]]:
        """Each document's metadata as the vector index holds it (its first parent chunk)."""
        found: dict[str, dict[str, Any]] = {}
        for collection in COLLECTIONS.values():
            for hit in rt.vectors.get_where(
                collection, {"$and": [{"chunk_type": "parent"}, {"section_idx": 1}]}
            ):
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
                }
        return found

    dual = await run_dual(rt.settings, sql=sql_docs, vector=vector_docs)
    if dual.sql.value is None:  # degraded: the vector index's copy of the metadata
        vdocs = (dual.vector.value or {}).values()
        docs = [
            d
            for d in vdocs
            if (not req.document_ids or d["document_id"] in req.document_ids)
            and (not req.source_orgs or d["source_org"] in req.source_orgs)
        ]
        built_at = None
    else:
        docs = [
            r | {"topics": json.loads(r["topics"]), "is_superseded": bool(r["is_superseded"])}
            for r in dual.sql.value["rows"]
        ]
        built_at = dual.sql.value["built_at"]
        if req.document_ids:
            missing = sorted(set(req.document_ids) - {d["document_id"] for d in docs})
            if missing:
                raise NotFoundError(
                    "document", ", ".join(missing), "Use opa.search_sections to find document ids."
                )
    if req.topics:
        wanted = [t.lower() for t in req.topics]
        docs = [d for d in docs if any(w in t.lower() for w in wanted for t in d.get("topics", []))]
    today = rt.settings.today()
    stale: list[StaleDocument] = []
    for d in docs:
        level, days = tier(d, today)
        if level:
            stale.append(
                StaleDocument(
                    document_id=d["document_id"],
                    title=d["title"],
                    source_org=d["source_org"],
                    last_updated=d.get("updated_date"),
                    days_old=days,
                    staleness=level,
                    superseded_by=d.get("superseded_by"),
                    topics=list(d.get("topics") or []),
                )
            )
    order = {"superseded": 0, "likely_stale": 1, "potentially_stale": 2}
    stale.sort(
        key=lambda s: (order[s.staleness], PRIORITY.get(s.source_org, 9), -(s.days_old or 0))
    )
    conflicts = []
    vdates = {k: str(v.get("updated_date") or "") for k, v in (dual.vector.value or {}).items()}
    for d in docs:
        if dual.sql.value is not None and d["document_id"] in vdates:
            c = compare(
                f"{d['document_id']}.updated_date",
                str(d.get("updated_date") or ""),
                vdates[d["document_id"]],
                "SQL date used; rebuild the vector index",
            )
            if c:
                conflicts.append(c)
    updates: list[PotentialUpdate] = []
    recommendations: list[str] = []
    if req.check_web:
        if rt.settings.web_enabled:
            updates = await check_pages(rt, [d for d in docs if "source_url" in d])
        else:
            recommendations.append(
                "Web checks are disabled by configuration (set OCM_WEB=1 to let check_web fetch source pages)."
            )
    superseded = [s for s in stale if s.staleness == "superseded"]
    likely = [s for s in stale if s.staleness == "likely_stale"]
    potential = [s for s in stale if s.staleness == "potentially_stale"]
    for s in superseded:
        recommendations.append(
            f"Stop citing '{s.title}' ({s.document_id}): superseded by {s.superseded_by or 'newer guidance'}."
        )
    if likely:
        recommendations.append(
            "Re-ingest likely stale documents first (most clinically important first): "
            + ", ".join(s.document_id for s in likely[:10])
            + ("…" if len(likely) > 10 else "")
        )
    if potential:
        recommendations.append(
            f"Check {len(potential)} potentially stale document(s) against their source pages at the next refresh."
        )
    for u in updates:
        recommendations.append(f"Re-ingest {u.document_id}: {u.indication}.")
    recommendations.append(
        "Refresh the corpus at least every 6 months, CPSO and Ontario Health first."
    )
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        documents_checked=len(docs),
        stale_documents=stale,
        potential_updates=updates,
        last_corpus_update=built_at,
        as_of=today.isoformat(),
        recommendations=recommendations,
        conflicts=conflicts,
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Check guidance freshness: superseded documents (definitely stale), documents not updated for over 2 years "
        "(likely stale) or over 1 year (potentially stale), with re-ingestion recommendations. Optional check_web "
        "fetches source pages for newer dates when web access is enabled by configuration."
    ),
    request=Request,
    response=Response,
    run=run,
)
