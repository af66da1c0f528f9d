"""opa.ipac_guidance: PHO infection prevention and control requirements, practices and checklists."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval import opa_ipac
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_ipac import SqlFound, section_settings, source_label
from reference_server.retrieval.opa_sections import (
    SectionHit,
    fuse,
    metadata_conflicts,
    rerank_sections,
    section_counts,
)
from reference_server.runtime import Runtime
from reference_server.scoring.citations import section_citation
from reference_server.scoring.confidence import confidence_from
from reference_server.scoring.conflicts import (
    Conflict,
    Statement,
    StatementIndex,
    level_conflicts,
)
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Evidence

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


def _mentions_item(row: dict[str, Any], item: str) -> bool:
    item = item.lower()
    items = [i.lower() for i in (row.get("ipac") or {}).get("items", [])]
    return any(item in i or i in item for i in items) or item in row["text"].lower()


def _settings(hit: SectionHit) -> list[str]:
    return section_settings(hit.row.get("ipac") or {})


def _total_sections(
    in_setting: list[SectionHit], topic: str, setting: str, found: SqlFound | None
) -> int:
    """Sections on the topic for the setting: every current one (counted once per process, as
    only the best-ranked are read), plus the other sections the answer found relevant."""
    if found is None:  # degraded: only what the vector path returned
        return len(in_setting)

    def counted(h: SectionHit) -> bool:
        return (h.row.get("ipac") or {}).get("topic") == topic and not h.row["is_superseded"]

    return found.topic_sections[setting] + sum(not counted(h) for h in in_setting)


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
            by_section[r.source_section_id]["document_id"],
            source_label(by_section[r.source_section_id]),
        )
        for r in requirements
    ]
    others = [
        Statement(q["level"], q["text"], h.row["document_id"], source_label(h.row))
        for h in used
        for q in (h.row.get("ipac") or {}).get("requirements", [])
    ]
    items = [i for h in used for i in (h.row.get("ipac") or {}).get("items", [])]
    return level_conflicts(answer, others, items, reference=cpso) + metadata_conflicts(used)


async def run(rt: Runtime, req: Request) -> ToolOutput:
    query = " ".join(filter(None, [req.specific_item, TOPIC_WORDS[req.topic]]))
    dual = await run_dual(
        rt.settings,
        sql=lambda: opa_ipac.keyword_search(rt.opa_sql, req.topic, query),
        vector=lambda: opa_ipac.vector_search(rt.vectors, query),
    )
    sql_found = dual.sql.value
    pho = sql_found.pho if sql_found else None
    hits = fuse(pho, dual.vector.value, query, rt.settings.today(), rt.settings.fusion)
    hits, meta = await rerank_sections(rt.settings, query, hits, dual.total_ms)
    relevant = [
        h
        for h in hits
        if (h.row.get("ipac") or {}).get("topic") == req.topic
        or (req.specific_item and _mentions_item(h.row, req.specific_item))
    ]
    if req.specific_item:
        relevant.sort(key=lambda h: not _mentions_item(h.row, req.specific_item or ""))
    requirements: list[Requirement] = []
    practices: list[str] = []
    checklists: list[Checklist] = []
    in_setting = [h for h in relevant if req.setting in _settings(h)]
    # A topic's sections grow with the corpus: the answer is built from the best n_sections, so
    # its size (and cost) does not follow the corpus.
    used = in_setting[: req.n_sections]
    for h in used:
        block = h.row.get("ipac") or {}
        for r in sorted(
            block.get("requirements", []), key=lambda r: LEVEL_ORDER.get(r["level"], 3)
        ):
            requirements.append(
                Requirement(
                    level=r["level"],
                    text=r["text"],
                    rationale=r.get("rationale"),
                    source_section_id=h.parent_id,
                )
            )
        practices += [p for p in block.get("best_practices", []) if p not in practices]
        if req.include_checklists:
            checklists += [Checklist(**c) for c in block.get("checklists", [])]
    conflicts = _conflicts(used, requirements, sql_found.cpso if sql_found else None)
    cited = used[:8]
    docs = {h.row["document_id"]: h.row for h in cited}
    response = Response(
        provenance=dual.provenance,
        confidence=confidence_from(section_counts(cited), len(conflicts)),
        topic=req.topic,
        setting=req.setting,
        requirements=requirements,
        best_practices=practices,
        checklists=checklists,
        references=[
            Reference(title=r["document_title"], url=r["source_url"], date=r.get("updated_date"))
            for r in docs.values()
        ],
        citations=[section_citation(h.row) for h in cited],
        conflicts=conflicts,
        total_sections=_total_sections(in_setting, req.topic, req.setting, sql_found),
    )
    return ToolOutput(response, dual, meta)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Public Health Ontario infection prevention and control guidance for clinical office practice: "
        "requirements (must/should/may with rationale), best practices and checklists for reprocessing, PPE, "
        "hand hygiene and environmental cleaning, optionally for one item (e.g. spirometer)."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"topic": "hand_hygiene"},
)
