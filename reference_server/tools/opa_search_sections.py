"""opa.search_sections: hybrid search across all OPA guidance, with filters and the spec's boosts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_sections import (
    Filters,
    SectionHit,
    confidence,
    fuse,
    keyword_search,
    metadata_conflicts,
    rerank_sections,
    truncate,
    vector_search,
)
from reference_server.runtime import Runtime
from reference_server.scoring.citations import section_citation
from reference_server.tools.base import NON_BLANK, StrictModel, TextItem, ToolOutput, ToolSpec
from reference_server.tools.common import DocumentType, Evidence, SourceOrg

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


def to_section(hit: SectionHit) -> Section:
    row = hit.row
    return Section(
        section_id=hit.section_id,
        document_id=row["document_id"],
        chunk_type=row["chunk_type"],
        text=truncate(row["text"]),
        score=round(hit.score, 4),
        source_org=row["source_org"],
        source_url=row["source_url"],
        document_title=row["document_title"],
        section_heading=row["section_heading"],
        effective_date=row.get("effective_date"),
        updated_date=row.get("updated_date"),
        topics=row["topics"],
        policy_level=row.get("policy_level"),
        is_superseded=row["is_superseded"],
    )


async def run(rt: Runtime, req: Request) -> ToolOutput:
    filters = Filters(
        source_orgs=[req.source_org] if req.source_org else None,
        document_type=req.document_type,
        topics=req.topics,
        include_superseded=req.include_superseded,
    )
    dual = await run_dual(
        rt.settings,
        sql=None
        if req.search_mode == "vector"
        else (lambda: keyword_search(rt.opa_sql, req.query, filters)),
        vector=None
        if req.search_mode == "keyword"
        else (lambda: vector_search(rt.vectors, req.query, filters)),
    )
    hits = fuse(
        dual.sql.value, dual.vector.value, req.query, rt.settings.today(), rt.settings.fusion
    )
    hits, meta = await rerank_sections(rt.settings, req.query, hits, dual.total_ms)
    top = hits[: req.n_results]
    conflicts = metadata_conflicts(top)
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        confidence=confidence(top, len(conflicts)),
        sections=[to_section(h) for h in top],
        total_matches=len(hits),
        citations=[section_citation(h.row) for h in top],
        conflicts=conflicts,
    )
    return ToolOutput(response, dual, meta)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Search Ontario practice guidance (CPSO, Ontario Health, CEP, PHO, Ministry of Health) by meaning and "
        "keywords at once. Filters: source_org, document_type, topics, include_superseded. Returns ranked "
        "sections with document metadata, citations, provenance and confidence."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"query": "informed consent documentation"},
)
