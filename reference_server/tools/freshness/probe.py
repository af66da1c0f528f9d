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

import dataclasses
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from reference_server.errors import NotFoundError
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_freshness import (
    FreshnessDoc,
    SqlDocuments,
    check_pages,
    sql_documents,
    vector_documents,
)
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.common import Path, SourceOrg
from reference_server.tools.freshness.report import (
    Checked,
    PotentialUpdate,
    ProvenanceIssue,
    StaleDocument,
    advice,
    provenance_issue,
    to_stale,
    to_update,
)
from reference_server.tools.freshness.review import (
    date_conflicts,
    on_topics,
    provenance_cutoff,
    reviewed,
)
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import StrictModel, TextItem
from reference_server.tools.score_step import EvidenceFields, Score

NAME = "opa.freshness_probe"


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


class FreshnessProbe(
    DualPathTool[Request, Query, SqlDocuments, dict[str, FreshnessDoc], Checked, Response]
):
    name = NAME
    title = "Check guidance freshness"
    open_world = True  # checks publishers' pages when the web is enabled
    description = (
        "Check whether guidance documents are out of date: superseded documents (definitely "
        "stale), documents not updated for over 2 years (likely stale) or over 1 year "
        "(potentially stale), by document id, publisher or topic, with re-ingestion "
        "recommendations. Optional check_web fetches source pages for newer dates when web "
        "access is enabled by configuration. Ontario Health and Ministry documents carrying "
        "unverified facts, or facts verified from pages seen over a year ago, are listed under "
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

    def check(self, q: Query, found: Found) -> None:
        """Document ids SQL does not hold are unknown (the vector copy, when SQL is down, is
        filtered, not checked)."""
        sql = found.sql.value
        if sql is None or not q.document_ids:
            return
        missing = sorted(set(q.document_ids) - {d.document_id for d in sql.rows})
        if missing:
            raise NotFoundError(
                "document", ", ".join(missing), "Use opa.search_sections to find document ids."
            )

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Checked:
        """The checked documents (SQL's, else the vector index's copy) and their review."""
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
        if q.topics:
            docs = on_topics(docs, q.topics)
        return Checked(
            docs=docs,
            status=reviewed(rt, docs, q.today, q.filtered, degraded=sql is None),
            built_at=sql.built_at if sql is not None else None,
            degraded=sql is None,
            pages=[],
            web_off=q.check_web and not rt.settings.web_enabled,
        )

    async def beyond_index(self, rt: Runtime, q: Query, merged: Checked) -> Checked:
        """When asked and enabled, the checked documents' source pages, for newer dates. Not a
        third path: it is no copy of the index (no provenance, no confidence), it needs the
        documents the paths and filters settled on, and each page has its own timeout within
        the whole-tool timeout."""
        if not (q.check_web and rt.settings.web_enabled):
            return merged
        settings = rt.settings
        pages = await check_pages(merged.docs, settings.web_url_rewrite, settings.web_timeout_s)
        return dataclasses.replace(merged, pages=pages)

    def score(self, q: Query, merged: Checked, found: Found) -> Score[None]:
        """No confidence (a report on the corpus, not an answer from it); a date the vector
        index holds differently from SQL is a conflict."""
        vector = found.vector.value or {}
        return Score(conflicts=[] if merged.degraded else date_conflicts(merged.docs, vector))

    def respond(self, q: Query, merged: Checked, evidence: EvidenceFields[Any]) -> Response:
        status = merged.status
        stale = [
            status.entry("stale", d, partial(to_stale, level, days, d))
            for level, days, d in status.tiered[: q.n_results]
        ]
        updates = [to_update(p) for p in merged.pages]
        cutoff = provenance_cutoff(q.today)
        issues = [
            status.entry("provenance", d, partial(provenance_issue, d, cutoff))
            for d in status.with_issues[: q.n_results]
        ]
        return Response(
            provenance=evidence["provenance"],
            conflicts=evidence["conflicts"],
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


TOOL = FreshnessProbe()
