"""Citations, built in one place: every citation carries the chunk id `source.passages` resolves.

`Citation` is the Dr. OFF / OPA shape from the specs (`source`, `loc`, `page`) plus `chunk_id`,
the id of the passage the cited fact came from, so "show source" works for every citation of
every tool. `format_citation` is the OPA spec's citation text for a guidance document or one
of its sections; it carries the same `chunk_id` (the section id, or the document id for a
whole-document citation), so every opa.* tool that uses it gets show-source for free.
The chunk-id shapes themselves live in `reference_server.catalog`.
"""

from __future__ import annotations

import re
from typing import Protocol, TypedDict

from pydantic import BaseModel, Field

ORG_NAMES = {
    "cpso": "College of Physicians and Surgeons of Ontario",
    "ontario_health": "Ontario Health (Cancer Care Ontario)",
    "cep": "Centre for Effective Practice",
    "pho": "Public Health Ontario",
    "moh": "Ministry of Health",
}


class Citation(BaseModel):
    source: str = Field(description="Document name.")
    loc: str = Field(description="Section reference, code or DIN.")
    page: int | None = Field(default=None, description="Page number when the source has pages.")
    chunk_id: str = Field(
        description="Id of the cited passage: pass it to source.passages to show the source."
    )


def slugify(text: str) -> str:
    """'Virtual Care and Patients' Best Interests' -> 'virtual-care-and-patients-best-interests'."""
    text = re.sub(r"['’`]", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


class CitedDocument(TypedDict):
    """The document fields a citation reads."""

    source_org: str
    title: str
    effective_date: str | None
    source_url: str
    document_id: str


class CitedSection(TypedDict):
    """The section fields a citation reads (none for a whole-document citation)."""

    section_id: str
    section_heading: str


class CitationFields(TypedDict):
    text: str
    url: str
    anchor: str | None
    chunk_id: str


def section_chunk_id(document: CitedDocument, section: CitedSection | None = None) -> str:
    """The OPA passage id: the section id, or the document id for a whole-document citation."""
    if section and section.get("section_id"):
        return str(section["section_id"])
    return str(document["document_id"])


def format_citation(document: CitedDocument, section: CitedSection | None = None) -> CitationFields:
    """'{Org}. {Title}, {Section} [Effective: {Date}]' plus the source URL with a slug anchor
    and the chunk id `source.passages` resolves."""
    text = f"{ORG_NAMES.get(document['source_org'], document['source_org'])}. {document['title']}"
    if section and section.get("section_heading"):
        text += f", {section['section_heading']}"
    if document.get("effective_date"):
        text += f" [Effective: {document['effective_date']}]"
    anchor = (
        slugify(section["section_heading"]) if section and section.get("section_heading") else None
    )
    url = document["source_url"] + (f"#{anchor}" if anchor else "")
    return {
        "text": text,
        "url": url,
        "anchor": anchor,
        "chunk_id": section_chunk_id(document, section),
    }


class SectionLike(Protocol):
    """What an OPA section citation reads from a section row (`retrieval.opa_section_rows.SectionRow`)."""

    @property
    def section_id(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def document_title(self) -> str: ...
    @property
    def section_heading(self) -> str: ...
    @property
    def source_org(self) -> str: ...
    @property
    def source_url(self) -> str: ...
    @property
    def effective_date(self) -> str | None: ...


def section_citation(row: SectionLike, source: str | None = None) -> Citation:
    """A `Citation` for an OPA section row."""
    return Citation(
        source=source or row.document_title,
        loc=row.section_heading,
        chunk_id=row.section_id or row.document_id,
    )


# `format_citation`'s parts for one OPA section, as opa.get_section publishes them (no docstring:
# it would become the published schema's description).
class SectionCitation(BaseModel):
    text: str
    url: str
    anchor: str | None
    chunk_id: str = Field(description="Id of the cited passage, for source.passages.")


def format_section_citation(row: SectionLike) -> SectionCitation:
    """`format_citation` for one section row: its document's fields and its own heading."""
    document: CitedDocument = {
        "source_org": row.source_org,
        "title": row.document_title,
        "effective_date": row.effective_date,
        "source_url": row.source_url,
        "document_id": row.document_id,
    }
    section: CitedSection = {"section_id": row.section_id, "section_heading": row.section_heading}
    return SectionCitation(**format_citation(document, section))
