"""The OPA section row as every section-level `opa.*` tool reads it, whichever path found it:
`SectionRow` (a section or child chunk with its document's fields, JSON columns decoded), the
structured IPAC block of a PHO section, and the SQL columns a row is read from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from reference_server.retrieval.vector import VectorHit

ChunkType = Literal["parent", "child"]
PolicyLevel = Literal["expectation", "advice"]
SourceOrg = Literal["cpso", "ontario_health", "cep", "pho", "moh"]
RequirementLevel = Literal["must", "should", "may"]


@dataclass(frozen=True)
class IpacRequirement:
    level: RequirementLevel
    text: str
    rationale: str | None


@dataclass(frozen=True)
class IpacChecklistItem:
    item: str
    required: bool
    notes: str | None


@dataclass(frozen=True)
class IpacChecklist:
    name: str
    frequency: str
    items: tuple[IpacChecklistItem, ...]


@dataclass(frozen=True)
class IpacBlock:
    """A PHO section's structured IPAC block (the `ipac` JSON column, or the vector copy)."""

    topic: str | None
    settings: tuple[str, ...]  # empty: every setting
    items: tuple[str, ...]
    requirements: tuple[IpacRequirement, ...]
    best_practices: tuple[str, ...]
    checklists: tuple[IpacChecklist, ...]
    canonical: str  # the block as key-sorted JSON: what the vector store's copy is compared with

    @classmethod
    def decode(cls, text: str | None) -> IpacBlock | None:
        """The block from its JSON, or None when the section has none (or an empty one)."""
        return _decoded_block(text) if text else None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IpacBlock:
        return cls(
            topic=data.get("topic"),
            settings=tuple(data.get("settings") or ()),
            items=tuple(data.get("items", ())),
            requirements=tuple(
                IpacRequirement(r["level"], r["text"], r.get("rationale"))
                for r in data.get("requirements", ())
            ),
            best_practices=tuple(data.get("best_practices", ())),
            checklists=tuple(
                IpacChecklist(
                    c["name"],
                    c["frequency"],
                    tuple(
                        IpacChecklistItem(i["item"], i["required"], i.get("notes"))
                        for i in c["items"]
                    ),
                )
                for c in data.get("checklists", ())
            ),
            canonical=json.dumps(data, sort_keys=True),
        )


@lru_cache(maxsize=8192)
def _decoded_block(text: str) -> IpacBlock | None:
    """A block's JSON decoded once per process: sections are immutable once indexed, and
    opa.ipac_guidance reads the same topic's blocks on every call (decoding and re-encoding
    them to the canonical form cost ~0.6 ms a call at 10x). Blocks are frozen, so one serves
    every row that carries it."""
    data = json.loads(text)
    return IpacBlock.from_dict(data) if data else None


@dataclass(frozen=True)
class SectionRow:
    """One section (parent or child chunk) with its document's fields, from either path."""

    section_id: str
    document_id: str
    parent_id: str | None
    chunk_type: ChunkType
    section_idx: int
    chunk_idx: int | None
    section_heading: str
    text: str
    policy_level: PolicyLevel | None
    ipac: IpacBlock | None
    source_org: SourceOrg
    document_type: str
    document_title: str
    source_url: str
    policy_number: str | None
    published_date: str | None
    effective_date: str | None
    updated_date: str | None
    review_date: str | None
    topics: tuple[str, ...]
    is_superseded: bool
    superseded_by: str | None
    bm25: float | None = None  # the keyword path's score

    @classmethod
    def from_sql(cls, r: Mapping[str, Any], bm25: float | None = None) -> SectionRow:
        """A row of `SECTION_COLUMNS`, its JSON columns decoded."""
        return cls(
            section_id=r["section_id"],
            document_id=r["document_id"],
            parent_id=r["parent_id"],
            chunk_type=r["chunk_type"],
            section_idx=r["section_idx"],
            chunk_idx=r["chunk_idx"],
            section_heading=r["section_heading"],
            text=r["text"],
            policy_level=r["policy_level"],
            ipac=IpacBlock.decode(r["ipac"]),
            source_org=r["source_org"],
            document_type=r["document_type"],
            document_title=r["document_title"],
            source_url=r["source_url"],
            policy_number=r["policy_number"],
            published_date=r["published_date"],
            effective_date=r["effective_date"],
            updated_date=r["updated_date"],
            review_date=r["review_date"],
            topics=tuple(json.loads(r["topics"] or "[]")),
            is_superseded=bool(r["is_superseded"]),
            superseded_by=r["superseded_by"],
            bm25=bm25,
        )

    @classmethod
    def from_vector(cls, hit: VectorHit) -> SectionRow:
        """The row rebuilt from the vector store alone, so the vector path needs no SQL."""
        m = hit.metadata

        def opt(key: str) -> Any:
            return m.get(key) or None

        return cls(
            section_id=hit.id,
            document_id=m.get("document_id") or "",
            parent_id=opt("parent_id"),
            chunk_type=m.get("chunk_type", "parent"),
            section_idx=int(m.get("section_idx") or 0),
            chunk_idx=int(m.get("chunk_idx") or 0) or None,
            section_heading=m.get("section_heading", ""),
            text=hit.text.split("\n", 1)[1] if "\n" in hit.text else hit.text,
            policy_level=opt("policy_level"),
            ipac=IpacBlock.decode(m.get("ipac")),
            source_org=m["source_org"],  # the builder writes every document field
            document_type=m["document_type"],
            document_title=m.get("title", ""),
            source_url=m.get("source_url", ""),
            policy_number=opt("policy_number"),
            published_date=opt("published_date"),
            effective_date=opt("effective_date"),
            updated_date=opt("updated_date"),
            review_date=opt("review_date"),
            topics=tuple(t for t in str(m.get("topics", "")).split(";") if t),
            is_superseded=bool(m.get("is_superseded")),
            superseded_by=opt("superseded_by"),
        )


SECTION_COLUMNS = """
  s.section_id, s.document_id, s.parent_id, s.chunk_type, s.section_idx, s.chunk_idx, s.section_heading,
  s.text, s.policy_level, s.ipac, d.source_org, d.document_type, d.title AS document_title, d.source_url,
  d.policy_number, d.published_date, d.effective_date, d.updated_date, d.review_date, d.topics,
  d.is_superseded, d.superseded_by
"""
