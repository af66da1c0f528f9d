"""opa.clinical_tools: find Centre for Effective Practice tools by condition, name, category or feature."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from reference_server.retrieval import opa_cep_tools
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_cep_tools import CepCatalogue, CepToolDoc, Feature
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OPA, Counts
from reference_server.scoring.features import Signals
from reference_server.tools.common import CONFIDENCE_DESCRIPTION, ConfidenceBasis, Path
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score

NAME = "opa.clinical_tools"
FEATURES: dict[str, Feature] = {
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
    model_config = ConfigDict(frozen=True)

    available: bool
    url: str | None


class KeyFeatures(BaseModel):
    model_config = ConfigDict(frozen=True)

    assessment_algorithm: FeatureLink
    calculator: FeatureLink
    checklist: FeatureLink
    screening_tools: list[str]


class ToolSection(BaseModel):
    model_config = ConfigDict(frozen=True)

    title: str
    summary: str
    url: str


class QuickLinks(BaseModel):
    model_config = ConfigDict(frozen=True)

    full_tool: str
    pdf_version: str | None


class ClinicalTool(BaseModel):
    # built once per document (`to_tool`) and shared by every answer that lists it
    model_config = ConfigDict(frozen=True)

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
    confidence: float = Field(ge=0.0, le=1.0, description=CONFIDENCE_DESCRIPTION)
    confidence_basis: ConfidenceBasis | None = Field(
        default=None,
        description="What confidence was computed from (spec score and inputs, calibrated "
        "probability and features).",
    )
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


@dataclass(frozen=True)
class Query:
    condition: str | None  # lower-cased
    condition_runs: frozenset[str]  # opa_cep_tools.word_runs of the condition (empty without)
    tool_name: str | None  # lower-cased
    category: str | None  # lower-cased
    feature: Feature | None
    include_sections: bool
    n_results: int
    text: str  # what the vector path searches for ('' : no vector search)
    interpretation: str


@dataclass(frozen=True)
class Matched:
    doc: CepToolDoc
    match: float  # the structured match score
    position: int  # the document's position in its catalogue (its `memo` key)


def _matches(doc: CepToolDoc, q: Query) -> float:
    """Structured match score (0 = excluded) for one tool document."""
    tool = doc.tool
    if q.category and doc.category_lower != q.category:
        return 0.0
    if q.feature and not tool.features.anchor(q.feature):
        return 0.0
    score = 1.0
    if q.tool_name:
        name = doc.title_lower
        if q.tool_name == name:  # its own title: ahead of longer titles that contain it
            score += 3.0
        elif q.tool_name in name or all(w in name for w in q.tool_name.split()):
            score += 2.0
        else:
            return 0.0
    if q.condition:
        c = q.condition
        names = doc.match_names  # conditions and topics, lower-cased once (opa_cep_tools)
        if c in names:
            score += 3.0
        elif (
            c in doc.match_text  # c inside one of the names: c holds no control character
            or not q.condition_runs.isdisjoint(doc.match_words)  # a name's whole words in c
            or c in doc.title_lower
        ):
            score += 2.0
        else:
            return 0.0
    return score


def candidates(catalogue: CepCatalogue, q: Query) -> list[int]:
    """Positions of the documents that can match: every filter's lookup or substring test
    keeps at least the documents `_matches` accepts for it (a title holding the whole name
    holds each of its words; a name equal to the condition is inside the name text)."""
    pool: set[int] | None = None

    def narrow(found: set[int]) -> None:
        nonlocal pool
        pool = found if pool is None else pool & found

    if q.category:
        narrow(set(catalogue.by_category.get(q.category, ())))
    if q.feature:
        narrow(set(catalogue.with_feature.get(q.feature, ())))
    if q.tool_name and (words := q.tool_name.split()):
        for word in words:
            narrow(catalogue.titles_with(word))
    if q.condition:
        found = catalogue.names_with(q.condition) | catalogue.titles_with(q.condition)
        for run in q.condition_runs:
            found.update(catalogue.by_name_words.get(run, ()))
        narrow(found)
    return list(range(len(catalogue.docs))) if pool is None else sorted(pool)


def matching(docs: CepCatalogue | list[CepToolDoc], q: Query) -> list[Matched]:
    """The documents that match the request, best structured match first."""
    catalogue = docs if isinstance(docs, CepCatalogue) else CepCatalogue.of(docs)
    scored = [
        Matched(catalogue.docs[i], _matches(catalogue.docs[i], q), i)
        for i in candidates(catalogue, q)
    ]
    ranked = sorted(scored, key=lambda m: (-m.match, m.doc.title))
    return [m for m in ranked if m.match > 0]


def _interpretation(req: Request) -> str:
    parts = [
        f"{k.replace('_', ' ')} = {v!r}"
        for k, v in req.model_dump(exclude={"include_sections", "n_results"}).items()
        if v
    ]
    return "CEP tools where " + ", ".join(parts) if parts else "All CEP clinical tools"


def to_tool(m: Matched, include_sections: bool, catalogue: CepCatalogue) -> ClinicalTool:
    """The answer entry of a matched document: built once per document and form (documents are
    read-only), then copied with this request's score."""
    key = (m.position, include_sections)
    built: ClinicalTool | None = catalogue.memo.get(key)
    if built is None:
        built = catalogue.memo[key] = _entry(m.doc, include_sections)
    return built.model_copy(update={"score": round(m.match, 4)})


def _entry(d: CepToolDoc, include_sections: bool) -> ClinicalTool:
    t = d.tool
    base = d.source_url
    nav = t.navigation
    return ClinicalTool(
        tool_id=t.tool_id,
        name=d.title,
        url=base,
        last_updated=d.updated_date,
        category=t.category,
        summary=t.summary or (nav[0].summary if nav and nav[0].summary else d.title),
        key_features=KeyFeatures(
            assessment_algorithm=_link(base, t.features.assessment_algorithm),
            calculator=_link(base, t.features.calculator),
            checklist=_link(base, t.features.checklist),
            screening_tools=list(t.screening_tools),
        ),
        sections=[
            ToolSection(
                title=n.title, summary=n.summary or "", url=_link(base, n.anchor).url or base
            )
            for n in nav
        ]
        if include_sections
        else [],
        quick_links=QuickLinks(full_tool=base, pdf_version=t.pdf_url),
        score=0.0,
    )


@dataclass(frozen=True)
class Ranked:
    tools: list[Matched]  # every matching tool, best first
    catalogue: CepCatalogue  # the one they were matched in (its memo builds the answer)
    vector_rank: dict[str, int]  # document id -> best rank of its chunks on the vector path


Found = DualResult[CepCatalogue, list[VectorHit]]


class ClinicalTools(DualPathTool[Request, Query, CepCatalogue, list[VectorHit], Ranked, Response]):
    name = NAME
    confidence_family = "opa_tools"
    title = "Find CEP clinical tools"
    description = (
        "Find Centre for Effective Practice clinical tools by condition, tool name, category or feature type "
        "(algorithm, calculator, checklist), with deep links to those features and optional section summaries."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request()

    def parse(self, rt: Runtime, req: Request) -> Query:
        text = " ".join(
            filter(
                None,
                [req.condition, req.tool_name, req.category and req.category.replace("_", " ")],
            )
        )
        return Query(
            condition=req.condition.lower() if req.condition else None,
            condition_runs=opa_cep_tools.word_runs(opa_cep_tools.padded_words(req.condition))
            if req.condition
            else frozenset(),
            tool_name=req.tool_name.lower() if req.tool_name else None,
            category=req.category.lower() if req.category else None,
            feature=FEATURES[req.feature_type] if req.feature_type else None,
            include_sections=req.include_sections,
            n_results=req.n_results,
            text=text,
            interpretation=_interpretation(req),
        )

    def paths(self, q: Query) -> tuple[bool, bool]:
        return True, bool(q.text)

    def sql(self, rt: Runtime, q: Query) -> CepCatalogue:
        return opa_cep_tools.keyword_search(rt.opa_sql)

    def vector(self, rt: Runtime, q: Query) -> list[VectorHit]:
        return opa_cep_tools.vector_search(rt.vectors, q.text)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Ranked:
        hits = found.vector.value or []
        # Without the SQL path, the tool blocks the vector chunks carry still answer (partially).
        catalogue = found.sql.value
        if catalogue is None:
            catalogue = CepCatalogue.of(opa_cep_tools.tools_from_vectors(hits))
        matched = matching(catalogue, q)
        vector_rank: dict[str, int] = {}
        for rank, h in enumerate(hits, start=1):
            vector_rank.setdefault(str(h.metadata.get("document_id")), rank)

        def key(m: Matched) -> tuple[float, str]:
            rank = vector_rank.get(m.doc.document_id)
            return (-(m.match + (1.0 / rank if rank else 0.0)), m.doc.title)

        return Ranked(sorted(matched, key=key), catalogue, vector_rank)

    def score(self, q: Query, merged: Ranked, found: Found) -> Score[None]:
        ranked, vector_rank = merged.tools, merged.vector_rank
        return Score(
            counts=Counts(
                sql_records=len(ranked) if found.sql.ok else 0,
                vector_passages=len(vector_rank),
                profile=OPA,
                corroborated=sum(m.doc.document_id in vector_rank for m in ranked),
            ),
            signals=Signals(
                no_answer=not ranked,
                corroborated=bool(ranked) and ranked[0].doc.document_id in vector_rank,
            ),
        )

    def respond(self, q: Query, merged: Ranked, evidence: EvidenceFields[Any]) -> Response:
        # A category or feature lists every tool it has: the answer keeps the best n_results,
        # so its size (and cost) does not follow the catalogue's.
        return Response(
            provenance=evidence["provenance"],
            confidence=evidence["confidence"],
            confidence_basis=evidence["confidence_basis"],
            tools=[
                to_tool(m, q.include_sections, merged.catalogue)
                for m in merged.tools[: q.n_results]
            ],
            total_tools=len(merged.tools),
            query_interpretation=q.interpretation,
        )


TOOL = ClinicalTools()
