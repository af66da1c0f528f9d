"""opa.search_sections: hybrid search across all OPA guidance, with filters and the spec's boosts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_section_rows import SectionRow
from reference_server.retrieval.opa_sections import Filters, keyword_search, vector_search
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.citations import Citation, section_citation
from reference_server.tools.base import ExtraMeta
from reference_server.tools.common import DocumentType, Evidence, SourceOrg
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel, TextItem
from reference_server.tools.score_step import EvidenceFields, Score
from reference_server.tools.section_ambiguity import (
    AMBIGUITY_DESCRIPTION,
    Candidate,
    candidates,
    guidance_families,
    heading_index,
    section_signals,
    shared_heading,
)
from reference_server.tools.section_merge import (
    Ranked,
    SectionHit,
    fused_and_reranked,
    metadata_conflicts,
    not_addressed,
    section_counts,
    truncate,
)

NAME = "opa.search_sections"


class Request(StrictModel):
    query: str = Field(
        min_length=1, max_length=1000, pattern=NON_BLANK, description="Search query text."
    )
    source_org: SourceOrg | None = Field(
        default=None, description="Only this organisation's documents."
    )
    document_type: DocumentType | None = Field(default=None, description="Only this document type.")
    topics: list[TextItem] | None = Field(
        default=None, max_length=20, description="Match any of these topics."
    )
    include_superseded: bool = Field(
        default=False, description="Include outdated (superseded) documents."
    )
    n_results: int = Field(
        default=5, ge=1, le=20, description="Number of results (default 5, max 20)."
    )
    search_mode: Literal["hybrid", "vector", "keyword"] = Field(
        default="hybrid", description="Which retrieval paths to use."
    )


class Section(BaseModel):
    section_id: str
    document_id: str
    chunk_type: Literal["parent", "child"]
    text: str = Field(description="Section text (truncated).")
    score: float
    source_org: SourceOrg
    source_url: str
    document_title: str
    section_heading: str
    effective_date: str | None
    updated_date: str | None
    topics: list[str]
    policy_level: Literal["expectation", "advice"] | None
    is_superseded: bool


class Response(Evidence):
    sections: list[Section]
    total_matches: int = Field(
        description="Distinct sections matched before truncation to n_results."
    )
    no_relevant_document: bool = Field(
        description="True when no guidance document addresses the question (the best passages are "
        "far from it, or it names a subject none of them mentions): the results are only the "
        "nearest text. Confidence is then the probability that this is right (that no document "
        "addresses it); the spec's score, lowered to at most 0.5, is confidence_basis.spec_score."
    )
    ambiguous_between: list[Candidate] = Field(
        default_factory=list, description=AMBIGUITY_DESCRIPTION
    )


def to_section(hit: SectionHit) -> Section:
    row = hit.row
    return Section(
        section_id=hit.section_id,
        document_id=row.document_id,
        chunk_type=row.chunk_type,
        text=truncate(row.text),
        score=round(hit.score, 4),
        source_org=row.source_org,
        source_url=row.source_url,
        document_title=row.document_title,
        section_heading=row.section_heading,
        effective_date=row.effective_date,
        updated_date=row.updated_date,
        topics=list(row.topics),
        policy_level=row.policy_level,
        is_superseded=row.is_superseded,
    )


Found = DualResult[list[SectionRow], list[VectorHit]]


@dataclass(frozen=True)
class Query:
    text: str
    filters: Filters
    n_results: int
    mode: Literal["hybrid", "vector", "keyword"]


class SearchSections(
    DualPathTool[Request, Query, list[SectionRow], list[VectorHit], Ranked, Response]
):
    name = NAME
    confidence_family = "opa_search"
    title = "Search Ontario practice guidance"
    description = (
        "Search every Ontario practice guidance document (CPSO, Ontario Health, CEP, PHO, "
        "Ministry of Health) for the sections that answer a clinical or professional practice "
        "question, by meaning and keywords at once: what guidance says about a topic, a heading "
        "or a subject. Filters: source_org, document_type, topics, include_superseded. Returns "
        "ranked sections with document metadata, citations, provenance and confidence."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(query="informed consent documentation")

    def parse(self, rt: Runtime, req: Request) -> Query:
        filters = Filters(
            source_orgs=[req.source_org] if req.source_org else None,
            document_type=req.document_type,
            topics=req.topics,
            include_superseded=req.include_superseded,
        )
        return Query(req.query, filters, req.n_results, req.search_mode)

    def paths(self, q: Query) -> tuple[bool, bool]:
        return q.mode != "vector", q.mode != "keyword"

    def sql(self, rt: Runtime, q: Query) -> list[SectionRow]:
        return keyword_search(rt.opa_sql, q.text, q.filters)

    def vector(self, rt: Runtime, q: Query) -> list[VectorHit]:
        return vector_search(rt.vectors, q.text, q.filters)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Ranked:
        hits, meta = await fused_and_reranked(
            rt.settings, q.text, found.sql.value, found.vector.value, found.total_ms
        )
        top = hits[: q.n_results]
        sharing = shared_heading(q.text, heading_index(rt.opa_sql))
        return Ranked(
            hits, top, meta, not not_addressed(q.text, hits), sharing, guidance_families(rt.opa_sql)
        )

    def score(self, q: Query, merged: Ranked, found: Found) -> Score[Citation]:
        return Score(
            citations=[section_citation(h.row) for h in merged.top],
            conflicts=metadata_conflicts(merged.top),
            counts=section_counts(merged.top, addressed=merged.addressed),
            signals=section_signals(q.text, merged),
        )

    def respond(self, q: Query, merged: Ranked, evidence: EvidenceFields[Any]) -> Response:
        return Response(
            **evidence,
            sections=[to_section(h) for h in merged.top],
            total_matches=len(merged.hits),
            no_relevant_document=not merged.addressed,
            ambiguous_between=candidates(q.text, merged),
        )

    def meta(self, merged: Ranked) -> ExtraMeta:
        return merged.rerank


TOOL = SearchSections()
