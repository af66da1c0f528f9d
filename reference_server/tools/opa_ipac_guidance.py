"""opa.ipac_guidance: PHO infection prevention and control requirements, practices and checklists."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_sections import (
    SECTION_COLUMNS,
    Filters,
    confidence,
    decode_row,
    fuse,
    keyword_search,
    vector_search,
)
from reference_server.runtime import Runtime
from reference_server.scoring.citations import section_citation
from reference_server.tools.base import StrictModel, ToolOutput, ToolSpec
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
        max_length=200,
        description="Specific equipment or procedure, e.g. 'spirometer'.",
    )
    include_checklists: bool = Field(default=True, description="Include checklists.")


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


def _mentions_item(row: dict[str, Any], item: str) -> bool:
    item = item.lower()
    items = [i.lower() for i in (row.get("ipac") or {}).get("items", [])]
    return any(item in i or i in item for i in items) or item in row["text"].lower()


async def run(rt: Runtime, req: Request) -> ToolOutput:
    query = " ".join(filter(None, [req.specific_item, TOPIC_WORDS[req.topic]]))
    filters = Filters(source_orgs=["pho"], chunk_types=("parent",))

    def sql_path() -> list[dict[str, Any]]:
        tagged = rt.opa_sql.query(
            f"""SELECT {SECTION_COLUMNS} FROM opa_sections s JOIN opa_documents d ON d.document_id = s.document_id
                WHERE s.source_org = 'pho' AND s.chunk_type = 'parent' AND d.is_superseded = 0
                AND json_extract(s.ipac, '$.topic') = ?""",
            (req.topic,),
        )
        rows = [decode_row(r) for r in tagged]
        seen = {r["section_id"] for r in rows}
        rows += [
            r
            for r in keyword_search(rt.opa_sql, query, filters, limit=10)
            if r["section_id"] not in seen
        ]
        return rows

    dual = await run_dual(
        rt.settings,
        sql=sql_path,
        vector=lambda: vector_search(rt.vectors, query, filters, limit=10),
    )
    hits = fuse(dual.sql.value, dual.vector.value, query, rt.settings.today(), rt.settings.fusion)
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
    for h in relevant:
        block = h.row.get("ipac") or {}
        settings = block.get("settings") or ["office", "clinic", "procedure_room"]
        if req.setting not in settings:
            continue
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
    used = relevant[:8]
    docs = {h.row["document_id"]: h.row for h in used}
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        confidence=confidence(used, 0),
        topic=req.topic,
        setting=req.setting,
        requirements=requirements,
        best_practices=practices,
        checklists=checklists,
        references=[
            Reference(title=r["document_title"], url=r["source_url"], date=r.get("updated_date"))
            for r in docs.values()
        ],
        citations=[section_citation(h.row) for h in used],
        conflicts=[],
    )
    return ToolOutput(response, dual)


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
)
