"""opa.freshness_probe's report: the stale documents, provenance issues and pages found newer,
as the response lists them, and what to do about them."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from reference_server.retrieval.opa_freshness import FreshnessDoc, PageDate
from reference_server.tools.freshness.review import STALE_SOURCE_DAYS, Review, Staleness


class StaleDocument(BaseModel):
    model_config = ConfigDict(frozen=True)  # one instance serves every answer that lists it

    document_id: str
    title: str
    source_org: str
    source_url: str = Field(description="The document's official URL.")
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
    model_config = ConfigDict(frozen=True)  # one instance serves every answer that lists it

    document_id: str
    title: str
    source_org: str
    source_url: str = Field(description="The document's official URL.")
    facts: int = Field(description="Fact units in the document (corpus/FORMAT.md).")
    unverified_facts: list[str] = Field(description="Facts not verified against any public page.")
    stale_source_facts: list[str] = Field(
        description=f"Facts whose verifying page was seen over {STALE_SOURCE_DAYS} days ago."
    )
    oldest_source_seen: str | None


ADVISED_ISSUES = 10  # provenance issues named one by one in the advice


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


def provenance_issue(doc: FreshnessDoc, cutoff: str) -> ProvenanceIssue:
    """Unverified facts and facts verified from pages seen before ``cutoff``, for one document."""
    prov = doc.fact_provenance
    assert prov is not None  # only documents `has_provenance_issue` kept
    stale = [fact for fact, seen in prov.first_seen if seen[:10] < cutoff]  # ISO days sort as dates
    return ProvenanceIssue(
        document_id=doc.document_id,
        title=doc.title,
        source_org=doc.source_org,
        source_url=doc.source_url,
        facts=prov.facts,
        unverified_facts=list(prov.unverified),
        stale_source_facts=stale,
        oldest_source_seen=prov.oldest_seen,
    )


def to_stale(level: Staleness, days: int | None, d: FreshnessDoc) -> StaleDocument:
    return StaleDocument(
        document_id=d.document_id,
        title=d.title,
        source_org=d.source_org,
        source_url=d.source_url,
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
    totals still cover every document. Like the likely-stale line, the advice names the first
    ADVISED_ISSUES documents with provenance issues and counts the rest, which the report's
    `provenance_issues` lists in full."""
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
    for i in issues[:ADVISED_ISSUES]:
        what = [f"{len(i.unverified_facts)} unverified"] if i.unverified_facts else []
        what += (
            [f"{len(i.stale_source_facts)} verified from pages seen over a year ago"]
            if i.stale_source_facts
            else []
        )
        out.append(
            f"Re-verify '{i.title}' ({i.document_id}): {' and '.join(what)} of {i.facts} facts."
        )
    if len(issues) > ADVISED_ISSUES:
        out.append(
            f"Re-verify the facts of {len(issues) - ADVISED_ISSUES} more document(s) listed under "
            "provenance_issues."
        )
    if merged.degraded:
        out.append(
            "Fact provenance is read from SQL only; it is missing from this degraded answer."
        )
    out += [f"Re-ingest {u.document_id}: {u.indication}." for u in updates]
    out.append("Refresh the corpus at least every 6 months, CPSO and Ontario Health first.")
    return out
