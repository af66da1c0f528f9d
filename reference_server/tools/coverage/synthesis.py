"""coverage.answer's synthesis: one part per domain tool answer (decision, sentence, cited
highlights), ODB eligibility from the patient context, follow-up questions, provenance.

It reads the domain tools' typed responses (their `Response` models) by field, and decides
from those fields, never from their English text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from reference_server.catalog import odb_group_id, odb_lu_id
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.adp import get as adp_get
from reference_server.tools.common import Evidence
from reference_server.tools.coverage.eligibility import eligibility_rules, odb_eligible
from reference_server.tools.coverage.patient import Patient
from reference_server.tools.coverage.routing import Intent
from reference_server.tools.odb import get as odb_get
from reference_server.tools.odb.intents import INTENTS
from reference_server.tools.schedule import get as schedule_get

Decision = Literal["billable", "eligible", "covered", "needs_more_info"]
MAX_HIGHLIGHTS_PER_TOOL = 4
LABELS: dict[Intent, str] = {"billing": "OHIP billing", "device": "ADP", "drug": "ODB"}


class Highlight(BaseModel):
    point: str = Field(description="Key finding.")
    citations: list[Citation]


class Followup(BaseModel):
    ask: str
    reason: str


# ----------------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class Part:
    decision: Decision
    sentence: str
    highlights: list[Highlight]
    # what the domain tool could not settle: the device, the drug, or its strength or form
    unresolved: Literal["device", "drug", "strength"] | None = None
    why: str | None = None  # the tool's own words for what it could not settle


@dataclass(frozen=True)
class Domain:
    """One domain tool's call as the synthesis reads it: its part, or why it failed."""

    intent: Intent
    tool: str
    part: Part
    error: str | None = None


def _money(value: float | None) -> str:
    return f"${value:,.2f}" if isinstance(value, int | float) else "no flat fee"


def _lead(text: str | None, sentences: int = 2, limit: int = 300) -> str | None:
    """The first sentences of a text, cut at a word near `limit` characters."""
    if not text:
        return None
    lead = " ".join(re.split(r"(?<=[.!?])\s+", text.strip())[:sentences])
    return lead if len(lead) <= limit else lead[: limit - 1].rsplit(" ", 1)[0] + "…"


def failed_part(intent: Intent, tool: str, error: str | None) -> Part:
    return Part("needs_more_info", f"{LABELS[intent]}: {tool} could not answer ({error}).", [])


def billing_part(out: schedule_get.Response, codes: list[str]) -> Part:
    items = out.items
    if out.needs_more_info:
        sentence = f"OHIP billing: the Schedule does not list {', '.join(out.unknown_codes)}."
        if items:
            listed = ", ".join(f"{i.code} ({_money(i.fee)})" for i in items[:3])
            sentence += f" Codes matching the description: {listed}."
        return Part("needs_more_info", sentence, [])
    if not items:
        return Part("needs_more_info", "No matching OHIP fee code was found.", [])
    named = [i for i in items if i.code in codes]
    shown = (named or items)[:MAX_HIGHLIGHTS_PER_TOOL]
    cites: dict[str, list[Citation]] = {}
    current = ""
    listed_codes = {i.code for i in items}
    for c in out.citations:  # schedule.get lists each code, then its commentary
        if c.loc in listed_codes:
            current = c.loc
        cites.setdefault(current, []).append(c)
    highlights = []
    for item in shown:
        point = f"{item.code} {item.description}: {_money(item.fee)}."
        if item.fee_note:  # components and other listings, as schedule.get words them
            point += f" {item.fee_note}"
        for label, text in (("Limits", item.limits), ("Requirements", item.requirements)):
            note = _lead(text)
            if note:
                point += f" {label}: {note}"
        highlights.append(Highlight(point=point, citations=cites.get(item.code, [])[:3]))
    listed = ", ".join(f"{i.code} ({_money(i.fee)})" for i in shown)
    billable = any(i.fee is not None or i.requirements for i in (named or items))
    if named:
        lead = f"OHIP billing: {listed} {'is' if len(shown) == 1 else 'are'} in the Schedule"
        limits = _lead(named[0].limits)
        sentence = lead + (f"; {named[0].code} limits: {limits.rstrip('.')}" if limits else "")
        sentence += "."
    else:
        sentence = f"OHIP billing: the closest Schedule codes are {listed}."
    decision: Decision = (
        "billable" if billable and (named or evidence_score(out) >= 0.7) else "needs_more_info"
    )
    return Part(decision, sentence, highlights)


def device_part(out: adp_get.Response) -> Part:
    """Eligible when ADP contributes, the answer leads neither with a use ADP does not fund nor
    with an unknown device, and the evidence is at least one path's base."""
    summary = out.summary.strip()
    eligible = (
        bool(out.funding and out.funding.adp_contribution)
        and out.lead not in ("not_eligible", "unknown_device")
        and evidence_score(out) >= 0.6
    )
    sentence = f"ADP: {summary}" if summary else "ADP: no funding rule was found for this device."
    highlights = [Highlight(point=sentence, citations=list(out.citations[:3]))]
    for excl in out.exclusions[:2]:
        highlights.append(Highlight(point=f"ADP exclusion: {excl}", citations=[]))
    return Part(
        "eligible" if eligible else "needs_more_info",
        sentence,
        highlights,
        unresolved="device" if out.lead == "unknown_device" else None,
    )


def drug_part(out: odb_get.Response, asked: str, patient: Patient) -> Part:
    """`asked`: the question text odb.get was given (its product notes are shown when it asks
    about coverage or criteria)."""
    cov = out.coverage
    every = out.citations
    notes = [c for c in every if c.chunk_id.startswith("odb:note:")]
    missing = out.not_listed
    if missing is not None:  # listed, not at the strength or in the form asked: say what is
        listed = {odb_group_id(b.group_id) for b in missing.listed}
        sentence = f"ODB: {missing.message}"
        highlight = Highlight(
            point=sentence, citations=[c for c in every if c.chunk_id in listed][:3]
        )
        return Part(
            "needs_more_info", sentence, [highlight], unresolved="strength", why=missing.message
        )
    if cov is None:
        cited = [c for c in every if not c.chunk_id.startswith("odb:note:")]
        sentence = "ODB: the drug could not be matched to the formulary."
        highlight = Highlight(point=sentence, citations=cited[:3])
        return Part("needs_more_info", sentence, [highlight], unresolved="drug")
    # the evidence for the sentence is the product's own group passage (and the lowest-cost
    # product's, the same group), for the criteria its LU codes: never another product's
    group = odb_group_id(cov.group_id) if cov.group_id else None
    cites = [c for c in every if c.chunk_id == group][:3]
    codes = {odb_lu_id(code) for code in cov.lu_codes}
    lu_cites = [c for c in every if c.chunk_id in codes][:3]
    name = f"{cov.brand_name} ({cov.generic_name.lower()}"
    name += f" {cov.strength}" if cov.strength else ""
    name += f" {cov.dosage_form}" if cov.dosage_form else ""
    name += f", DIN {cov.din})"
    if cov.covered:
        status = "is an ODB benefit" + (
            " with Limited Use criteria (LU code needed)" if cov.lu_required else ""
        )
    else:
        status = "is not an ODB benefit"
    sentence = f"ODB: {name} {status}."
    low = out.lowest_cost
    if cov.covered and low is not None and low.din != cov.din:
        sentence += f" Lowest-cost interchangeable: {low.brand} (DIN {low.din})."
    eligible, note = odb_eligible(patient.age, patient.setting, patient.plan)
    if note:
        sentence += f" {note}"
    elif patient.plan in ("private", "none"):
        sentence += (
            f" The patient's plan is '{patient.plan}': ODB pays only if they are ODB-eligible."
        )
    highlights = [Highlight(point=sentence, citations=cites)]
    others = out.other_strengths
    if others:  # no strength was asked: the brand's other products, each with its evidence
        other_groups = {odb_group_id(b.group_id) for b in others}
        also = ", ".join(
            f"{b.strength or 'no strength stated'} {b.dosage_form or ''}".strip()
            + f" (DIN {b.din}, {'covered' if b.covered else 'not covered'})"
            for b in others
        )
        highlights.append(
            Highlight(
                point=f"{cov.brand_name} is also listed at: {also}.",
                citations=[c for c in every if c.chunk_id in other_groups][:4],
            )
        )
    if cov.lu_criteria:
        highlights.append(
            Highlight(point=f"LU criteria: {_lead(cov.lu_criteria)}", citations=lu_cites or cites)
        )
    # product notes are clinical criteria: shown when the question is about coverage or criteria
    about_criteria = any(re.search(INTENTS[c], asked, re.I) for c in ("coverage", "lu_criteria"))
    for text, citation in zip(cov.notes if about_criteria else [], notes, strict=False):
        highlights.append(Highlight(point=f"Formulary note: {_lead(text)}", citations=[citation]))
    rules = eligibility_rules()
    if note and rules:
        highlights.append(
            Highlight(
                point=note,
                citations=[
                    Citation(
                        source="ODB policy notes (project summary)",
                        loc=rules.title,
                        chunk_id=rules.chunk_id,
                    )
                ],
            )
        )
    covered = cov.covered and eligible is not False
    return Part("covered" if covered else "needs_more_info", sentence, highlights)


def followups_for(patient: Patient, domains: list[Domain]) -> list[Followup]:
    asks: list[Followup] = []
    if not domains:
        asks.append(
            Followup(
                ask="Is this about billing a service (OHIP), an assistive device (ADP) or a drug (ODB)?",
                reason="The question did not name a fee code, device or drug.",
            )
        )
    for d in domains:
        if d.error:
            asks.append(
                Followup(
                    ask=f"Ask again, or call {d.tool} directly.",
                    reason=f"{d.tool} failed: {d.error}",
                )
            )
            continue
        part = d.part
        if d.intent == "billing" and part.decision == "needs_more_info":
            asks.append(
                Followup(
                    ask="Which service or OHIP fee code do you want to bill?",
                    reason="No Schedule code matched the question closely.",
                )
            )
        if d.intent == "device":
            if part.unresolved == "device":
                asks.append(
                    Followup(
                        ask="Which device exactly (e.g. walker, power wheelchair, hearing aid)?",
                        reason="ADP funding depends on the device category.",
                    )
                )
            if patient.income is None:
                asks.append(
                    Followup(
                        ask="What is the patient's annual income (and household size)?",
                        reason="The CEP check that can remove the 25% client share needs income.",
                    )
                )
        if d.intent == "drug":
            if part.unresolved == "drug":
                asks.append(
                    Followup(
                        ask="Which drug (brand or generic name, and strength)?",
                        reason="No formulary product matched.",
                    )
                )
            if part.unresolved == "strength":
                asks.append(
                    Followup(
                        ask="Which of the listed strengths and forms is prescribed?",
                        reason=part.why or "The strength asked is not listed.",
                    )
                )
            if (
                patient.plan is None
                and odb_eligible(patient.age, patient.setting, patient.plan)[0] is not True
            ):
                asks.append(
                    Followup(
                        ask="Is the patient covered by ODB (65+, social assistance, Trillium, LTC)?",
                        reason="Formulary listing answers coverage only for ODB-eligible patients.",
                    )
                )
    return asks


def evidence_score(answer: Evidence) -> float:
    """The spec's evidence score a sub-tool's answer states (`confidence_basis.spec_score`; its
    `confidence` when it states no basis, as another backend's tools may not): the decision
    thresholds of seed 002 (0.7 billable, 0.6 a path's base) are set on that score, whichever
    confidence the server publishes."""
    basis = answer.confidence_basis
    return basis.spec_score if basis is not None else answer.confidence


def provenance_summary(answers: Sequence[Evidence]) -> str:
    seen = {p for a in answers for p in a.provenance}
    return "+".join(p for p in ("sql", "vector") if p in seen) or "none"


def tool_conflicts(tool: str, answer: Evidence) -> list[Conflict]:
    """The tool's conflicts, each field prefixed with the tool's name."""
    return [c.model_copy(update={"field": f"{tool}: {c.field}"}) for c in answer.conflicts]
