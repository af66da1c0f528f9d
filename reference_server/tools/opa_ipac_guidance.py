"""opa.ipac_guidance: PHO infection prevention and control requirements, practices and checklists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval import opa_ipac
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_ipac import SqlFound, section_settings, source_label
from reference_server.retrieval.opa_section_rows import IpacChecklist, SectionRow
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.citations import Citation, section_citation
from reference_server.scoring.conflicts import (
    Conflict,
    Statement,
    StatementIndex,
    level_conflicts,
)
from reference_server.scoring.features import Signals
from reference_server.tools.base import ExtraMeta
from reference_server.tools.common import Evidence
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score
from reference_server.tools.section_merge import (
    SectionHit,
    fused_and_reranked,
    metadata_conflicts,
    section_counts,
)

NAME = "opa.ipac_guidance"
Topic = Literal["reprocessing", "ppe", "hand_hygiene", "environmental"]
TOPIC_WORDS = {
    "reprocessing": "reprocessing cleaning disinfection sterilization reusable medical equipment devices",
    "ppe": "personal protective equipment gloves gowns masks N95 respirator eye protection",
    "hand_hygiene": "hand hygiene alcohol-based hand rub handwashing",
    "environmental": "environmental cleaning disinfection surfaces frequency",
}
LEVEL_ORDER = {"must": 0, "should": 1, "may": 2}


class Request(StrictModel):
    topic: Topic = Field(description="IPAC topic.")
    setting: Literal["office", "clinic", "procedure_room"] = Field(
        default="office", description="Practice setting."
    )
    specific_item: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Specific equipment or procedure, e.g. 'spirometer'.",
    )
    include_checklists: bool = Field(default=True, description="Include checklists.")
    n_sections: int = Field(
        default=12,
        ge=1,
        le=50,
        description="Most guidance sections the answer is built from, best ranked first (default 12, max 50).",
    )


class Requirement(BaseModel):
    level: Literal["must", "should", "may"]
    text: str
    rationale: str | None
    source_section_id: str
    source_url: str = Field(description="Official URL of the guidance document.")
    section_heading: str = Field(description="Heading of the section, as the document has it.")


class ChecklistItem(BaseModel):
    item: str
    required: bool
    notes: str | None = None


class Checklist(BaseModel):
    name: str
    frequency: str
    items: list[ChecklistItem]


class Reference(BaseModel):
    title: str
    url: str
    date: str | None


class Response(Evidence):
    topic: Topic
    setting: str
    requirements: list[Requirement]
    best_practices: list[str]
    checklists: list[Checklist]
    references: list[Reference]
    total_sections: int = Field(
        description="Sections on the topic for this setting, before truncation to n_sections."
    )


def _mentions_item(row: SectionRow, item: str) -> bool:
    item = item.lower()
    items = [i.lower() for i in row.ipac.items] if row.ipac else []
    return any(item in i or i in item for i in items) or item in row.text.lower()


def _topic(hit: SectionHit) -> str | None:
    return hit.row.ipac.topic if hit.row.ipac else None


def _total_sections(
    in_setting: list[SectionHit], topic: str, setting: str, found: SqlFound | None
) -> int:
    """Sections on the topic for the setting: every current one (counted once per process, as
    only the best-ranked are read), plus the other sections the answer found relevant."""
    if found is None:  # degraded: only what the vector path returned
        return len(in_setting)

    def counted(h: SectionHit) -> bool:
        return _topic(h) == topic and not h.row.is_superseded

    return found.topic_sections[setting] + sum(not counted(h) for h in in_setting)


def _checklist(c: IpacChecklist) -> Checklist:
    return Checklist(
        name=c.name,
        frequency=c.frequency,
        items=[ChecklistItem(item=i.item, required=i.required, notes=i.notes) for i in c.items],
    )


def _conflicts(
    used: list[SectionHit], requirements: list[Requirement], cpso: StatementIndex | None
) -> list[Conflict]:
    """Requirement levels the answer lists that another source states differently (PHO's other
    document, or CPSO's IPAC policy and advice), plus SQL/vector metadata disagreements."""
    by_section = {h.parent_id: h.row for h in used}
    answer = [
        Statement(
            r.level,
            r.text,
            by_section[r.source_section_id].document_id,
            source_label(by_section[r.source_section_id]),
        )
        for r in requirements
    ]
    others = [
        Statement(q.level, q.text, h.row.document_id, source_label(h.row))
        for h in used
        if h.row.ipac
        for q in h.row.ipac.requirements
    ]
    items = [i for h in used if h.row.ipac for i in h.row.ipac.items]
    return level_conflicts(answer, others, items, reference=cpso) + metadata_conflicts(used)


@dataclass(frozen=True)
class Query:
    topic: Topic
    setting: Literal["office", "clinic", "procedure_room"]
    item: str | None
    include_checklists: bool
    n_sections: int
    text: str  # the item and the topic's words: what both paths search for


@dataclass(frozen=True)
class Guidance:
    """The sections an answer is built from and what it reads out of their IPAC blocks. Every
    section used is cited: the answer is read from all of them (a requirement names its
    section), so no requirement points at a section the citations leave out."""

    used: list[SectionHit]  # the best n_sections in the setting
    requirements: list[Requirement]
    practices: list[str]
    checklists: list[Checklist]
    total_sections: int
    rerank: ExtraMeta


def _in_setting(hits: list[SectionHit], q: Query) -> list[SectionHit]:
    """The fused sections on the topic (or naming the item, those first) for the setting."""
    item = q.item
    relevant = [h for h in hits if _topic(h) == q.topic or (item and _mentions_item(h.row, item))]
    if item:
        relevant.sort(key=lambda h: not _mentions_item(h.row, item))
    return [h for h in relevant if q.setting in section_settings(h.row.ipac)]


def _read_blocks(
    used: list[SectionHit], include_checklists: bool
) -> tuple[list[Requirement], list[str], list[Checklist]]:
    """The sections' IPAC blocks read out: requirements (must first), best practices once
    each, and the checklists when asked."""
    requirements: list[Requirement] = []
    practices: list[str] = []
    checklists: list[Checklist] = []
    for h in used:
        block = h.row.ipac
        if block is None:
            continue
        for r in sorted(block.requirements, key=lambda r: LEVEL_ORDER.get(r.level, 3)):
            requirements.append(
                Requirement(
                    level=r.level,
                    text=r.text,
                    rationale=r.rationale,
                    source_section_id=h.parent_id,
                    source_url=h.row.source_url,
                    section_heading=h.row.section_heading,
                )
            )
        practices += [p for p in block.best_practices if p not in practices]
        if include_checklists:
            checklists += [_checklist(c) for c in block.checklists]
    return requirements, practices, checklists


Found = DualResult[SqlFound, list[VectorHit]]


class IpacGuidance(DualPathTool[Request, Query, SqlFound, list[VectorHit], Guidance, Response]):
    name = NAME
    confidence_family = "opa_tools"
    title = "Infection prevention and control guidance"
    description = (
        "Public Health Ontario infection prevention and control guidance for clinical office practice: "
        "requirements (must/should/may with rationale), best practices and checklists for reprocessing, PPE, "
        "hand hygiene and environmental cleaning, optionally for one item (e.g. spirometer)."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(topic="hand_hygiene")

    def parse(self, rt: Runtime, req: Request) -> Query:
        text = " ".join(filter(None, [req.specific_item, TOPIC_WORDS[req.topic]]))
        return Query(
            req.topic,
            req.setting,
            req.specific_item,
            req.include_checklists,
            req.n_sections,
            text,
        )

    def sql(self, rt: Runtime, q: Query) -> SqlFound:
        return opa_ipac.keyword_search(
            rt.opa_sql, q.topic, q.text, topic_limit=opa_ipac.topic_limit(q.n_sections)
        )

    def vector(self, rt: Runtime, q: Query) -> list[VectorHit]:
        return opa_ipac.vector_search(rt.vectors, q.text)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Guidance:
        sql_found = found.sql.value
        hits, meta = await fused_and_reranked(
            rt.settings,
            q.text,
            sql_found.pho if sql_found else None,
            found.vector.value,
            found.total_ms,
        )
        in_setting = _in_setting(hits, q)
        # A topic's sections grow with the corpus: the answer is built from the best n_sections,
        # so its size (and cost) does not follow the corpus.
        used = in_setting[: q.n_sections]
        total = _total_sections(in_setting, q.topic, q.setting, sql_found)
        return Guidance(used, *_read_blocks(used, q.include_checklists), total, meta)

    def score(self, q: Query, merged: Guidance, found: Found) -> Score[Citation]:
        cpso = found.sql.value.cpso if found.sql.value else None
        return Score(
            citations=[section_citation(h.row) for h in merged.used],
            conflicts=_conflicts(merged.used, merged.requirements, cpso),
            counts=section_counts(merged.used),
            signals=Signals(no_answer=not merged.used),
        )

    def respond(self, q: Query, merged: Guidance, evidence: EvidenceFields[Any]) -> Response:
        docs = {h.row.document_id: h.row for h in merged.used}
        return Response(
            **evidence,
            topic=q.topic,
            setting=q.setting,
            requirements=merged.requirements,
            best_practices=merged.practices,
            checklists=merged.checklists,
            references=[
                Reference(title=r.document_title, url=r.source_url, date=r.updated_date)
                for r in docs.values()
            ],
            total_sections=merged.total_sections,
        )

    def meta(self, merged: Guidance) -> ExtraMeta:
        return merged.rerank


TOOL = IpacGuidance()
