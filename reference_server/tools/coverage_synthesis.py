"""coverage.answer's synthesis: one part per domain tool answer (decision, sentence, cited
highlights), ODB eligibility from the patient context, follow-up questions, provenance."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from reference_server.catalog import odb_group_id, odb_lu_id
from reference_server.scoring.citations import Citation
from reference_server.tools.base import ToolSpec
from reference_server.tools.coverage_eligibility import eligibility_rules, odb_eligible
from reference_server.tools.coverage_routing import Intent
from reference_server.tools.odb_intents import INTENTS

if TYPE_CHECKING:
    from reference_server.tools.off_coverage_answer import Patient

Decision = Literal["billable", "eligible", "covered", "needs_more_info"]
MAX_HIGHLIGHTS_PER_TOOL = 4


class Highlight(BaseModel):
    point: str = Field(description="Key finding.")
    citations: list[Citation]


class Followup(BaseModel):
    ask: str
    reason: str


@dataclass
class Call:
    intent: Intent
    spec: ToolSpec
    args: dict[str, Any]
    response: dict[str, Any] | None = None
    error: str | None = None
    started_ms: float = 0.0
    duration_ms: float = 0.0

    @property
    def confidence(self) -> float:
        return float((self.response or {}).get("confidence") or 0.0)


@dataclass
class Part:
    decision: Decision
    sentence: str
    highlights: list[Highlight]
    # what the domain tool could not settle: the drug itself, or its strength or form
    unresolved: Literal["drug", "strength"] | None = None


def _citations(raw: list[dict[str, Any]]) -> list[Citation]:
    return [Citation(**c) for c in raw]


def _money(value: Any) -> str:
    return f"${value:,.2f}" if isinstance(value, int | float) else "no flat fee"


def _lead(text: str | None, sentences: int = 2, limit: int = 300) -> str | None:
    """The first sentences of a text, cut at a word near `limit` characters."""
    if not text:
        return None
    lead = " ".join(re.split(r"(?<=[.!?])\s+", text.strip())[:sentences])
    return lead if len(lead) <= limit else lead[: limit - 1].rsplit(" ", 1)[0] + "…"


def billing_part(call: Call, codes: list[str]) -> Part:
    out = call.response or {}
    items = out.get("items") or []
    unknown = out.get("unknown_codes") or []
    if out.get("needs_more_info"):
        sentence = f"OHIP billing: the Schedule does not list {', '.join(unknown)}."
        if items:
            listed = ", ".join(f"{i['code']} ({_money(i['fee'])})" for i in items[:3])
            sentence += f" Codes matching the description: {listed}."
        return Part("needs_more_info", sentence, [])
    if not items:
        return Part("needs_more_info", "No matching OHIP fee code was found.", [])
    named = [i for i in items if i["code"] in codes]
    shown = (named or items)[:MAX_HIGHLIGHTS_PER_TOOL]
    cites: dict[str, list[dict[str, Any]]] = {}
    current = ""
    for c in out.get("citations") or []:  # schedule.get lists each code, then its commentary
        if c["loc"] in {i["code"] for i in items}:
            current = c["loc"]
        cites.setdefault(current, []).append(c)
    highlights = []
    for item in shown:
        point = f"{item['code']} {item['description']}: {_money(item['fee'])}."
        if item.get("fee_note"):  # components and other listings, as schedule.get words them
            point += f" {item['fee_note']}"
        for label, key in (("Limits", "limits"), ("Requirements", "requirements")):
            note = _lead(item.get(key))
            if note:
                point += f" {label}: {note}"
        highlights.append(
            Highlight(point=point, citations=_citations(cites.get(item["code"], [])[:3]))
        )
    listed = ", ".join(f"{i['code']} ({_money(i['fee'])})" for i in shown)
    billable = any(i.get("fee") is not None or i.get("requirements") for i in (named or items))
    if named:
        lead = f"OHIP billing: {listed} {'is' if len(shown) == 1 else 'are'} in the Schedule"
        limits = _lead(named[0].get("limits"))
        sentence = lead + (f"; {named[0]['code']} limits: {limits.rstrip('.')}" if limits else "")
        sentence += "."
    else:
        sentence = f"OHIP billing: the closest Schedule codes are {listed}."
    decision: Decision = (
        "billable" if billable and (named or call.confidence >= 0.7) else "needs_more_info"
    )
    return Part(decision, sentence, highlights)


def device_part(call: Call) -> Part:
    out = call.response or {}
    summary = str(out.get("summary") or "").strip()
    funding = out.get("funding") or {}
    eligible = (
        bool(funding.get("adp_contribution"))
        and not summary.lower().startswith(("not eligible", "could not tell"))
        and call.confidence >= 0.6
    )
    sentence = f"ADP: {summary}" if summary else "ADP: no funding rule was found for this device."
    highlights = [Highlight(point=sentence, citations=_citations((out.get("citations") or [])[:3]))]
    for excl in (out.get("exclusions") or [])[:2]:
        highlights.append(Highlight(point=f"ADP exclusion: {excl}", citations=[]))
    return Part("eligible" if eligible else "needs_more_info", sentence, highlights)


def drug_part(call: Call, patient: Patient) -> Part:
    out = call.response or {}
    cov = out.get("coverage")
    every = out.get("citations") or []
    notes = [c for c in every if c["chunk_id"].startswith("odb:note:")]
    missing = out.get("not_listed")
    if missing:  # the drug is listed, not at the strength or in the form asked: say what is
        listed = {odb_group_id(b["group_id"]) for b in missing["listed"]}
        sentence = f"ODB: {missing['message']}"
        cites = _citations([c for c in every if c["chunk_id"] in listed][:3])
        highlight = Highlight(point=sentence, citations=cites)
        return Part("needs_more_info", sentence, [highlight], unresolved="strength")
    if not cov:
        cited = [c for c in every if not c["chunk_id"].startswith("odb:note:")]
        sentence = "ODB: the drug could not be matched to the formulary."
        highlight = Highlight(point=sentence, citations=_citations(cited[:3]))
        return Part("needs_more_info", sentence, [highlight], unresolved="drug")
    # the evidence for the sentence is the product's own group passage (and the lowest-cost
    # product's, the same group), for the criteria its LU codes: never another product's
    group = odb_group_id(cov["group_id"]) if cov.get("group_id") else None
    cites = _citations([c for c in every if c["chunk_id"] == group][:3])
    codes = {odb_lu_id(code) for code in cov.get("lu_codes") or []}
    lu_cites = _citations([c for c in every if c["chunk_id"] in codes][:3])
    name = f"{cov['brand_name']} ({cov['generic_name'].lower()}"
    name += f" {cov['strength']}" if cov.get("strength") else ""
    name += f" {cov['dosage_form']}" if cov.get("dosage_form") else ""
    name += f", DIN {cov['din']})"
    if cov["covered"]:
        status = "is an ODB benefit" + (
            " with Limited Use criteria (LU code needed)" if cov.get("lu_required") else ""
        )
    else:
        status = "is not an ODB benefit"
    sentence = f"ODB: {name} {status}."
    low = out.get("lowest_cost")
    if cov["covered"] and low and low.get("din") != cov["din"]:
        sentence += f" Lowest-cost interchangeable: {low['brand']} (DIN {low['din']})."
    eligible, note = odb_eligible(patient.age, patient.setting, patient.plan)
    if note:
        sentence += f" {note}"
    elif patient.plan in ("private", "none"):
        sentence += (
            f" The patient's plan is '{patient.plan}': ODB pays only if they are ODB-eligible."
        )
    highlights = [Highlight(point=sentence, citations=cites)]
    others = out.get("other_strengths") or []
    if others:  # no strength was asked: the brand's other products, each with its evidence
        other_groups = {odb_group_id(b["group_id"]) for b in others}
        also = ", ".join(
            f"{b['strength'] or 'no strength stated'} {b['dosage_form'] or ''}".strip()
            + f" (DIN {b['din']}, {'covered' if b['covered'] else 'not covered'})"
            for b in others
        )
        highlights.append(
            Highlight(
                point=f"{cov['brand_name']} is also listed at: {also}.",
                citations=_citations([c for c in every if c["chunk_id"] in other_groups][:4]),
            )
        )
    if cov.get("lu_criteria"):
        highlights.append(
            Highlight(
                point=f"LU criteria: {_lead(cov['lu_criteria'])}",
                citations=lu_cites or cites,
            )
        )
    # product notes are clinical criteria: shown when the question is about coverage or criteria
    asked = str(call.args.get("q", ""))
    about_criteria = any(re.search(INTENTS[c], asked, re.I) for c in ("coverage", "lu_criteria"))
    for text, citation in zip(
        cov.get("notes") or [] if about_criteria else [], notes, strict=False
    ):
        highlights.append(
            Highlight(point=f"Formulary note: {_lead(text)}", citations=_citations([citation]))
        )
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
    covered = cov["covered"] and eligible is not False
    return Part("covered" if covered else "needs_more_info", sentence, highlights)


def followups_for(patient: Patient, calls: list[Call], parts: dict[Intent, Part]) -> list[Followup]:
    asks: list[Followup] = []
    if not calls:
        asks.append(
            Followup(
                ask="Is this about billing a service (OHIP), an assistive device (ADP) or a drug (ODB)?",
                reason="The question did not name a fee code, device or drug.",
            )
        )
    for call in calls:
        if call.error:
            asks.append(
                Followup(
                    ask=f"Ask again, or call {call.spec.name} directly.",
                    reason=f"{call.spec.name} failed: {call.error}",
                )
            )
            continue
        part = parts[call.intent]
        if call.intent == "billing" and part.decision == "needs_more_info":
            asks.append(
                Followup(
                    ask="Which service or OHIP fee code do you want to bill?",
                    reason="No Schedule code matched the question closely.",
                )
            )
        if call.intent == "device":
            if "could not tell" in part.sentence.lower():
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
        if call.intent == "drug":
            if part.unresolved == "drug":
                asks.append(
                    Followup(
                        ask="Which drug (brand or generic name, and strength)?",
                        reason="No formulary product matched.",
                    )
                )
            if part.unresolved == "strength":
                missing = (call.response or {}).get("not_listed") or {}
                asks.append(
                    Followup(
                        ask="Which of the listed strengths and forms is prescribed?",
                        reason=str(missing.get("message") or "The strength asked is not listed."),
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


def provenance_summary(calls: list[Call]) -> str:
    seen = {p for c in calls for p in (c.response or {}).get("provenance") or []}
    return "+".join(p for p in ("sql", "vector") if p in seen) or "none"
