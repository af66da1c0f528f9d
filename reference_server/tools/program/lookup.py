"""opa.program_lookup: Ontario Health programs, answered from the local corpus with each fact's source.

The union of both spec revisions: the first's `program` (any Ontario Health program) and
`info_needed`, the second's `query_type`; the response carries both revisions' fields. The four
screening programs (cervical, breast, colorectal, lung) are in the local corpus; any other
program gets a clear answer saying it is not, never an input error. Every recommendation,
interval and pathway step carries the page it was verified from (`verified_from`) or
`unverified: true`; answers that rest on unverified facts lose confidence (the tool's
`Counts.penalty`) and say so. `last_updated` is the time of the look-up (the first revision's
"timestamp of search").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.opa_programs import (
    ProgramAlgo,
    ProgramBlock,
    ProgramDoc,
    ProgramRec,
    program_docs_from_hits,
    program_key,
    sql_program_docs,
    vector_program_hits,
)
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OPA, Counts
from reference_server.scoring.conflicts import Conflict
from reference_server.scoring.features import Signals
from reference_server.tools.common import (
    CONFIDENCE_DESCRIPTION,
    ConfidenceBasis,
    OpenObject,
    Path,
)
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.program.facts import (
    UNVERIFIED_PENALTY,
    PatientAnswer,
    ProgramCitation,
    Source,
    answer_notes,
    merged_program,
    pages,
    patient_answer,
    pool,
    program_citations,
    program_conflicts,
    sources_of,
    unverified_facts,
)
from reference_server.tools.request_model import NON_BLANK, StrictModel, TextItem
from reference_server.tools.score_step import EvidenceFields, Score

NAME = "opa.program_lookup"
QueryType = Literal["intervals", "eligibility", "pathway", "referral"]
InfoNeeded = Literal["eligibility", "intervals", "locations", "referral", "procedures", "pathway"]
ALL_PARTS: frozenset[str] = frozenset(
    {"eligibility", "intervals", "locations", "referral", "procedures", "pathway"}
)


class Request(StrictModel):
    program: str = Field(
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Any Ontario Health program, e.g. 'cervical', 'breast', 'colorectal', 'lung', 'OBSP', 'kidney care'.",
    )
    query_type: QueryType | None = Field(
        default=None,
        description="What the question is about: intervals, eligibility, pathway or referral; it sets guidance_type and which facts lead.",
    )
    patient_age: int | None = Field(default=None, ge=0, le=120, description="Patient age.")
    risk_factors: list[TextItem] | None = Field(
        default=None, max_length=20, description="Risk factors, e.g. ['family history', 'BRCA1']."
    )
    info_needed: list[InfoNeeded] | None = Field(
        default=None,
        description="Parts of the answer wanted; parts not named are left empty.",
    )


class Recommendation(BaseModel):
    text: str
    category: str
    age_range: list[int] | None
    frequency: str | None
    conditions: list[str]
    source_section_id: str
    source_url: str = Field(description="Official URL of the document the recommendation is from.")
    section_heading: str | None = Field(
        description="Heading of the section it is written in, as the document has it."
    )
    verified_from: list[Source]
    unverified: bool


class Algorithm(BaseModel):
    name: str
    description: str
    steps: list[str]
    decision_points: list[OpenObject]
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


class AdditionalInfo(BaseModel):
    overview: str | None
    locations: list[str]
    resources: list[str]


class Response(BaseModel):
    provenance: list[Path]
    confidence: float = Field(ge=0.0, le=1.0, description=CONFIDENCE_DESCRIPTION)
    confidence_basis: ConfidenceBasis | None = Field(
        default=None,
        description="What confidence was computed from (spec score and inputs, calibrated "
        "probability and features).",
    )
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


def wanted_parts(req: Request) -> frozenset[str]:
    """info_needed names the parts to fill; query_type adds its own; none named = all."""
    parts: set[str] = set(req.info_needed or [])
    if parts and req.query_type:
        parts.add(req.query_type)
    return frozenset(parts) or ALL_PARTS


@dataclass(frozen=True)
class Query:
    program: str  # as asked
    key: str | None  # the local program it names (None: not in the local corpus)
    query_type: QueryType | None
    age: int | None
    risks: list[str]
    parts: frozenset[str]
    text: str  # the vector path's question


Found = DualResult[list[ProgramDoc], list[VectorHit]]

# A question about referral or intervals leads with the recommendations that answer it.
LEADS = {
    "referral": lambda r: r.category != "referral",
    "intervals": lambda r: not r.frequency,
}


@dataclass(frozen=True)
class Lookup:
    """The program's answer rows: its documents (primary first; SQL's, else the vector copies),
    the merged block and the facts shown, and the passages that corroborate the documents."""

    docs: list[ProgramDoc]
    vdocs: list[ProgramDoc]  # the vector index's copies, for the SQL-vs-vector conflict check
    corroborating: list[VectorHit]
    prog: ProgramBlock | None
    recs: list[ProgramRec]  # shown, the patient's match first
    algos: list[ProgramAlgo]  # shown
    intervals: dict[str, str]
    patient: PatientAnswer | None
    unverified: list[str]
    notes: list[str]


class ProgramLookup(
    DualPathTool[Request, Query, list[ProgramDoc], list[VectorHit], Lookup, Response]
):
    name = NAME
    confidence_family = "opa_tools"
    title = "Ontario Health screening programs"
    description = (
        "Ontario Health programs: eligibility by age and risk, intervals, pathway steps, referral and a "
        "patient-specific recommendation with an outside-screening-age flag. The local corpus covers the cervical "
        "(HPV testing), breast (OBSP incl. High Risk), colorectal (ColonCancerCheck) and lung screening programs; "
        "other programs get an answer saying they are not covered. Accepts the union of both spec revisions' "
        "parameters (program, query_type, patient_age, risk_factors, info_needed) and returns the union of their "
        "fields; every fact carries the page it was verified from or is marked unverified (lower confidence)."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(program="breast screening")

    def parse(self, rt: Runtime, req: Request) -> Query:
        risks = req.risk_factors or []
        text = " ".join([req.program, "screening", req.query_type or "", *risks]).strip()
        return Query(
            req.program,
            program_key(req.program),
            req.query_type,
            req.patient_age,
            risks,
            wanted_parts(req),
            text,
        )

    def sql(self, rt: Runtime, q: Query) -> list[ProgramDoc]:
        return sql_program_docs(rt.opa_sql, q.key)

    def vector(self, rt: Runtime, q: Query) -> list[VectorHit]:
        return vector_program_hits(rt.vectors, q.text)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Lookup:
        hits = found.vector.value or []
        vdocs = program_docs_from_hits(hits, q.key)
        pooled = pool(found.sql.value if found.sql.value is not None else vdocs)
        ids = {d.document_id for d in pooled.docs}
        prog = merged_program(pooled.docs)
        recs = pooled.recs
        if q.query_type in LEADS:
            recs.sort(key=LEADS[q.query_type])
        patient = (
            patient_answer(prog, recs, q.age, q.risks)
            if prog is not None and (q.age is not None or q.risks)
            else None
        )
        if patient:
            recs = list(patient.chosen) + [r for r in recs if r not in patient.chosen]
        intervals = dict(prog.intervals) if prog is not None and "intervals" in q.parts else {}
        recs = recs if q.parts & {"eligibility", "intervals", "referral", "pathway"} else []
        algos = pooled.algos if "pathway" in q.parts else []
        unverified = unverified_facts(prog, intervals, recs, algos, patient)
        return Lookup(
            docs=pooled.docs,
            vdocs=vdocs,
            corroborating=[h for h in hits if h.metadata.get("document_id") in ids],
            prog=prog,
            recs=recs,
            algos=algos,
            intervals=intervals,
            patient=patient,
            unverified=unverified,
            notes=answer_notes(q.program, q.key, bool(pooled.docs), found.provenance, unverified),
        )

    def score(self, q: Query, merged: Lookup, found: Found) -> Score[ProgramCitation]:
        """Documents count as SQL records only when SQL answered (the vector copies are not);
        an answer that leads with an unverified fact carries the tool's penalty."""
        used = sources_of(merged.prog, merged.recs, merged.algos, merged.patient)
        patient = merged.patient
        leading = bool(merged.unverified) and (
            patient is None or patient.unverified or bool(q.query_type)
        )
        return Score(
            citations=program_citations(merged.docs, pages(used), merged.corroborating),
            conflicts=program_conflicts(merged.docs, merged.vdocs) if found.sql.ok else [],
            counts=Counts(
                sql_records=len(merged.docs) if found.sql.ok else 0,
                vector_passages=len(merged.corroborating),
                profile=OPA,
                penalty=UNVERIFIED_PENALTY if leading else 0.0,
            ),
            signals=Signals(no_answer=not merged.docs),
        )

    def respond(self, q: Query, merged: Lookup, evidence: EvidenceFields[Any]) -> Response:
        prog, patient, parts = merged.prog, merged.patient, q.parts
        doc = merged.docs[0] if merged.docs else None
        elig = prog.eligibility if prog is not None and "eligibility" in parts else None
        elig_check = prog.check("eligibility") if prog is not None and elig else None
        follow = "referral" in parts
        return Response(
            **evidence,
            program=prog.name if prog is not None and prog.name is not None else q.program,
            in_local_corpus=q.key is not None,
            guidance_type=q.query_type or "overview",
            eligibility=Eligibility(
                age_criteria=elig.age_criteria if elig else None,
                risk_criteria=elig.risk_criteria if elig else None,
                general=list(elig.general) if elig else [],
                verified_from=Source.many(elig_check.pages) if elig_check else [],
                unverified=bool(elig_check and elig_check.unverified),
            ),
            intervals=merged.intervals,
            recommendations=[to_recommendation(r) for r in merged.recs],
            algorithms=[to_algorithm(a) for a in merged.algos],
            procedures=list(prog.procedures) if prog is not None and "procedures" in parts else [],
            followup=FollowUp(
                referral_process=prog.referral_process if prog is not None and follow else None,
                self_referral=prog.self_referral if prog is not None and follow else None,
            ),
            patient_specific=PatientSpecific(
                age=q.age,
                recommendation=patient.text,
                risk_factors=q.risks,
                outside_screening_age=patient.outside,
                verified_from=Source.many(patient.sources),
                unverified=patient.unverified,
            )
            if patient
            else None,
            effective_date=doc.effective_date if doc else None,
            next_review=doc.review_date if doc else None,
            document_updated=doc.updated_date if doc else None,
            last_updated=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            unverified_facts=merged.unverified,
            notes=merged.notes,
            additional_info=AdditionalInfo(
                overview=prog.overview if prog is not None else None,
                locations=list(prog.locations) if prog is not None and "locations" in parts else [],
                resources=list(prog.resources) if prog is not None else [],
            ),
        )


def to_recommendation(r: ProgramRec) -> Recommendation:
    return Recommendation(
        text=r.text,
        category=r.category,
        age_range=list(r.age_range) if r.age_range is not None else None,
        frequency=r.frequency,
        conditions=list(r.conditions),
        source_section_id=f"{r.document_id}:s{r.section:02d}",
        source_url=r.source_url,
        section_heading=r.section_heading,
        verified_from=Source.many(r.verified_from),
        unverified=r.unverified,
    )


def to_algorithm(a: ProgramAlgo) -> Algorithm:
    return Algorithm(
        name=a.name,
        description=a.description,
        steps=list(a.steps),
        decision_points=[dict(p) for p in a.decision_points],
        source_url=a.source_url,
        verified_from=Source.many(a.verified_from),
        unverified=a.unverified,
    )


TOOL = ProgramLookup()
