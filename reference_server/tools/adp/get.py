"""adp.get: Assistive Devices Program funding, eligibility, exclusions and the CEP income check.

Accepts a natural-language `query` or a structured `device`; the device, category, income and
household are extracted by rules (regex + alias table; no LLM fallback). SQL reads the funding
rules, exclusions, CEP thresholds and manual sections; the vector path searches `adp_v1` for
corroborating passages. SQL wins on numbers; a vector-only answer is rebuilt from the rules the
passages state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import Field

from reference_server.retrieval import adp_manuals as adp
from reference_server.retrieval.adp_manuals import CORE, Passage
from reference_server.retrieval.dual_path import DualResult
from reference_server.runtime import Runtime
from reference_server.scoring.citations import Citation
from reference_server.scoring.confidence import OFF, Counts
from reference_server.scoring.conflicts import Conflict
from reference_server.scoring.features import Signals
from reference_server.tools.adp.language import Parsed, read
from reference_server.tools.adp.merge import (
    Cep,
    Eligibility,
    Funding,
    cep_check,
    context,
    eligibility_of,
    exclusion_lines,
    fast_track_note,
    funding_of,
    loc,
    share_conflicts,
    split_basis,
)
from reference_server.tools.adp.rule_citations import citations_of
from reference_server.tools.adp.select import (
    Selection,
    SqlSelection,
    in_scope,
    select_passages,
    select_sql,
)
from reference_server.tools.adp.summary import Lead, Summary, summary
from reference_server.tools.adp.terms import Basis
from reference_server.tools.common import Evidence
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score

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
    lead: Lead = Field(
        description="What `summary` leads with: 'device' (the device's funding), 'policy_rules' "
        "(the rules the question asks about), 'not_eligible' (a use ADP does not fund) or "
        "'unknown_device' (no device recognised). Composed answers decide from it."
    )


@dataclass(frozen=True)
class Query:
    parsed: Parsed
    checks: frozenset[Check]
    want_cep: bool  # the CEP income check was asked for and an income is known
    independent_transfer: bool | None
    vector_text: str


Found = DualResult[SqlSelection, list[Passage]]


@dataclass(frozen=True)
class Merged:
    sel: Selection
    passages: list[Passage]  # rule and section passages (not the CEP one)
    corroborating: list[Passage]
    cep: Cep | None
    cep_conflicts: list[Conflict]
    eligibility: Eligibility | None
    exclusions: list[str]
    summary: Summary
    from_sql: bool
    basis: Basis


def vector_query(p: Parsed) -> str:
    parts = [p.device_type.replace("_", " ") if p.device_type else "", p.text]
    parts += [k.replace("_", " ") for k in p.flags]
    return " ".join(x for x in parts if x)[:1000]


def corroborates(h: Passage, p: Parsed) -> bool:
    """A passage of the device's manual; a who-does-what rule only when the question asks
    about its topic."""
    return in_scope(h.adp_doc, p.category) and (
        h.doc_type != "descriptive_rule" or h.topic in p.topics
    )


def rests_on_general_rule(q: Query, merged: Merged) -> bool:
    """The answer to a funding question is a split the device's manual does not state (the core
    manual's general rule, 305.01): a question about an exclusion, a who-does-what rule or a
    client on social assistance (whose co-payment is 0 % whatever the split) does not rest on it."""
    p = q.parsed
    return (
        merged.basis.general_rule
        and merged.summary.lead == "device"
        and "funding" in q.checks
        and not p.flags
        and not merged.sel.assistance_rules
        and not merged.sel.descriptive
    )


def notes_for(p: Parsed, sel: Selection) -> dict[str, str]:
    notes = {
        "null_values": "null means 'not determined from the request'.",
        "confidence": "The probability the answer is right (calibrated); lower when the split "
        "is the general rule rather than the device manual's own, or only one path answered. "
        "confidence_basis.spec_score: the spec's evidence score (0.9+ = SQL rule matched and "
        "corroborated; 0.6-0.75 = passages only).",
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
    top = sel.share_rules[0] if sel.share_rules else None
    if top and top.adp_doc == CORE and p.category != CORE:
        notes["funding"] = (
            f"No {p.category} rule states a split; the ADP general funding rule "
            f"({loc(top)}) is used."
        )
    return notes


class AdpGet(DualPathTool[Request, Query, SqlSelection, list[Passage], Merged, Response]):
    name = NAME
    confidence_family = "adp"
    title = "Assistive Devices Program funding"
    description = (
        "Ontario Assistive Devices Program (ADP): funding (the device manual's own terms; where it "
        "states none, the core manual's general rule, ADP 75% / client 25% 'unless noted "
        "otherwise', said to be one), eligibility, "
        "exclusions (batteries, repairs, car-substitute use, ...), the co-payment of clients on Ontario "
        "Works / ODSP / ACSD, who-does-what rules (equipment pool, leases, suppliers, repairs) and the "
        "CEP income check for a device. Ask in plain language (`query`, optional `patient_income`, "
        "`social_assistance`) or give `device` {category, type}, `check`, `use_case`. Returns summary, "
        "funding, exclusions, policy rules, CEP, citations, provenance, confidence."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(query="Can my patient get funding for a power wheelchair?")

    def parse(self, rt: Runtime, req: Request) -> Query:
        """The device, income, household and circumstances the request states (rules in
        adp_language)."""
        use = req.use_case
        text = " ".join(
            t
            for t in (req.query, req.device.type if req.device else None, use and use.location)
            if t
        )
        p = read(
            text,
            category=req.device.category if req.device else None,
            income=req.patient_income,
            daily=use.daily if use else None,
            location=use.location if use else None,
            assistance=req.social_assistance,
        )
        checks = frozenset(req.check)
        return Query(
            parsed=p,
            checks=checks,
            want_cep="cep" in checks and p.income is not None,
            independent_transfer=use.independent_transfer if use else None,
            vector_text=vector_query(p),
        )

    def sql(self, rt: Runtime, q: Query) -> SqlSelection:
        return select_sql(q.parsed, adp.keyword_search(rt.ohip_sql))

    def vector(self, rt: Runtime, q: Query) -> list[Passage]:
        return adp.vector_search(rt.vectors, q.vector_text, q.parsed.category, q.want_cep)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Merged:
        p, chosen = q.parsed, found.sql.value
        hits = found.vector.value or []
        passages = [h for h in hits if h.doc_type != "cep"]
        cep_hit = next((h for h in hits if h.doc_type == "cep"), None)
        sel = chosen.selection if chosen else select_passages(p, passages)
        threshold = chosen.cep_threshold if chosen else None
        standard_client = sel.share_rules[0].client_share_percent if sel.share_rules else None
        cep, cep_conflicts = (
            cep_check(p, threshold, cep_hit, standard_client) if q.want_cep else (None, [])
        )
        eligibility = (
            eligibility_of(p, sel, q.independent_transfer) if "eligibility" in q.checks else None
        )
        fast_track = (
            fast_track_note(sel.index.fast_track)
            if eligibility is not None and p.fast_track
            else None
        )
        basis = split_basis(p, sel)
        return Merged(
            sel=sel,
            passages=passages,
            corroborating=[h for h in passages if corroborates(h, p)],
            cep=cep,
            cep_conflicts=cep_conflicts,
            eligibility=eligibility,
            exclusions=exclusion_lines(sel.exclusions, sel.flagged)
            if "exclusions" in q.checks
            else [],
            summary=summary(p, sel, cep, fast_track, basis),
            from_sql=chosen is not None,
            basis=basis,
        )

    def score(self, q: Query, merged: Merged, found: Found) -> Score[Citation]:
        sel, cep = merged.sel, merged.cep
        conflicts = list(merged.cep_conflicts)
        if merged.from_sql:
            conflicts += share_conflicts(q.parsed, sel, merged.passages)
        # SQL records only count when SQL answered (rules rebuilt from passages are vector
        # evidence).
        n_sql = len(sel.share_rules) + len(sel.repair_rules) + len(sel.flagged)
        n_sql += int(cep is not None) + len(sel.assistance_rules) + len(sel.descriptive)
        return Score(
            citations=citations_of(sel, merged.corroborating, cep, merged.basis),
            conflicts=conflicts,
            counts=Counts(n_sql if merged.from_sql else 0, len(merged.corroborating), OFF),
            signals=Signals(
                default_rule=rests_on_general_rule(q, merged),
                no_answer=merged.summary.lead == "unknown_device",
            ),
        )

    def respond(self, q: Query, merged: Merged, evidence: EvidenceFields[Any]) -> Response:
        sel = merged.sel
        return Response(
            **evidence,
            summary=merged.summary.text,
            lead=merged.summary.lead,
            interpretation_notes=notes_for(q.parsed, sel),
            context=context(
                merged.passages,
                [*sel.share_rules, *sel.assistance_rules, *sel.descriptive],
                merged.exclusions,
                3 if merged.from_sql else 5,
            ),
            eligibility=merged.eligibility,
            exclusions=merged.exclusions,
            policy_rules=[f"{r.summary} ({loc(r)})" for r in sel.descriptive],
            funding=funding_of(sel, merged.cep, merged.basis) if "funding" in q.checks else None,
            cep=merged.cep,
        )


TOOL = AdpGet()
