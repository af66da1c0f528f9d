"""opa.program_lookup: Ontario Health screening programs from the local corpus.

Accepts the union of both spec revisions' parameters (`program`, `query_type`, `patient_age`,
`risk_factors`, `info_needed`) and returns the union of their response fields. Eligibility,
intervals, pathway steps and the patient-specific recommendation come from each program's
structured block (SQL path); vector search over the Ontario Health collection corroborates
and supplies supporting passages. The spec's web-search mode is not offered: answers come
from the local corpus only.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.errors import ToolInputError
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_sections import Filters, vector_search
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OPA, calculate_confidence
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.base import (
    StrictModel,
    TextItem,
    ToolOutput,
    ToolSpec,
    contains_any_pattern,
)
from reference_server.tools.common import Path

NAME = "opa.program_lookup"
PROGRAM_ALIASES = {
    "cervical": ["cervical", "cervix", "pap", "hpv", "ocsp"],
    "breast": ["breast", "mammogra", "obsp"],
    "colorectal": ["colorectal", "colon", "bowel", "fit", "coloncancercheck", "colonoscopy"],
    "lung": ["lung", "low-dose ct", "ldct"],
}
InfoNeeded = Literal["eligibility", "intervals", "locations", "referral", "procedures", "pathway"]


class Request(StrictModel):
    program: str = Field(
        min_length=1,
        max_length=200,
        pattern=contains_any_pattern([a for names in PROGRAM_ALIASES.values() for a in names]),
        json_schema_extra={
            "x-allowed": "text naming one of 'cervical', 'breast', 'colorectal', 'lung' (any case), "
            "or containing one of their names: "
            + ", ".join(repr(a) for names in PROGRAM_ALIASES.values() for a in names)
        },
        description="Program: 'cervical', 'breast', 'colorectal' or 'lung' (names like 'HPV testing' or 'OBSP' are recognised).",
    )
    query_type: Literal["intervals", "eligibility", "pathway", "referral"] | None = Field(
        default=None, description="What the question is about (spec revision 2)."
    )
    patient_age: int | None = Field(
        default=None, ge=0, le=120, description="Patient age for eligibility checks."
    )
    risk_factors: list[TextItem] | None = Field(
        default=None, max_length=20, description="Risk factors, e.g. ['family history', 'BRCA1']."
    )
    info_needed: list[InfoNeeded] | None = Field(
        default=None, description="Specific information wanted (spec revision 1)."
    )


class Recommendation(BaseModel):
    text: str
    category: str
    age_range: list[int] | None
    frequency: str | None
    conditions: list[str]
    source_section_id: str


class Algorithm(BaseModel):
    name: str
    description: str
    steps: list[str]
    decision_points: list[dict[str, Any]]
    source_url: str


class Eligibility(BaseModel):
    age_criteria: str | None
    risk_criteria: str | None
    general: list[str]


class FollowUp(BaseModel):
    referral_process: str | None
    self_referral: str | None


class PatientSpecific(BaseModel):
    age: int | None
    recommendation: str
    risk_factors: list[str]


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
    last_updated: str | None
    citations: list[ProgramCitation]
    conflicts: list[Conflict]
    additional_info: AdditionalInfo


def program_key(program: str) -> str:
    text = program.lower()
    for key, aliases in PROGRAM_ALIASES.items():
        if any(a in text for a in aliases):
            return key
    raise ToolInputError(
        "program",
        f"{program!r} is not a screening program in the local corpus",
        list(PROGRAM_ALIASES),
    )


def _risk_match(wanted: list[str], patient: list[str]) -> bool:
    p = [r.lower() for r in patient]
    return any(w.lower() in r or r in w.lower() for w in wanted for r in p)


def applicable(
    recs: list[dict[str, Any]], age: int | None, risks: list[str]
) -> list[dict[str, Any]]:
    """Recommendations for this patient: in the age range, and high-risk ones only with a matching factor."""
    out = []
    for rec in recs:
        rng = rec.get("age_range")
        if age is not None and rng and not (rng[0] <= age <= rng[1]):
            continue
        if rec.get("risk_factors") and not _risk_match(rec["risk_factors"], risks):
            continue
        out.append(rec)
    specific = [r for r in out if r.get("risk_factors")]
    return specific or out


def personal_recommendation(
    program: dict[str, Any],
    recommendations: list[dict[str, Any]],
    age: int | None,
    risks: list[str],
) -> str:
    """One sentence for this patient, from the recommendations pooled across the program's documents."""
    elig = program.get("eligibility") or {}
    lo, hi = elig.get("min_age"), elig.get("max_age")
    recs = applicable(recommendations, age, risks)
    if age is not None and lo is not None and hi is not None and not (lo <= age <= hi) and not recs:
        return f"At age {age} the patient is outside the program's screening ages ({lo}-{hi}); " + (
            elig.get("age_criteria") or ""
        )
    if not recs:
        return "No program recommendation matches this patient's age and risk factors; see eligibility criteria."
    best = recs[0]
    who = f"At age {age}" if age is not None else "For this patient"
    risk = f" with {', '.join(risks)}" if risks else ""
    freq = f" ({best['frequency']})" if best.get("frequency") else ""
    return f"{who}{risk}: {best['text']}{freq}"


def programs_from_vectors(hits: list[Any], key: str) -> list[dict[str, Any]]:
    """Program documents rebuilt from vector-chunk metadata, one per document."""
    found: dict[str, dict[str, Any]] = {}
    for h in hits:
        m = h.metadata
        if not m.get("program") or m.get("document_id") in found:
            continue
        program = json.loads(m["program"])
        if program.get("key") == key:
            found[m["document_id"]] = {
                "document_id": m["document_id"],
                "title": m.get("title", ""),
                "source_url": m.get("source_url", ""),
                "effective_date": m.get("effective_date") or None,
                "updated_date": m.get("updated_date") or None,
                "review_date": m.get("review_date") or None,
                "program": program,
            }
    return list(found.values())


async def run(rt: Runtime, req: Request) -> ToolOutput:
    key = program_key(req.program)
    risks = req.risk_factors or []
    query = " ".join(
        [req.program, "screening", req.query_type or "", *risks, *(req.info_needed or [])]
    ).strip()

    def sql_program() -> list[dict[str, Any]]:
        rows = rt.opa_sql.query(
            "SELECT document_id, title, source_url, effective_date, updated_date, review_date, program FROM opa_documents "
            "WHERE source_org = 'ontario_health' AND is_superseded = 0 AND program IS NOT NULL"
        )
        return [
            r | {"program": json.loads(r["program"])}
            for r in rows
            if json.loads(r["program"]).get("key") == key
        ]

    filters = Filters(source_orgs=["ontario_health"])
    dual = await run_dual(
        rt.settings,
        sql=sql_program,
        vector=lambda: vector_search(rt.vectors, query, filters, limit=8),
    )
    hits = dual.vector.value or []
    # Without the SQL path, the program blocks the vector chunks carry still answer (partially:
    # only the documents the vector search reached).
    docs = dual.sql.value if dual.sql.value is not None else programs_from_vectors(hits, key)
    program_doc_ids = {d["document_id"] for d in docs}
    corroborating = [h for h in hits if h.metadata.get("document_id") in program_doc_ids]
    # Several current documents may cover one program (e.g. guideline + HPV hub): the one with the
    # most recommendations is primary; recommendations and algorithms are pooled from all of them.
    docs.sort(key=lambda d: (-len(d["program"].get("recommendations") or []), d["document_id"]))
    prog: dict[str, Any] = docs[0]["program"] if docs else {}
    doc = docs[0] if docs else None
    recs = [
        r | {"_doc": d["document_id"]}
        for d in docs
        for r in d["program"].get("recommendations") or []
    ]
    algorithms = [
        a | {"_url": d["source_url"]} for d in docs for a in d["program"].get("algorithms") or []
    ]
    if req.query_type == "referral":
        recs = sorted(recs, key=lambda r: r.get("category") != "referral")
    elif req.query_type == "intervals":
        recs = sorted(recs, key=lambda r: not r.get("frequency"))
    if req.patient_age is not None or risks:
        chosen = applicable(recs, req.patient_age, risks)
        recs = chosen + [r for r in recs if r not in chosen]
    elig = prog.get("eligibility") or {}
    citations = [
        ProgramCitation(
            source=d["title"],
            loc=d["program"].get("name", d["title"]),
            url=d["source_url"],
            chunk_id=d["document_id"],
        )
        for d in docs
    ] + [
        ProgramCitation(
            source=h.metadata.get("title", ""),
            loc=h.metadata.get("section_heading", ""),
            url=h.metadata.get("source_url", ""),
            chunk_id=h.id,
        )
        for h in corroborating[:3]
    ]
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        confidence=calculate_confidence(
            len(docs) if dual.sql.ok else 0, len(corroborating), 0, OPA
        ),
        program=prog.get("name", req.program),
        guidance_type=req.query_type or "overview",
        eligibility=Eligibility(
            age_criteria=elig.get("age_criteria"),
            risk_criteria=elig.get("risk_criteria"),
            general=elig.get("general") or [],
        ),
        intervals={str(k): str(v) for k, v in (prog.get("intervals") or {}).items()},
        recommendations=[
            Recommendation(
                text=r["text"],
                category=r.get("category", "screening"),
                age_range=r.get("age_range"),
                frequency=r.get("frequency"),
                conditions=r.get("conditions") or [],
                source_section_id=f"{r['_doc']}:s{int(r.get('section') or 1):02d}",
            )
            for r in recs
        ],
        algorithms=[
            Algorithm(
                name=a["name"],
                description=a.get("description", ""),
                steps=a.get("steps") or [],
                decision_points=a.get("decision_points") or [],
                source_url=a["_url"],
            )
            for a in algorithms
        ],
        procedures=prog.get("procedures") or [],
        followup=FollowUp(
            referral_process=prog.get("referral_process"), self_referral=prog.get("self_referral")
        ),
        patient_specific=(
            PatientSpecific(
                age=req.patient_age,
                recommendation=personal_recommendation(prog, recs, req.patient_age, risks),
                risk_factors=risks,
            )
            if (req.patient_age is not None or risks) and prog
            else None
        ),
        effective_date=doc.get("effective_date") if doc else None,
        next_review=doc.get("review_date") if doc else None,
        last_updated=doc.get("updated_date") if doc else None,
        citations=citations,
        conflicts=[],
        additional_info=AdditionalInfo(
            overview=prog.get("overview"),
            locations=prog.get("locations") or [],
            resources=prog.get("resources") or [],
        ),
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Health cancer screening programs (cervical with HPV testing, breast/OBSP incl. high risk, "
        "colorectal/ColonCancerCheck, lung): eligibility by age and risk, intervals, pathway steps, referral and a "
        "patient-specific recommendation. Accepts the union of both spec revisions' parameters (program, query_type, "
        "patient_age, risk_factors, info_needed) and returns the union of their fields; answers from the local corpus."
    ),
    request=Request,
    response=Response,
    run=run,
)
