"""adp.get: Assistive Devices Program funding, eligibility, exclusions and the CEP income check.

Accepts a natural-language `query` or a structured `device`; the device, category, income and
household are extracted by rules (regex + alias table; no LLM fallback). SQL reads the funding
rules, exclusions, CEP thresholds and manual sections; the vector path searches `adp_v1` for
corroborating passages. SQL wins on numbers; a vector-only answer is rebuilt from chunk metadata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, model_validator

from reference_server.catalog import ADP_CEP_ID, adp_rule_id
from reference_server.retrieval import adp_manuals as adp
from reference_server.retrieval.adp_manuals import CORE, SqlData
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OFF, calculate_confidence
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.adp_language import (
    EXCLUSION_LABELS,
    FAST_TRACK,
    REQUIREMENT_HEADING,
    Parsed,
    read,
)
from reference_server.tools.base import StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Citation, Evidence

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
CHECKS: tuple[Check, ...] = get_args(Check)


class Device(StrictModel):
    category: Category | None = Field(
        default=None,
        description="ADP category (one of 11); inferred from `type` when omitted.",
    )
    type: str = Field(
        min_length=1,
        max_length=500,
        description="Device type, e.g. 'walker', 'power wheelchair', or a natural-language question.",
    )


class UseCase(StrictModel):
    daily: bool | None = Field(default=None, description="Used on an ongoing daily basis.")
    location: str | None = Field(
        default=None, max_length=200, description="Where it is used, e.g. 'home+entry_exit'."
    )
    independent_transfer: bool | None = Field(
        default=None, description="Can transfer to and from the device independently."
    )


class Request(StrictModel):
    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
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

    @model_validator(mode="after")
    def _query_or_device(self) -> Request:
        if not self.query and self.device is None:
            raise ValueError(
                "provide 'query' (natural-language question) or 'device' ({category, type}); "
                "neither was given"
            )
        return self


class Eligibility(BaseModel):
    basic_mobility: bool | None = Field(description="null = not determined from the request.")
    ontario_resident: bool | None
    valid_prescription: bool | None
    other_criteria: dict[str, Any]


class Funding(BaseModel):
    client_share_percent: float | None = Field(description="Typically 25%; 0% when CEP-eligible.")
    adp_contribution: float | None = Field(description="ADP share in percent, typically 75%.")
    max_contribution: float | None = Field(description="Dollar cap where the manual sets one.")
    repair_coverage: str | None


class Cep(BaseModel):
    income_threshold: float
    eligible: bool
    client_share: float = Field(description="Client share in percent under the CEP check.")


class Response(Evidence):
    summary: str = Field(description="One-line answer.")
    interpretation_notes: dict[str, str]
    context: str = Field(description="Policy snippets and the funding rules used.")
    eligibility: Eligibility | None
    exclusions: list[str]
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
    )


# ---------------------------------------------------------------------------------- paths
def vector_query(p: Parsed) -> str:
    parts = [p.device_type.replace("_", " ") if p.device_type else "", p.text]
    parts += [k.replace("_", " ") for k in p.flags]
    return " ".join(x for x in parts if x)[:1000]


# ---------------------------------------------------------------------------------- merge
def _in_scope(row: dict[str, Any], category: str | None) -> bool:
    return row.get("adp_doc") in {category, CORE}


def _pick_funding(rows: list[dict[str, Any]], p: Parsed) -> list[dict[str, Any]]:
    """The share rules for the device: its category's purchase/lease rules, else the core manual's."""
    # The 0% share (comm_aids 710: ADP pays 100% of the valve price) sits in the manual's section on
    # social-assistance recipients (OW/ODSP/ACSD); everyone else pays the standard 25% (115.03).
    valve_for_assistance = p.device_type == "voice_restoration_valve" and p.social_assistance
    if valve_for_assistance:
        found = [r for r in rows if r["adp_doc"] == "comm_aids" and r["client_share_percent"] == 0]
        if found:
            return found
    rows = [r for r in rows if r.get("client_share_percent") != 0]
    for doc in (p.category, CORE):
        for scenarios in (("purchase",), ("lease",), ("grant_social_assistance",)):
            found = [
                r
                for r in rows
                if r["adp_doc"] == doc
                and r["scenario"] in scenarios
                and (r.get("client_share_percent") or 0) < 100
            ]
            if found:
                # The manuals' funding parts (Part 7; core policy 305) state the split most directly.
                return sorted(
                    found, key=lambda r: not str(r["section_ref"]).startswith(("7", "305"))
                )
    return []


def _manual_of(row: dict[str, Any], sections: list[dict[str, Any]]) -> str:
    uid, page = row.get("policy_uid"), row.get("page_num")
    same = [s for s in sections if s["policy_uid"] == uid]
    best = next((s for s in same if s["page_num"] == page), same[0] if same else None)
    if best is None:  # no section for this rule: use the category's manual when it has only one
        manuals = {s["manual"] for s in sections if s["adp_doc"] == row.get("adp_doc")}
        best = {"manual": manuals.pop()} if len(manuals) == 1 else None
    if best and best.get("manual"):
        return f"ADP {best['manual']}"
    return f"ADP {row.get('adp_doc', '')} manual"


def _loc(row: dict[str, Any]) -> str:
    return f"adp:{row['adp_doc']}:Section {row['section_ref']}"


def _chunk_id(row: dict[str, Any]) -> str:
    """The passage a funding rule, exclusion or manual section row came from (section numbers
    collide inside a manual, so sections keep their own ids: 'adp:prosthesis:205-2')."""
    for kind, key in (("funding", "rule_id"), ("exclusion", "exclusion_id")):
        if row.get(key):
            return adp_rule_id(row["adp_doc"], row["section_ref"], kind, row[key])
    return str(row["id"])


def _ref(row: dict[str, Any]) -> str:
    page = f", p.{row['page_num']}" if row.get("page_num") else ""
    return f"{_loc(row)}{page}"


def _device_label(p: Parsed) -> str:
    return p.device_type.replace("_", " ") if p.device_type else "device"


def _exclusion_lines(rows: list[dict[str, Any]], flagged: list[str]) -> list[str]:
    """One line per exclusion kind (category before core manual), flagged kinds first."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_kind.setdefault(r["exclusion"], []).append(r)
    kinds = sorted(by_kind, key=lambda k: (k not in flagged, list(by_kind).index(k)))
    lines = []
    for kind in kinds:
        refs = list(dict.fromkeys(_ref(r) for r in by_kind[kind]))
        label = EXCLUSION_LABELS.get(kind, kind.replace("_", " "))
        lines.append(f"{label} ({'; '.join(refs[:3])})")
    return lines


@dataclass
class Selection:
    """The rows of either path that answer this request (SQL rows, or chunk metadata if SQL failed)."""

    share_rules: list[dict[str, Any]]
    repair_rules: list[dict[str, Any]]
    scoped_funding: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    flagged: list[str]
    device_sections: list[dict[str, Any]]
    requirement_sections: list[dict[str, Any]]
    sections: list[dict[str, Any]]


def select(p: Parsed, sql: SqlData | None, passages: list[VectorHit]) -> Selection:
    funding_rows = sql.funding if sql else adp.rows_from_passages(passages, "funding_rule")
    excl_rows = sql.exclusions if sql else adp.rows_from_passages(passages, "exclusion")
    sections = sql.sections if sql else []
    scoped = [r for r in funding_rows if _in_scope(r, p.category)]
    excl = sorted(
        (r for r in excl_rows if _in_scope(r, p.category)),
        key=lambda r: (r["adp_doc"] == CORE, str(r.get("exclusion_id"))),
    )
    not_paid = [r for r in scoped if r["scenario"] in ("repair", "batteries") and not r["covered"]]
    cat_sections = [s for s in sections if s["adp_doc"] == p.category]
    return Selection(
        share_rules=_pick_funding(scoped, p),
        repair_rules=sorted(not_paid, key=lambda r: (r["adp_doc"] == CORE, r["scenario"])),
        scoped_funding=scoped,
        exclusions=excl,
        flagged=[k for k in p.flags if any(r["exclusion"] == k for r in excl)],
        device_sections=[
            s
            for s in cat_sections
            if any(k in f"{s['heading']} {s['summary']}".lower() for k in p.keywords)
        ][:3],
        requirement_sections=[s for s in cat_sections if REQUIREMENT_HEADING.search(s["heading"])][
            :3
        ],
        sections=sections,
    )


def cep_check(
    p: Parsed, sql: SqlData | None, cep_hit: VectorHit | None, standard_client: float | None
) -> tuple[Cep | None, list[Conflict]]:
    """Income at or below the household threshold -> client share 0% (thresholds: project spec)."""
    if p.income is None:
        return None, []
    threshold = (
        float(sql.cep[p.household]["income_threshold"]) if sql and p.household in sql.cep else None
    )
    vec_threshold = cep_hit.metadata.get(p.household) if cep_hit else None
    conflicts: list[Conflict] = []
    if threshold is None and vec_threshold is not None:
        threshold = float(vec_threshold)
    elif threshold is not None:
        c = compare(
            f"cep.income_threshold.{p.household}",
            threshold,
            vec_threshold,
            "SQL table value used (adp_cep_threshold).",
        )
        conflicts += [c] if c else []
    if threshold is None:
        return None, conflicts
    eligible = p.income <= threshold
    client = 0.0 if eligible else float(standard_client if standard_client is not None else 25.0)
    return Cep(income_threshold=threshold, eligible=eligible, client_share=client), conflicts


def share_conflicts(p: Parsed, sel: Selection, passages: list[VectorHit]) -> list[Conflict]:
    """The split the passages give for this device (same selection rule) versus SQL's."""
    if not sel.share_rules:
        return []
    top = sel.share_rules[0]
    out = []
    for m in _pick_funding(adp.rows_from_passages(passages, "funding_rule"), p):
        if m["adp_doc"] == top["adp_doc"] and m["scenario"] == top["scenario"]:
            c = compare(
                "funding.client_share_percent",
                top["client_share_percent"],
                m.get("client_share_percent"),
                "SQL funding rule used; structured values take precedence.",
            )
            out += [c] if c else []
    return out


def funding_of(sel: Selection, cep: Cep | None) -> Funding:
    top = sel.share_rules[0] if sel.share_rules else {}
    repair_note = None
    if sel.repair_rules:
        refs = ", ".join(dict.fromkeys(_loc(r) for r in sel.repair_rules[:3]))
        repair_note = (
            "Not covered: ADP does not pay for repairs, maintenance or batteries; "
            f"the client pays the full cost ({refs})."
        )
    maxes = [
        float(r["max_contribution"])
        for r in sel.share_rules
        if r.get("max_contribution") and r["section_ref"] == top.get("section_ref")
    ]
    client = top.get("client_share_percent")
    return Funding(
        client_share_percent=0.0 if cep and cep.eligible else client,
        adp_contribution=top.get("adp_share_percent"),
        max_contribution=max(maxes) if maxes else None,
        repair_coverage=repair_note,
    )


def eligibility_of(p: Parsed, sel: Selection, req: Request) -> Eligibility:
    basic: bool | None = None
    if p.category == "mobility":
        basic = False if "alternative_transport" in sel.flagged else (True if p.daily else None)
    other: dict[str, Any] = {
        "device_type": p.device_type,
        "category": p.category,
        "flagged_exclusions": sel.flagged,
        "requirements": [
            f"{_ref(s)}: {s['heading']} - {s['summary'][:200]}" for s in sel.requirement_sections
        ],
    }
    lease = [r for r in sel.scoped_funding if r["scenario"] == "lease"]
    if lease:
        other["lease"] = f"{lease[0].get('summary', '')} ({_loc(lease[0])})"
    if req.use_case and req.use_case.independent_transfer is not None:
        other["independent_transfer"] = req.use_case.independent_transfer
    if p.fast_track:
        found = [s for s in sel.sections if FAST_TRACK.search(f"{s['heading']} {s['summary']}")]
        other["fast_track"] = (
            f"Described in {', '.join(_ref(s) for s in found[:3])}."
            if found
            else "No fast-track or expedited process is described in the indexed ADP manual "
            "sections; the standard authorizer assessment and application apply."
        )
    return Eligibility(
        basic_mobility=basic,
        ontario_resident=p.resident,
        valid_prescription=p.prescription,
        other_criteria=other,
    )


def citations_of(
    p: Parsed, sel: Selection, corroborating: list[VectorHit], cep: Cep | None
) -> list[Citation]:
    """The SQL rows used (rules, flagged exclusions, device sections), then the top passages."""
    rows = [
        *sel.share_rules[:2],
        *sel.repair_rules[:2],
        *[r for r in sel.exclusions if r["exclusion"] in sel.flagged][:3],
        *sel.device_sections,
        *sel.requirement_sections[:1],
    ]
    out: list[Citation] = []
    seen: set[str] = set()
    for r in rows:
        chunk_id = _chunk_id(r)
        if chunk_id not in seen:
            seen.add(chunk_id)
            out.append(
                Citation(
                    source=_manual_of(r, sel.sections),
                    loc=_loc(r),
                    page=r.get("page_num"),
                    chunk_id=chunk_id,
                )
            )
    for h in corroborating[:3]:
        m = h.metadata
        if h.id not in seen:
            seen.add(h.id)
            source = f"ADP {m['manual']}" if m.get("manual") else f"ADP {m.get('adp_doc')} manual"
            out.append(
                Citation(
                    source=source,
                    loc=f"adp:{m.get('adp_doc')}:Section {m.get('section')}",
                    page=m.get("page"),
                    chunk_id=h.id,
                )
            )
    if cep is not None:
        out.append(
            Citation(
                source="CEP income thresholds (project specification)",
                loc=ADP_CEP_ID,
                chunk_id=ADP_CEP_ID,
            )
        )
    return out


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
    corroborating = [h for h in passages if _in_scope(h.metadata, p.category)]
    eligibility = eligibility_of(p, sel, req) if "eligibility" in checks else None
    exclusions = _exclusion_lines(sel.exclusions, sel.flagged) if "exclusions" in checks else []
    # SQL records only count when SQL answered (rows rebuilt from passages are vector evidence).
    n_sql = len(sel.share_rules) + len(sel.repair_rules) + len(sel.flagged) + int(cep is not None)
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
        "household": f"Household '{p.household}' "
        + ("stated in the request." if p.household_stated else "assumed (not stated)."),
        "extraction": "Device, income and household were extracted by rules (no LLM).",
    }
    if sel.share_rules and sel.share_rules[0]["adp_doc"] == CORE and p.category != CORE:
        notes["funding"] = (
            f"No {p.category} rule states a split; the ADP general funding rule "
            f"({_loc(sel.share_rules[0])}) is used."
        )
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        confidence=calculate_confidence(n_sql, len(corroborating), len(conflicts), OFF),
        summary=_summary(p, sel, cep, eligibility),
        interpretation_notes=notes,
        context=_context(passages, sel.share_rules, exclusions, 3 if sql else 5),
        eligibility=eligibility,
        exclusions=exclusions,
        funding=funding_of(sel, cep) if "funding" in checks else None,
        cep=cep,
        citations=citations_of(p, sel, corroborating, cep),
        conflicts=conflicts,
    )
    return ToolOutput(response, dual)


def _summary(p: Parsed, sel: Selection, cep: Cep | None, eligibility: Eligibility | None) -> str:
    share_rules, flagged, not_covered = sel.share_rules, sel.flagged, sel.repair_rules
    device = _device_label(p)
    if p.category is None:
        return (
            "Could not tell which device is meant; name it (e.g. walker, power wheelchair, CPAP, "
            "hearing aid) or give device.category."
        )
    parts: list[str] = []
    if "alternative_transport" in flagged:
        parts.append(
            f"Not eligible: ADP does not fund a {device} used as a car substitute or only "
            "intermittently/outdoors; it must meet a basic daily mobility need."
        )
    uncovered = [k for k in ("batteries", "repairs_maintenance") if k in flagged]
    if uncovered:
        what = " and ".join("batteries" if k == "batteries" else "repairs" for k in uncovered)
        ref = _loc(not_covered[0]) if not_covered else "the ADP manual"
        parts.append(f"ADP does not cover {what} for a {device}; the client pays ({ref}).")
    others = [k for k in flagged if k not in ("alternative_transport", *uncovered)]
    if others:
        parts.append("Flagged exclusions: " + ", ".join(k.replace("_", " ") for k in others) + ".")
    if share_rules and "alternative_transport" not in flagged:
        top = share_rules[0]
        if top.get("client_share_percent") is not None:
            parts.append(
                f"ADP funds a {device}: ADP pays {top['adp_share_percent']:g}% of the approved price "
                f"and the client {top['client_share_percent']:g}% ({_loc(top)})."
            )
        elif top.get("max_contribution"):
            parts.append(f"ADP pays a grant towards a {device} ({_loc(top)}).")
    if cep is not None:
        if cep.eligible:
            parts.append(
                f"Income ${p.income:,.0f} is at or below the ${cep.income_threshold:,.0f} "
                f"{p.household} CEP threshold: CEP-eligible, client share 0%."
            )
        else:
            parts.append(
                f"Income ${p.income:,.0f} is above the ${cep.income_threshold:,.0f} {p.household} "
                f"CEP threshold: standard client share {cep.client_share:g}%."
            )
    if eligibility and "fast_track" in eligibility.other_criteria:
        parts.append(str(eligibility.other_criteria["fast_track"]))
    return " ".join(parts) or f"No ADP funding rule found for a {device}."


def _context(
    passages: list[VectorHit], share_rules: list[dict[str, Any]], exclusions: list[str], n: int
) -> str:
    lines = [
        f"[{h.id}] {h.text[:500]}" for h in passages[:n] if h.metadata.get("doc_type") == "section"
    ]
    lines += [f"Funding rule {_loc(r)}: {r.get('summary', '')}" for r in share_rules[:2]]
    if exclusions:
        lines.append("Exclusions: " + "; ".join(exclusions[:5]))
    return "\n".join(lines)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Assistive Devices Program (ADP): funding split (ADP 75% / client 25%), eligibility, "
        "exclusions (batteries, repairs, car-substitute use, ...) and the CEP income check for a device. "
        "Ask in plain language (`query`, optional `patient_income`) or give `device` {category, type}, "
        "`check`, `use_case`. Returns summary, funding, exclusions, CEP, citations, provenance, confidence."
    ),
    request=Request,
    response=Response,
    run=run,
)
