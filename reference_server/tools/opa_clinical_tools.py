"""opa.clinical_tools: find Centre for Effective Practice tools by condition, name, category or feature."""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, Field

from reference_server.retrieval import opa_cep_tools
from reference_server.retrieval.dual_path import run_dual
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OPA, calculate_confidence
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Path

NAME = "opa.clinical_tools"
FEATURES = {
    "algorithm": "assessment_algorithm",
    "calculator": "calculator",
    "checklist": "checklist",
}


class Request(StrictModel):
    condition: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Clinical condition, e.g. 'dementia'.",
    )
    tool_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Tool name or part of it.",
    )
    category: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        pattern=NON_BLANK,
        description="CEP category, e.g. 'mental_health', 'chronic_disease', 'pain_msk'.",
    )
    feature_type: Literal["algorithm", "calculator", "checklist"] | None = Field(
        default=None, description="Only tools with this feature."
    )
    include_sections: bool = Field(
        default=False, description="Include section summaries with anchor URLs."
    )
    n_results: int = Field(
        default=20,
        ge=1,
        le=50,
        description="Most tools returned, best match first (default 20, max 50).",
    )


class FeatureLink(BaseModel):
    available: bool
    url: str | None


class KeyFeatures(BaseModel):
    assessment_algorithm: FeatureLink
    calculator: FeatureLink
    checklist: FeatureLink
    screening_tools: list[str]


class ToolSection(BaseModel):
    title: str
    summary: str
    url: str


class QuickLinks(BaseModel):
    full_tool: str
    pdf_version: str | None


class ClinicalTool(BaseModel):
    tool_id: str
    name: str
    url: str
    last_updated: str | None
    category: str
    summary: str
    key_features: KeyFeatures
    sections: list[ToolSection]
    quick_links: QuickLinks
    score: float


class Response(BaseModel):
    provenance: list[Path]
    confidence: float = Field(ge=0.0, le=1.0)
    tools: list[ClinicalTool]
    total_tools: int = Field(description="Tools matched before truncation to n_results.")
    query_interpretation: str


def _link(base: str, anchor: str | None) -> FeatureLink:
    if not anchor:
        return FeatureLink(available=False, url=None)
    return FeatureLink(
        available=True,
        url=anchor
        if anchor.startswith("http")
        else base.rstrip("/") + "/" + quote(anchor, safe="#-_.~"),
    )


def _matches(doc: dict[str, Any], req: Request) -> float:
    """Structured match score (0 = excluded) for one tool document."""
    tool = doc["tool"]
    if req.category and tool.get("category", "").lower() != req.category.lower():
        return 0.0
    if req.feature_type and not (tool.get("features") or {}).get(FEATURES[req.feature_type]):
        return 0.0
    score = 1.0
    if req.tool_name:
        name = doc["title_lower"]
        if req.tool_name.lower() not in name and not all(
            w in name for w in req.tool_name.lower().split()
        ):
            return 0.0
        score += 2.0
    if req.condition:
        c = req.condition.lower()
        names = doc["match_names"]  # conditions and topics, lower-cased once (opa_cep_tools)
        if c in names:
            score += 3.0
        elif (
            c in doc["match_text"]  # c inside one of the names: c holds no control character
            or any(n in c for n in names)
            or c in doc["title_lower"]
        ):
            score += 2.0
        else:
            return 0.0
    return score


def matching(docs: list[dict[str, Any]], req: Request) -> list[dict[str, Any]]:
    """The documents that match the request, best structured match first."""
    scored = [(d, _matches(d, req)) for d in docs]
    ranked = sorted(scored, key=lambda x: (-x[1], x[0]["title"]))
    return [d | {"match": score} for d, score in ranked if score > 0]


def _interpretation(req: Request) -> str:
    parts = [
        f"{k.replace('_', ' ')} = {v!r}"
        for k, v in req.model_dump(exclude={"include_sections", "n_results"}).items()
        if v
    ]
    return "CEP tools where " + ", ".join(parts) if parts else "All CEP clinical tools"


async def run(rt: Runtime, req: Request) -> ToolOutput:
    query = " ".join(
        filter(
            None, [req.condition, req.tool_name, req.category and req.category.replace("_", " ")]
        )
    )
    dual = await run_dual(
        rt.settings,
        sql=lambda: matching(opa_cep_tools.keyword_search(rt.opa_sql), req),
        vector=(lambda: opa_cep_tools.vector_search(rt.vectors, query)) if query else None,
    )
    hits = dual.vector.value or []
    # Without the SQL path, the tool blocks the vector chunks carry still answer (partially).
    docs = (
        dual.sql.value
        if dual.sql.value is not None
        else matching(opa_cep_tools.tools_from_vectors(hits), req)
    )
    vector_rank: dict[str, int] = {}
    for rank, h in enumerate(hits, start=1):
        vector_rank.setdefault(str(h.metadata.get("document_id")), rank)
    ranked = sorted(
        docs,
        key=lambda d: (
            -(
                d["match"]
                + (1.0 / vector_rank[d["document_id"]] if d["document_id"] in vector_rank else 0.0)
            ),
            d["title"],
        ),
    )
    # A category or feature lists every tool it has: the answer keeps the best n_results, so
    # its size (and cost) does not follow the catalogue's.
    tools = []
    for d in ranked[: req.n_results]:
        t = d["tool"]
        features = t.get("features") or {}
        base = d["source_url"]
        nav = t.get("navigation") or []
        tools.append(
            ClinicalTool(
                tool_id=t.get("tool_id", d["document_id"]),
                name=d["title"],
                url=base,
                last_updated=d.get("updated_date"),
                category=t.get("category", ""),
                summary=t.get("summary")
                or (nav[0]["summary"] if nav and nav[0].get("summary") else d["title"]),
                key_features=KeyFeatures(
                    assessment_algorithm=_link(base, features.get("assessment_algorithm")),
                    calculator=_link(base, features.get("calculator")),
                    checklist=_link(base, features.get("checklist")),
                    screening_tools=t.get("screening_tools") or [],
                ),
                sections=[
                    ToolSection(
                        title=n["title"],
                        summary=n.get("summary") or "",
                        url=_link(base, n.get("anchor")).url or base,
                    )
                    for n in nav
                ]
                if req.include_sections
                else [],
                quick_links=QuickLinks(full_tool=base, pdf_version=t.get("pdf_url")),
                score=round(d["match"], 4),
            )
        )
    corroborated = sum(d["document_id"] in vector_rank for d in ranked)
    response = Response(
        provenance=dual.provenance,
        confidence=calculate_confidence(
            len(ranked) if dual.sql.ok else 0,
            len(vector_rank),
            0,
            OPA,
            num_corroborated=corroborated,
        ),
        tools=tools,
        total_tools=len(ranked),
        query_interpretation=_interpretation(req),
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Find Centre for Effective Practice clinical tools by condition, tool name, category or feature type "
        "(algorithm, calculator, checklist), with deep links to those features and optional section summaries."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={},
)
