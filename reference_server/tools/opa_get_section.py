"""opa.get_section: one section with its parent or children, document metadata and a citation."""

from __future__ import annotations

from typing import Any, Literal

from fastmcp.exceptions import ToolError
from pydantic import BaseModel, Field

from reference_server.errors import NotFoundError
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_sections import row_from_vector, sql_lookup, vector_lookup
from reference_server.runtime import Runtime
from reference_server.scoring.citations import format_citation
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Path, SourceOrg

NAME = "opa.get_section"


class Request(StrictModel):
    section_id: str = Field(
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Section id, e.g. 'cpso-virtual-care:s02' or a child 'cpso-virtual-care:s02:c1'.",
    )
    include_parent: bool = Field(
        default=True, description="Include the parent if this is a child chunk."
    )
    include_children: bool = Field(
        default=False, description="Include the children if this is a parent chunk."
    )
    include_document_metadata: bool = Field(
        default=True, description="Include full document metadata."
    )


class SectionBody(BaseModel):
    section_id: str
    chunk_type: Literal["parent", "child"]
    text: str
    section_heading: str
    section_idx: int
    chunk_idx: int | None


class Document(BaseModel):
    document_id: str
    title: str
    source_org: SourceOrg
    source_url: str
    document_type: str
    effective_date: str | None
    updated_date: str | None
    published_date: str | None
    topics: list[str]
    policy_level: Literal["expectation", "advice"] | None
    is_superseded: bool
    superseded_by: str | None


class SectionCitation(BaseModel):
    text: str
    url: str
    anchor: str | None
    chunk_id: str = Field(description="Id of the cited passage, for source.passages.")


class Response(BaseModel):
    section: SectionBody
    parent: SectionBody | None = None
    children: list[SectionBody] = Field(default_factory=list)
    document: Document | None = None
    citation: SectionCitation
    provenance: list[Path] = Field(description="Paths that found the section.")
    conflicts: list[Conflict] = Field(default_factory=list)


def _body(row: dict[str, Any]) -> SectionBody:
    return SectionBody(
        section_id=row["section_id"],
        chunk_type=row["chunk_type"],
        text=row["text"],
        section_heading=row["section_heading"],
        section_idx=row["section_idx"],
        chunk_idx=row.get("chunk_idx"),
    )


def _document(row: dict[str, Any]) -> Document:
    return Document(
        document_id=row["document_id"],
        title=row["document_title"],
        source_org=row["source_org"],
        source_url=row["source_url"],
        document_type=row["document_type"],
        effective_date=row.get("effective_date"),
        updated_date=row.get("updated_date"),
        published_date=row.get("published_date"),
        topics=row["topics"],
        policy_level=row.get("policy_level"),
        is_superseded=row["is_superseded"],
        superseded_by=row.get("superseded_by"),
    )


async def run(rt: Runtime, req: Request) -> ToolOutput:
    dual = await run_dual(
        rt.settings,
        sql=lambda: sql_lookup(
            rt.opa_sql, req.section_id, req.include_parent, req.include_children
        ),
        vector=lambda: vector_lookup(rt.vectors, req.section_id),
    )
    found, vhit = dual.sql.value, dual.vector.value
    if found is None and vhit is None:
        if dual.errors:
            raise ToolError(
                f"Section {req.section_id!r} could not be retrieved right now (both retrieval paths failed); try again."
            )
        raise NotFoundError(
            "section", req.section_id, "Use opa.search_sections to find section ids."
        )
    row = found.row if found else row_from_vector(vhit)  # type: ignore[arg-type]
    conflicts = []
    if found and vhit:
        vrow = row_from_vector(vhit)
        for name in ("text", "section_heading", "updated_date"):
            c = compare(
                name, row.get(name), vrow.get(name), "SQL copy used; the vector index may be stale"
            )
            if c:
                conflicts.append(c)
    citation = format_citation({**row, "title": row["document_title"]}, row)
    response = Response(
        section=_body(row),
        parent=_body(found.parent) if found and found.parent else None,
        children=[_body(k) for k in found.children] if found else [],
        document=_document(row) if req.include_document_metadata else None,
        citation=SectionCitation(**citation),
        provenance=dual.provenance,
        conflicts=conflicts,
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Retrieve one guidance section by id with its full text, its parent (for a child chunk) or children "
        "(for a parent), document metadata, and a formatted citation with an anchor URL."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"section_id": "cep-alcohol-use-disorder:s01"},
)
