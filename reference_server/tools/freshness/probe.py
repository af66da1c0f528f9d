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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, Field

from reference_server.errors import NotFoundError
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_freshness import (
    FreshnessDoc,
    PageDate,
    SqlDocuments,
    all_documents,
    check_pages,
    sql_documents,
    vector_documents,
)
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import StrictModel, TextItem
from reference_server.tools.common import Path, SourceOrg
from reference_server.tools.pipeline import DualPathTool, Fields, Score

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


def tier(doc: FreshnessDoc, today: int) -> tuple[Staleness | None, int | None]:
    """A document's staleness as of ``today`` (a day ordinal), from its decoded reference day."""
    ref = doc.reference_day
    days = today - ref if ref is not None else None
    if doc.is_superseded:
        return "superseded", days
    if days is None:
        return None, None
    if days > 730:
        return "likely_stale", days
    if days > 365:
        return "potentially_stale", days
    return None, days


def has_provenance_issue(doc: FreshnessDoc, cutoff: str) -> bool:
    """Unverified facts, or a verifying page seen before ``cutoff`` (an ISO day): cheap enough to
    ask of every document, so only the listed ones become `ProvenanceIssue` models."""
    prov = doc.fact_provenance
    if prov is None:
        return False
    return bool(prov.unverified) or (
        prov.oldest_seen is not None and prov.oldest_seen[:10] < cutoff
    )


def provenance_issue(doc: FreshnessDoc, cutoff: str) -> ProvenanceIssue:
    """Unverified facts and facts verified from pages seen before ``cutoff``, for one document."""
    prov = doc.fact_provenance
    assert prov is not None  # only documents `has_provenance_issue` kept
    stale = [fact for fact, seen in prov.first_seen if seen[:10] < cutoff]  # ISO days sort as dates
    return ProvenanceIssue(
        document_id=doc.document_id,
        title=doc.title,
        source_org=doc.source_org,
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

    tiered: list[tuple[Staleness, int | None, FreshnessDoc]]
    with_issues: list[FreshnessDoc]

    @cached_property
    def likely_stale(self) -> list[str]:
        return [t[2].document_id for t in self.tiered if t[0] == "likely_stale"]

    @cached_property
    def potentially_stale(self) -> int:
        return sum(t[0] == "potentially_stale" for t in self.tiered)

    def of(self, docs: Sequence[FreshnessDoc]) -> Review:
        """The entries of these documents alone, in the same order."""
        ids = {d.document_id for d in docs}
        return Review(
            [t for t in self.tiered if t[2].document_id in ids],
            [d for d in self.with_issues if d.document_id in ids],
        )


def review(docs: Sequence[FreshnessDoc], today: date) -> Review:
    day, cutoff = today.toordinal(), provenance_cutoff(today)
    tiered = [(level, days, d) for d in docs for level, days in [tier(d, day)] if level]
    tiered.sort(key=lambda t: (URGENCY[t[0]], PRIORITY.get(t[2].source_org, 9), -(t[1] or 0)))
    return Review(tiered, [d for d in docs if has_provenance_issue(d, cutoff)])


def reviewed(
    rt: Runtime, docs: Sequence[FreshnessDoc], today: date, filtered: bool, degraded: bool
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


def on_topics(docs: Sequence[FreshnessDoc], topics: Sequence[str]) -> list[FreshnessDoc]:
    """Documents with a topic containing any asked one (case-insensitive), tested on the topics
    text each document carries from decoding (`opa_freshness.topics_text`)."""
    wanted = re.compile("|".join(re.escape(t.lower()) for t in topics))
    return [d for d in docs if wanted.search(d.topics_text)]


def date_conflicts(
    docs: Sequence[FreshnessDoc], vector_docs: Mapping[str, FreshnessDoc]
) -> list[Conflict]:
    """Documents whose date the vector index holds differently from SQL (a stale vector index)."""
    differing = [  # equal values never conflict; `compare` decides the rest
        (d, v)
        for d in docs
        if (v := vector_docs.get(d.document_id)) is not None and v.updated_date != d.updated_date
    ]
    found = (
        compare(
            f"{d.document_id}.updated_date",
            str(d.updated_date or ""),
            str(v.updated_date or ""),
            "SQL date used; rebuild the vector index",
        )
        for d, v in differing
    )
    return [c for c in found if c]


@dataclass(frozen=True)
class Query:
    document_ids: list[str] | None
    source_orgs: list[SourceOrg] | None
    topics: list[str] | None
    check_web: bool
    n_results: int
    today: date  # the configured "as of" day the tiers are counted from

    @property
    def filtered(self) -> bool:
        return bool(self.document_ids or self.source_orgs or self.topics)


Found = DualResult[SqlDocuments, dict[str, FreshnessDoc]]


@dataclass(frozen=True)
class Checked:
    """The documents checked (SQL's, else the vector copies), their review, the index build
    time, and the pages the web check found newer (empty unless asked and enabled)."""

    docs: list[FreshnessDoc]
    status: Review
    built_at: str | None
    degraded: bool  # SQL did not answer: the vector index's copy of the metadata
    pages: list[PageDate]
    web_off: bool  # check_web was asked while web access is disabled by configuration


class FreshnessProbe(
    DualPathTool[Request, Query, SqlDocuments, dict[str, FreshnessDoc], Checked, Response]
):
    name = NAME
    title = "Check guidance freshness"
    open_world = True  # checks publishers' pages when the web is enabled
    description = (
        "Check guidance freshness: superseded documents (definitely stale), documents not updated for over 2 years "
        "(likely stale) or over 1 year (potentially stale), with re-ingestion recommendations. Optional check_web "
        "fetches source pages for newer dates when web access is enabled by configuration. Ontario Health and Ministry "
        "documents carrying unverified facts, or facts verified from pages seen over a year ago, are listed under "
        "provenance_issues."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request()

    def parse(self, rt: Runtime, req: Request) -> Query:
        return Query(
            req.document_ids,
            req.source_orgs,
            req.topics,
            req.check_web,
            req.n_results,
            rt.settings.today(),
        )

    def sql(self, rt: Runtime, q: Query) -> SqlDocuments:
        return sql_documents(rt.opa_sql, q.document_ids, q.source_orgs)

    def vector(self, rt: Runtime, q: Query) -> dict[str, FreshnessDoc]:
        return vector_documents(rt.vectors, q.document_ids, q.source_orgs)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Checked:
        """The checked documents and their review; then, when asked, the web check of their
        source pages. The web check lives here, not as a third path: it is not a copy of the
        index (no provenance, no confidence), it needs the documents the paths and filters
        settled on, and it runs under its own per-page timeout within the whole-tool timeout."""
        sql = found.sql.value
        if sql is None:  # degraded: the vector index's copy of the metadata
            docs = [
                d
                for d in (found.vector.value or {}).values()
                if (not q.document_ids or d.document_id in q.document_ids)
                and (not q.source_orgs or d.source_org in q.source_orgs)
            ]
        else:
            docs = sql.rows
            if q.document_ids:
                missing = sorted(set(q.document_ids) - {d.document_id for d in docs})
                if missing:
                    raise NotFoundError(
                        "document",
                        ", ".join(missing),
                        "Use opa.search_sections to find document ids.",
                    )
        if q.topics:
            docs = on_topics(docs, q.topics)
        status = reviewed(rt, docs, q.today, q.filtered, degraded=sql is None)
        web = q.check_web and rt.settings.web_enabled
        settings = rt.settings
        pages = (
            await check_pages(docs, settings.web_url_rewrite, settings.web_timeout_s) if web else []
        )
        return Checked(
            docs=docs,
            status=status,
            built_at=sql.built_at if sql is not None else None,
            degraded=sql is None,
            pages=pages,
            web_off=q.check_web and not web,
        )

    def score(self, q: Query, merged: Checked, found: Found) -> Score[None]:
        """No confidence (a report on the corpus, not an answer from it); a date the vector
        index holds differently from SQL is a conflict."""
        vector = found.vector.value or {}
        return Score(conflicts=[] if merged.degraded else date_conflicts(merged.docs, vector))

    def respond(self, q: Query, merged: Checked) -> Fields:
        status = merged.status
        stale = [to_stale(level, days, d) for level, days, d in status.tiered[: q.n_results]]
        updates = [to_update(p) for p in merged.pages]
        issues = [
            provenance_issue(d, provenance_cutoff(q.today))
            for d in status.with_issues[: q.n_results]
        ]
        return dict(
            documents_checked=len(merged.docs),
            stale_documents=stale,
            total_stale=len(status.tiered),
            provenance_issues=issues,
            total_provenance_issues=len(status.with_issues),
            potential_updates=updates,
            last_corpus_update=merged.built_at,
            as_of=q.today.isoformat(),
            recommendations=advice(merged, stale, issues, updates),
        )


def to_stale(level: Staleness, days: int | None, d: FreshnessDoc) -> StaleDocument:
    return StaleDocument(
        document_id=d.document_id,
        title=d.title,
        source_org=d.source_org,
        last_updated=d.updated_date,
        days_old=days,
        staleness=level,
        superseded_by=d.superseded_by,
        topics=list(d.topics),
    )


def to_update(found: PageDate) -> PotentialUpdate:
    d = found.doc
    return PotentialUpdate(
        source_org=d.source_org,
        document_id=d.document_id,
        indication=f"page shows {found.page_date}, corpus has {d.updated_date or 'no date'}",
        url=d.source_url,  # the real page, not a configured rewrite
        detected_date=found.page_date,
    )


def advice(
    merged: Checked,
    stale: list[StaleDocument],
    issues: list[ProvenanceIssue],
    updates: list[PotentialUpdate],
) -> list[str]:
    """What to do about it, most urgent first. The report keeps the n_results most urgent
    entries, so a corpus ten times larger does not mean an answer ten times larger; counts and
    totals still cover every document."""
    out: list[str] = []
    if merged.web_off:
        out.append(
            "Web checks are disabled by configuration (set OCM_WEB=1 to let check_web fetch source pages)."
        )
    likely, potential = merged.status.likely_stale, merged.status.potentially_stale
    for s in stale:
        if s.staleness == "superseded":
            out.append(
                f"Stop citing '{s.title}' ({s.document_id}): superseded by {s.superseded_by or 'newer guidance'}."
            )
    if likely:
        out.append(
            "Re-ingest likely stale documents first (most clinically important first): "
            + ", ".join(likely[:10])
            + ("…" if len(likely) > 10 else "")
        )
    if potential:
        out.append(
            f"Check {potential} potentially stale document(s) against their source pages at the next refresh."
        )
    for i in issues:
        what = [f"{len(i.unverified_facts)} unverified"] if i.unverified_facts else []
        what += (
            [f"{len(i.stale_source_facts)} verified from pages seen over a year ago"]
            if i.stale_source_facts
            else []
        )
        out.append(f"Re-verify {i.document_id}: {' and '.join(what)} of {i.facts} facts.")
    if merged.degraded:
        out.append(
            "Fact provenance is read from SQL only; it is missing from this degraded answer."
        )
    out += [f"Re-ingest {u.document_id}: {u.indication}." for u in updates]
    out.append("Refresh the corpus at least every 6 months, CPSO and Ontario Health first.")
    return out


TOOL = FreshnessProbe()
