"""The two tools' answers as this backend builds them: plain dicts, typed here with the shapes
``schemas.json`` publishes (keys in the order the answers write them), so ``server.py`` holds
only how they are filled."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class DocumentBlock(TypedDict):
    document_id: str
    title: str
    source_org: str
    source_url: str
    document_type: str
    effective_date: str | None
    updated_date: str | None
    published_date: str | None
    topics: list[str]
    policy_level: str | None
    is_superseded: bool
    superseded_by: str | None


class SectionRow(TypedDict):
    """One section opa.search_sections shows (its text cut at TEXT_LIMIT)."""

    section_id: str
    document_id: str
    chunk_type: str
    text: str
    score: float
    source_org: str
    source_url: str
    document_title: str
    section_heading: str
    effective_date: str | None
    updated_date: str | None
    topics: list[str]
    policy_level: str | None
    is_superseded: bool


class SectionCitation(TypedDict):
    source: str
    loc: str
    chunk_id: str
    page: int | None


class Conflict(TypedDict):
    """The schema's conflict (one path here, so this backend reports none)."""

    field: str
    resolution: str


class SearchResult(TypedDict):
    provenance: list[str]
    confidence: float
    sections: list[SectionRow]
    total_matches: int
    no_relevant_document: bool
    conflicts: list[Conflict]
    citations: list[SectionCitation]


class SectionBody(TypedDict):
    """A whole section (chunk_type parent) or one of its paragraphs (child)."""

    section_id: str
    chunk_type: str
    text: str
    section_heading: str
    section_idx: int
    chunk_idx: int | None


class PageCitation(TypedDict):
    """A citation to the official page, in words, with its address and anchor."""

    text: str
    url: str
    anchor: str | None
    chunk_id: str


class SectionResult(TypedDict):
    section: SectionBody
    citation: PageCitation
    provenance: list[str]
    conflicts: list[Conflict]
    document: DocumentBlock | None
    parent: SectionBody | None
    children: NotRequired[list[SectionBody]]
