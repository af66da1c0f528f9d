"""opa.freshness_probe: which guidance documents are stale, superseded, or changed at the source.

Staleness tiers (from `updated_date`, as of the configured date): superseded documents are
definitely stale, over 2 years likely stale, over 1 year potentially stale. The vector path
checks that the vector index agrees with SQL on each document's date (a stale index is a
conflict). `check_web` fetches each document's URL with timeouts when web access is enabled
by configuration (OCM_WEB=1), and reports pages that show a newer date than the corpus.
Ontario Health and Ministry documents also carry per-fact provenance (corpus/FORMAT.md):
documents with unverified facts, or facts whose verifying page was seen over a year ago, are
reported under `provenance_issues`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.errors import NotFoundError
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_freshness import (
    FactProvenance,
    all_documents,
    check_pages,
    sql_documents,
    vector_documents,
)
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import StrictModel, TextItem, ToolOutput, ToolSpec
from reference_server.tools.common import Path, SourceOrg

NAME = "opa.freshness_probe"
Staleness = Literal["potentially_stale", "likely_stale", "superseded"]
PRIORITY = {"cpso": 0, "ontario_health": 1, "pho": 2, "moh": 3, "cep": 4}
STALE_SOURCE_DAYS = 365  # a verifying page seen over a year ago may have changed since


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
    n_results: int = Field(
        default=100,
        ge=1,
        le=500,
        description="Most entries listed in stale_documents (most urgent first) and in provenance_issues (default 100, max 500).",
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


class ProvenanceIssue(BaseModel):
    document_id: str
    title: str
    source_org: str
    facts: int = Field(description="Fact units in the document (corpus/FORMAT.md).")
    unverified_facts: list[str] = Field(description="Facts not verified against any public page.")
    stale_source_facts: list[str] = Field(
        description=f"Facts whose verifying page was seen over {STALE_SOURCE_DAYS} days ago."
    )
    oldest_source_seen: str | None


class Response(BaseModel):
    provenance: list[Path]
    documents_checked: int
    stale_documents: list[StaleDocument]
    total_stale: int = Field(description="Stale documents found before truncation to n_results.")
    provenance_issues: list[ProvenanceIssue]
    total_provenance_issues: int = Field(
        description="Documents with provenance issues before truncation to n_results."
    )
    potential_updates: list[PotentialUpdate]
    last_corpus_update: str | None
    as_of: str
    recommendations: list[str]
    conflicts: list[Conflict]


def tier(doc: dict[str, Any], today: int) -> tuple[Staleness | None, int | None]:
    """A document's staleness as of ``today`` (a day ordinal), from its decoded reference day."""
    ref = doc["reference_day"]
    days = today - ref if ref is not None else None
    if doc["is_superseded"]:
        return "superseded", days
    if days is None:
        return None, None
    if days > 730:
        return "likely_stale", days
    if days > 365:
        return "potentially_stale", days
    return None, days


def has_provenance_issue(doc: dict[str, Any], cutoff: str) -> bool:
    """Unverified facts, or a verifying page seen before ``cutoff`` (an ISO day): cheap enough to
    ask of every document, so only the listed ones become `ProvenanceIssue` models."""
    prov: FactProvenance | None = doc.get("fact_provenance")
    if prov is None:
        return False
    return bool(prov.unverified) or (
        prov.oldest_seen is not None and prov.oldest_seen[:10] < cutoff
    )


def provenance_issue(doc: dict[str, Any], cutoff: str) -> ProvenanceIssue:
    """Unverified facts and facts verified from pages seen before ``cutoff``, for one document."""
    prov: FactProvenance = doc["fact_provenance"]
    stale = [fact for fact, seen in prov.first_seen if seen[:10] < cutoff]  # ISO days sort as dates
    return ProvenanceIssue(
        document_id=doc["document_id"],
        title=doc["title"],
        source_org=doc["source_org"],
        facts=prov.facts,
        unverified_facts=list(prov.unverified),
        stale_source_facts=stale,
        oldest_source_seen=prov.oldest_seen,
    )


URGENCY = {"superseded": 0, "likely_stale": 1, "potentially_stale": 2}


def provenance_cutoff(today: date) -> str:
    """Verifying pages seen before this ISO day may have changed since."""
    return (today - timedelta(days=STALE_SOURCE_DAYS)).isoformat()


@dataclass(frozen=True)
class Review:
    """Documents as of one day: the stale ones, most urgent first, as (staleness, days, doc),
    and those with provenance issues, in document order."""

    tiered: list[tuple[Staleness, int | None, dict[str, Any]]]
    with_issues: list[dict[str, Any]]

    @cached_property
    def likely_stale(self) -> list[str]:
        return [t[2]["document_id"] for t in self.tiered if t[0] == "likely_stale"]

    @cached_property
    def potentially_stale(self) -> int:
        return sum(t[0] == "potentially_stale" for t in self.tiered)

    def of(self, docs: list[dict[str, Any]]) -> Review:
        """The entries of these documents alone, in the same order."""
        ids = {d["document_id"] for d in docs}
        return Review(
            [t for t in self.tiered if t[2]["document_id"] in ids],
            [d for d in self.with_issues if d["document_id"] in ids],
        )


def review(docs: list[dict[str, Any]], today: date) -> Review:
    day, cutoff = today.toordinal(), provenance_cutoff(today)
    tiered = [(level, days, d) for d in docs for level, days in [tier(d, day)] if level]
    tiered.sort(key=lambda t: (URGENCY[t[0]], PRIORITY.get(t[2]["source_org"], 9), -(t[1] or 0)))
    return Review(tiered, [d for d in docs if has_provenance_issue(d, cutoff)])


def reviewed(
    rt: Runtime, docs: list[dict[str, Any]], today: date, filtered: bool, degraded: bool
) -> Review:
    """The whole corpus's review is built once per process and day (the index is read-only; at
    100x tiering and sorting 7,500 documents on every call cost ~20 ms), and a filtered call
    keeps its own documents' entries. A degraded answer (the vector copy) is reviewed as is."""
    if degraded:
        return review(docs, today)
    corpus = rt.opa_sql.derived.get_latest(
        "opa_freshness_probe.review", today, lambda: review(all_documents(rt.opa_sql), today)
    )
    return corpus.of(docs) if filtered else corpus


def on_topics(docs: list[dict[str, Any]], topics: list[str]) -> list[dict[str, Any]]:
    """Documents with a topic containing any asked one (case-insensitive), tested on the topics
    text each document carries from decoding (`opa_freshness.topics_text`)."""
    wanted = re.compile("|".join(re.escape(t.lower()) for t in topics))
    return [d for d in docs if wanted.search(d["topics_text"])]


def date_conflicts(
    docs: list[dict[str, Any]], vector_docs: dict[str, dict[str, Any]]
) -> list[Conflict]:
    """Documents whose date the vector index holds differently from SQL (a stale vector index)."""
    differing = [  # equal values never conflict; `compare` decides the rest
        (d, v)
        for d in docs
        if (v := vector_docs.get(d["document_id"])) is not None
        and v["updated_date"] != d["updated_date"]
    ]
    found = (
        compare(
            f"{d['document_id']}.updated_date",
            str(d["updated_date"] or ""),
            str(v["updated_date"] or ""),
            "SQL date used; rebuild the vector index",
        )
        for d, v in differing
    )
    return [c for c in found if c]


async def run(rt: Runtime, req: Request) -> ToolOutput:
    dual = await run_dual(
        rt.settings,
        sql=lambda: sql_documents(rt.opa_sql, req.document_ids, req.source_orgs),
        vector=lambda: vector_documents(rt.vectors, req.document_ids, req.source_orgs),
    )
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
        docs = dual.sql.value["rows"]
        built_at = dual.sql.value["built_at"]
        if req.document_ids:
            missing = sorted(set(req.document_ids) - {d["document_id"] for d in docs})
            if missing:
                raise NotFoundError(
                    "document", ", ".join(missing), "Use opa.search_sections to find document ids."
                )
    if req.topics:
        docs = on_topics(docs, req.topics)
    today = rt.settings.today()
    filtered = bool(req.document_ids or req.source_orgs or req.topics)
    status = reviewed(rt, docs, today, filtered, degraded=dual.sql.value is None)
    tiered = status.tiered
    stale = [
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
        for level, days, d in tiered[: req.n_results]
    ]
    conflicts = date_conflicts(docs, dual.vector.value or {}) if dual.sql.value is not None else []
    updates: list[PotentialUpdate] = []
    recommendations: list[str] = []
    if req.check_web:
        if rt.settings.web_enabled:
            found = await check_pages(
                [d for d in docs if "source_url" in d],
                rt.settings.web_url_rewrite,
                rt.settings.web_timeout_s,
            )
            updates = [
                PotentialUpdate(
                    source_org=d["source_org"],
                    document_id=d["document_id"],
                    indication=f"page shows {d['page_date']}, corpus has {d.get('updated_date') or 'no date'}",
                    url=d["source_url"],
                    detected_date=d["page_date"],
                )
                for d in found
            ]
        else:
            recommendations.append(
                "Web checks are disabled by configuration (set OCM_WEB=1 to let check_web fetch source pages)."
            )
    # The report keeps the n_results most urgent entries, so a corpus ten times larger does not
    # mean an answer ten times larger; counts and totals still cover every document.
    superseded = [s for s in stale if s.staleness == "superseded"]
    likely, potential = status.likely_stale, status.potentially_stale
    for s in superseded:
        recommendations.append(
            f"Stop citing '{s.title}' ({s.document_id}): superseded by {s.superseded_by or 'newer guidance'}."
        )
    if likely:
        recommendations.append(
            "Re-ingest likely stale documents first (most clinically important first): "
            + ", ".join(likely[:10])
            + ("…" if len(likely) > 10 else "")
        )
    if potential:
        recommendations.append(
            f"Check {potential} potentially stale document(s) against their source pages at the next refresh."
        )
    cutoff = provenance_cutoff(today)
    with_issues = status.with_issues
    issues = [provenance_issue(d, cutoff) for d in with_issues[: req.n_results]]
    for i in issues:
        what = [f"{len(i.unverified_facts)} unverified"] if i.unverified_facts else []
        what += (
            [f"{len(i.stale_source_facts)} verified from pages seen over a year ago"]
            if i.stale_source_facts
            else []
        )
        recommendations.append(
            f"Re-verify {i.document_id}: {' and '.join(what)} of {i.facts} facts."
        )
    if dual.sql.value is None:
        recommendations.append(
            "Fact provenance is read from SQL only; it is missing from this degraded answer."
        )
    for u in updates:
        recommendations.append(f"Re-ingest {u.document_id}: {u.indication}.")
    recommendations.append(
        "Refresh the corpus at least every 6 months, CPSO and Ontario Health first."
    )
    response = Response(
        provenance=dual.provenance,
        documents_checked=len(docs),
        stale_documents=stale,
        total_stale=len(tiered),
        provenance_issues=issues,
        total_provenance_issues=len(with_issues),
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
        "fetches source pages for newer dates when web access is enabled by configuration. Ontario Health and Ministry "
        "documents carrying unverified facts, or facts verified from pages seen over a year ago, are listed under "
        "provenance_issues."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={},
)
