"""opa.get_section: one section with its parent or children, document metadata and a citation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.errors import NotFoundError, PathsFailedError
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_section_rows import SectionRow
from reference_server.retrieval.opa_sections import SectionTree, sql_lookup, vector_lookup
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.citations import SectionCitation, format_section_citation
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.common import Path, SourceOrg
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score

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


class Response(BaseModel):
    section: SectionBody
    parent: SectionBody | None = None
    children: list[SectionBody] = Field(default_factory=list)
    document: Document | None = None
    citation: SectionCitation
    provenance: list[Path] = Field(description="Paths that found the section.")
    conflicts: list[Conflict] = Field(default_factory=list)


def _body(row: SectionRow) -> SectionBody:
    return SectionBody(
        section_id=row.section_id,
        chunk_type=row.chunk_type,
        text=row.text,
        section_heading=row.section_heading,
        section_idx=row.section_idx,
        chunk_idx=row.chunk_idx,
    )


def _document(row: SectionRow) -> Document:
    return Document(
        document_id=row.document_id,
        title=row.document_title,
        source_org=row.source_org,
        source_url=row.source_url,
        document_type=row.document_type,
        effective_date=row.effective_date,
        updated_date=row.updated_date,
        published_date=row.published_date,
        topics=list(row.topics),
        policy_level=row.policy_level,
        is_superseded=row.is_superseded,
        superseded_by=row.superseded_by,
    )


@dataclass(frozen=True)
class Query:
    section_id: str
    include_parent: bool
    include_children: bool
    include_document_metadata: bool


@dataclass(frozen=True)
class Resolved:
    """The section as answered (the SQL copy when SQL found it), the SQL tree, the vector copy."""

    row: SectionRow
    tree: SectionTree | None
    vector_row: SectionRow | None


Found = DualResult[SectionTree | None, VectorHit | None]


class GetSection(
    DualPathTool[Request, Query, SectionTree | None, VectorHit | None, Resolved, Response]
):
    name = NAME
    title = "Read a guidance section"
    description = (
        "Retrieve one guidance section by id with its full text, its parent (for a child chunk) or children "
        "(for a parent), document metadata, and a formatted citation with an anchor URL."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(section_id="cep-alcohol-use-disorder:s01")

    def parse(self, rt: Runtime, req: Request) -> Query:
        return Query(
            req.section_id, req.include_parent, req.include_children, req.include_document_metadata
        )

    def sql(self, rt: Runtime, q: Query) -> SectionTree | None:
        return sql_lookup(rt.opa_sql, q.section_id, q.include_parent, q.include_children)

    def vector(self, rt: Runtime, q: Query) -> VectorHit | None:
        return vector_lookup(rt.vectors, q.section_id)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Resolved:
        tree, hit = found.sql.value, found.vector.value
        vector_row = SectionRow.from_vector(hit) if hit else None
        if tree:
            return Resolved(tree.row, tree, vector_row)
        if vector_row:
            return Resolved(vector_row, None, vector_row)
        if found.errors:
            raise PathsFailedError(
                f"Section {q.section_id!r} could not be retrieved right now (both retrieval paths failed); try again."
            )
        raise NotFoundError("section", q.section_id, "Use opa.search_sections to find section ids.")

    def score(self, q: Query, merged: Resolved, found: Found) -> Score[None]:
        conflicts: list[Conflict] = []
        row, vrow = merged.row, merged.vector_row
        if merged.tree and vrow:
            for name, sql_value, vector_value in (
                ("text", row.text, vrow.text),
                ("section_heading", row.section_heading, vrow.section_heading),
                ("updated_date", row.updated_date, vrow.updated_date),
            ):
                c = compare(
                    name, sql_value, vector_value, "SQL copy used; the vector index may be stale"
                )
                if c:
                    conflicts.append(c)
        return Score(conflicts=conflicts)

    def respond(self, q: Query, merged: Resolved, evidence: EvidenceFields[Any]) -> Response:
        row, tree = merged.row, merged.tree
        return Response(
            provenance=evidence["provenance"],
            conflicts=evidence["conflicts"],
            section=_body(row),
            parent=_body(tree.parent) if tree and tree.parent else None,
            children=[_body(k) for k in tree.children] if tree else [],
            document=_document(row) if q.include_document_metadata else None,
            citation=format_section_citation(row),
        )


TOOL = GetSection()
