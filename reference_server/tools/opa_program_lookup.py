"""opa.program_lookup: Ontario Health programs, answered from the local corpus with each fact's source.

The union of both spec revisions: 000's `program` (any Ontario Health program) and `info_needed`,
001's `query_type`; the response carries both revisions' fields. The four screening programs
(cervical, breast, colorectal, lung) are in the local corpus; any other program gets a clear
answer saying it is not, never an input error. Every recommendation, interval and pathway step
carries the page it was verified from (`verified_from`) or `unverified: true`; answers that rest
on unverified facts lose confidence and say so. `last_updated` is the time of the look-up (000:
"timestamp of search").
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_programs import (
    program_docs_from_hits,
    program_key,
    sql_program_docs,
    vector_program_hits,
)
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OPA, calculate_confidence
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.base import StrictModel, TextItem, ToolOutput, ToolSpec
from reference_server.tools.common import Path
from reference_server.tools.program_facts import (
    Source,
    answer_notes,
    citation_rows,
    merged_program,
    pages,
    patient_answer,
    penalised,
    pool,
    program_conflicts,
    sources_of,
    unverified_facts,
)

NAME = "opa.program_lookup"
QueryType = Literal["intervals", "eligibility", "pathway", "referral"]
InfoNeeded = Literal["eligibility", "intervals", "locations", "referral", "procedures", "pathway"]


class Request(StrictModel):
    program: str = Field(
        min_length=1,
        max_length=200,
        description="Any Ontario Health program (000), e.g. 'cervical', 'breast', 'colorectal', 'lung', 'OBSP', 'kidney care'.",
    )
    query_type: QueryType | None = Field(
        default=None,
        description="What the question is about (001): intervals, eligibility, pathway or referral; it sets guidance_type and which facts lead.",
    )
    patient_age: int | None = Field(default=None, ge=0, le=120, description="Patient age.")
    risk_factors: list[TextItem] | None = Field(
        default=None, max_length=20, description="Risk factors, e.g. ['family history', 'BRCA1']."
    )
    info_needed: list[InfoNeeded] | None = Field(
        default=None,
        description="Parts of the answer wanted (000); parts not named are left empty.",
    )


class Recommendation(BaseModel):
    text: str
    category: str
    age_range: list[int] | None
    frequency: str | None
    conditions: list[str]
    source_section_id: str
    verified_from: list[Source]
    unverified: bool


class Algorithm(BaseModel):
    name: str
    description: str
    steps: list[str]
    decision_points: list[dict[str, Any]]
    source_url: str
    verified_from: list[Source]
    unverified: bool


class Eligibility(BaseModel):
    age_criteria: str | None
    risk_criteria: str | None
    general: list[str]
    verified_from: list[Source]
    unverified: bool


class FollowUp(BaseModel):
    referral_process: str | None
    self_referral: str | None


class PatientSpecific(BaseModel):
    age: int | None
    recommendation: str
    risk_factors: list[str]
    outside_screening_age: bool | None = Field(
        description="True when the age is outside the program's screening ages (None without an age or program)."
    )
    verified_from: list[Source]
    unverified: bool


class ProgramCitation(BaseModel):
    source: str
    source_org: str = "ontario_health"
    loc: str
    url: str
    page: int | None = None
    chunk_id: str = Field(description="Id of the cited passage, for source.passages.")


class AdditionalInfo(BaseModel):
    overview: str | None
    locations: list[str]
    resources: list[str]


class Response(BaseModel):
    provenance: list[Path]
    confidence: float = Field(ge=0.0, le=1.0)
    program: str
    in_local_corpus: bool
    guidance_type: str
    eligibility: Eligibility
    intervals: dict[str, str]
    recommendations: list[Recommendation]
    algorithms: list[Algorithm]
    procedures: list[str]
    followup: FollowUp
    patient_specific: PatientSpecific | None
    effective_date: str | None
    next_review: str | None
    document_updated: str | None
    last_updated: str
    citations: list[ProgramCitation]
    conflicts: list[Conflict]
    unverified_facts: list[str]
    notes: list[str]
    additional_info: AdditionalInfo


def wanted_parts(req: Request) -> set[str]:
    """info_needed (000) names the parts to fill; query_type (001) adds its own; none = all."""
    parts: set[str] = set(req.info_needed or [])
    if parts and req.query_type:
        parts.add(req.query_type)
    return parts or {"eligibility", "intervals", "locations", "referral", "procedures", "pathway"}


async def run(rt: Runtime, req: Request) -> ToolOutput:
    key = program_key(req.program)
    risks = req.risk_factors or []
    query = " ".join([req.program, "screening", req.query_type or "", *risks]).strip()
    dual = await run_dual(
        rt.settings,
        sql=lambda: sql_program_docs(rt.opa_sql, key),
        vector=lambda: vector_program_hits(rt.vectors, query),
    )
    hits = dual.vector.value or []
    vdocs = program_docs_from_hits(hits, key)
    docs = dual.sql.value if dual.sql.value is not None else vdocs
    docs, recs, algos = pool(docs)
    ids = {d["document_id"] for d in docs}
    corroborating = [h for h in hits if h.metadata.get("document_id") in ids]
    prog = merged_program(docs)
    doc = docs[0] if docs else {}
    table = prog.get("provenance") or {}
    order = {
        "referral": lambda r: r.get("category") != "referral",
        "intervals": lambda r: not r.get("frequency"),
    }
    if req.query_type in order:
        recs.sort(key=order[req.query_type])
    patient = (
        patient_answer(prog, recs, req.patient_age, risks)
        if (req.patient_age is not None or risks) and prog
        else None
    )
    if patient:
        recs = patient.chosen + [r for r in recs if r not in patient.chosen]
    parts = wanted_parts(req)
    intervals = (
        {str(k): str(v) for k, v in (prog.get("intervals") or {}).items()}
        if "intervals" in parts
        else {}
    )
    shown_recs = recs if parts & {"eligibility", "intervals", "referral", "pathway"} else []
    shown_algos = algos if "pathway" in parts else []
    unverified = unverified_facts(prog, intervals, shown_recs, shown_algos, patient)
    conflicts = program_conflicts(docs, vdocs) if dual.sql.ok else []
    confidence = calculate_confidence(
        len(docs) if dual.sql.ok else 0, len(corroborating), len(conflicts), OPA
    )
    leading = bool(unverified) and (patient is None or patient.unverified or bool(req.query_type))
    confidence = penalised(confidence, leading)
    notes = answer_notes(req.program, key, bool(docs), dual.provenance, unverified)
    used = list(sources_of(prog, shown_recs, shown_algos, patient))
    citations = [ProgramCitation(**c) for c in citation_rows(docs, pages(used), corroborating)]
    elig = (prog.get("eligibility") or {}) if "eligibility" in parts else {}
    follow = "referral" in parts
    response = Response(
        provenance=dual.provenance,
        confidence=confidence,
        program=prog.get("name", req.program),
        in_local_corpus=key is not None,
        guidance_type=req.query_type or "overview",
        eligibility=Eligibility(
            age_criteria=elig.get("age_criteria"),
            risk_criteria=elig.get("risk_criteria"),
            general=elig.get("general") or [],
            verified_from=Source.many(table.get("eligibility")) if elig else [],
            unverified=bool(elig) and table.get("eligibility") == "unverified",
        ),
        intervals=intervals,
        recommendations=[
            Recommendation(
                text=r["text"],
                category=r.get("category", "screening"),
                age_range=r.get("age_range"),
                frequency=r.get("frequency"),
                conditions=r.get("conditions") or [],
                source_section_id=f"{r['_doc']}:s{int(r.get('section') or 1):02d}",
                verified_from=Source.many(r.get("verified_from")),
                unverified=bool(r.get("unverified")),
            )
            for r in shown_recs
        ],
        algorithms=[
            Algorithm(
                name=a["name"],
                description=a.get("description", ""),
                steps=a.get("steps") or [],
                decision_points=a.get("decision_points") or [],
                source_url=a["_url"],
                verified_from=Source.many(a.get("verified_from")),
                unverified=bool(a.get("unverified")),
            )
            for a in shown_algos
        ],
        procedures=(prog.get("procedures") or []) if "procedures" in parts else [],
        followup=FollowUp(
            referral_process=prog.get("referral_process") if follow else None,
            self_referral=prog.get("self_referral") if follow else None,
        ),
        patient_specific=PatientSpecific(
            age=req.patient_age,
            recommendation=patient.text,
            risk_factors=risks,
            outside_screening_age=patient.outside,
            verified_from=Source.many(patient.sources),
            unverified=patient.unverified,
        )
        if patient
        else None,
        effective_date=doc.get("effective_date"),
        next_review=doc.get("review_date"),
        document_updated=doc.get("updated_date"),
        last_updated=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        citations=citations,
        conflicts=conflicts,
        unverified_facts=unverified,
        notes=notes,
        additional_info=AdditionalInfo(
            overview=prog.get("overview"),
            locations=(prog.get("locations") or []) if "locations" in parts else [],
            resources=prog.get("resources") or [],
        ),
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Health programs: eligibility by age and risk, intervals, pathway steps, referral and a "
        "patient-specific recommendation with an outside-screening-age flag. The local corpus covers the cervical "
        "(HPV testing), breast (OBSP incl. High Risk), colorectal (ColonCancerCheck) and lung screening programs; "
        "other programs get an answer saying they are not covered. Accepts the union of both spec revisions' "
        "parameters (program, query_type, patient_age, risk_factors, info_needed) and returns the union of their "
        "fields; every fact carries the page it was verified from or is marked unverified (lower confidence)."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"program": "breast screening"},
)
