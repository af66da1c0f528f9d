"""adp.get: Assistive Devices Program funding, eligibility, exclusions and the CEP income check.

Accepts a natural-language `query` or a structured `device`; the device, category, income and
household are extracted by rules (regex + alias table; no LLM fallback). SQL reads the funding
rules, exclusions, CEP thresholds and manual sections; the vector path searches `adp_v1` for
corroborating passages. SQL wins on numbers; a vector-only answer is rebuilt from chunk metadata.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field

from reference_server.retrieval import adp_manuals as adp
from reference_server.retrieval.adp_manuals import CORE, SqlData
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OFF, calculate_confidence
from reference_server.tools.adp_language import (
    Parsed,
    read,
)
from reference_server.tools.adp_merge import (
    Cep,
    Eligibility,
    Funding,
    cep_check,
    citations_of,
    context,
    eligibility_of,
    exclusion_lines,
    funding_of,
    in_scope,
    loc,
    select,
    share_conflicts,
    summary,
)
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Evidence

NAME = "adp.get"
Category = Literal[
    "mobility",
    "comm_aids",
    "hearing_devices",
    "visual_aids",
    "respiratory",
    "insulin_pump",
    "glucose_monitoring",
    "prosthesis",
    "maxillofacial",
    "grants",
    "core_manual",
]
Check = Literal["eligibility", "exclusions", "funding", "cep"]
Assistance = Literal["ontario_works", "odsp", "acsd", "social_assistance", "none"]
CHECKS: tuple[Check, ...] = get_args(Check)


class Device(StrictModel):
    category: Category | None = Field(
        default=None,
        description="ADP category (one of 11); inferred from `type` when omitted.",
    )
    type: str = Field(
        min_length=1,
        max_length=500,
        pattern=NON_BLANK,
        description="Device type, e.g. 'walker', 'power wheelchair', or a natural-language question.",
    )


class UseCase(StrictModel):
    daily: bool | None = Field(default=None, description="Used on an ongoing daily basis.")
    location: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Where it is used, e.g. 'home+entry_exit'.",
    )
    independent_transfer: bool | None = Field(
        default=None, description="Can transfer to and from the device independently."
    )


class Request(StrictModel):
    required_any_of = (("query",), ("device",))

    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        pattern=NON_BLANK,
        description="Natural-language question, e.g. 'Can my patient get funding for a CPAP?'.",
    )
    device: Device | None = Field(default=None, description="Structured device {category, type}.")
    check: list[Check] = Field(
        default_factory=lambda: list(CHECKS),
        max_length=4,
        description="What to check (default all): eligibility, exclusions, funding, cep.",
    )
    use_case: UseCase | None = Field(default=None, description="Optional usage details.")
    patient_income: float | None = Field(
        default=None, ge=0, le=10_000_000, description="Annual income (CAD) for the CEP check."
    )
    social_assistance: Assistance | None = Field(
        default=None,
        description=(
            "The client's social-assistance program: 'ontario_works', 'odsp', 'acsd', "
            "'social_assistance' (program not named) or 'none' (not on assistance). Recipients "
            "pay no co-payment (core manual 310.00); when omitted it is read from the query."
        ),
    )


class Response(Evidence):
    summary: str = Field(description="One-line answer.")
    interpretation_notes: dict[str, str]
    context: str = Field(description="Policy snippets and the funding rules used.")
    eligibility: Eligibility | None
    exclusions: list[str]
    policy_rules: list[str] = Field(
        description="Who-does-what rules the question asks about (equipment pool, leases, "
        "suppliers, repairs, service agreements, co-payment), each with its section."
    )
    funding: Funding | None
    cep: Cep | None


# ---------------------------------------------------------------------------------- parsing
def parse(req: Request) -> Parsed:
    """The device, income, household and circumstances the request states (rules in adp_language)."""
    use = req.use_case
    text = " ".join(
        t for t in (req.query, req.device.type if req.device else None, use and use.location) if t
    )
    return read(
        text,
        category=req.device.category if req.device else None,
        income=req.patient_income,
        daily=use.daily if use else None,
        location=use.location if use else None,
        assistance=req.social_assistance,
    )


# ---------------------------------------------------------------------------------- paths
def vector_query(p: Parsed) -> str:
    parts = [p.device_type.replace("_", " ") if p.device_type else "", p.text]
    parts += [k.replace("_", " ") for k in p.flags]
    return " ".join(x for x in parts if x)[:1000]


async def run(rt: Runtime, req: Request) -> ToolOutput:
    p = parse(req)
    checks = set(req.check)
    want_cep = "cep" in checks and p.income is not None
    dual = await run_dual(
        rt.settings,
        sql=lambda: adp.keyword_search(rt.ohip_sql),
        vector=lambda: adp.vector_search(rt.vectors, vector_query(p), p.category, want_cep),
    )
    sql: SqlData | None = dual.sql.value
    hits: list[VectorHit] = dual.vector.value or []
    passages = [h for h in hits if h.metadata.get("doc_type") != "cep"]
    cep_hit = next((h for h in hits if h.metadata.get("doc_type") == "cep"), None)
    sel = select(p, sql, passages)
    standard_client = sel.share_rules[0]["client_share_percent"] if sel.share_rules else None
    cep, conflicts = cep_check(p, sql, cep_hit, standard_client) if want_cep else (None, [])
    if sql:
        conflicts += share_conflicts(p, sel, passages)
    # A who-does-what rule corroborates an answer only when the question asks about its topic.
    corroborating = [
        h
        for h in passages
        if in_scope(h.metadata, p.category)
        and (
            h.metadata.get("doc_type") != "descriptive_rule" or h.metadata.get("topic") in p.topics
        )
    ]
    eligibility = (
        eligibility_of(p, sel, req.use_case.independent_transfer if req.use_case else None)
        if "eligibility" in checks
        else None
    )
    exclusions = exclusion_lines(sel.exclusions, sel.flagged) if "exclusions" in checks else []
    # SQL records only count when SQL answered (rows rebuilt from passages are vector evidence).
    n_sql = len(sel.share_rules) + len(sel.repair_rules) + len(sel.flagged) + int(cep is not None)
    n_sql += len(sel.assistance_rules) + len(sel.descriptive)
    n_sql = n_sql if sql else 0
    notes = {
        "null_values": "null means 'not determined from the request'.",
        "confidence": "0.9+ = SQL rule matched and corroborated; 0.6-0.75 = passages only.",
        "cep": (
            "The CEP income check (single $28,000 / family $39,000; eligible -> client share 0%) "
            "comes from the project specification, not the ADP manuals; in the manuals 'CEP' is the "
            "Central/Centralized Equipment Pool that leases high-technology wheelchairs and "
            "communication aids. The manuals set a 0% client share for Ontario Works, ODSP and ACSD "
            "recipients (adp:core_manual:Section 310.00)."
        ),
        "income": "An amount counts as income only when the request states it as income "
        "('income of $28,000', 'earns', 'makes $X a year', or patient_income); a device price "
        "is never read as income.",
        "household": f"Household '{p.household}' "
        + ("stated in the request." if p.household_stated else "assumed (not stated)."),
        "extraction": "Device, income and household were extracted by rules (no LLM).",
    }
    if sel.share_rules and sel.share_rules[0]["adp_doc"] == CORE and p.category != CORE:
        notes["funding"] = (
            f"No {p.category} rule states a split; the ADP general funding rule "
            f"({loc(sel.share_rules[0])}) is used."
        )
    response = Response(
        provenance=dual.provenance,
        confidence=calculate_confidence(n_sql, len(corroborating), len(conflicts), OFF),
        summary=summary(p, sel, cep, eligibility),
        interpretation_notes=notes,
        context=context(
            passages,
            [*sel.share_rules, *sel.assistance_rules, *sel.descriptive],
            exclusions,
            3 if sql else 5,
        ),
        eligibility=eligibility,
        exclusions=exclusions,
        policy_rules=[f"{r['summary']} ({loc(r)})" for r in sel.descriptive],
        funding=funding_of(sel, cep) if "funding" in checks else None,
        cep=cep,
        citations=citations_of(p, sel, corroborating, cep),
        conflicts=conflicts,
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Assistive Devices Program (ADP): funding split (ADP 75% / client 25%), eligibility, "
        "exclusions (batteries, repairs, car-substitute use, ...), the co-payment of clients on Ontario "
        "Works / ODSP / ACSD, who-does-what rules (equipment pool, leases, suppliers, repairs) and the "
        "CEP income check for a device. Ask in plain language (`query`, optional `patient_income`, "
        "`social_assistance`) or give `device` {category, type}, `check`, `use_case`. Returns summary, "
        "funding, exclusions, policy rules, CEP, citations, provenance, confidence."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"query": "Can my patient get funding for a power wheelchair?"},
)
