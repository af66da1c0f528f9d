"""adp.get: Assistive Devices Program funding, eligibility, exclusions and the CEP income check.

Accepts a natural-language `query` or a structured `device`; the device, category, income and
household are extracted by rules (regex + alias table; no LLM fallback). SQL reads the funding
rules, exclusions, CEP thresholds and manual sections; the vector path searches `adp_v1` for
corroborating passages. SQL wins on numbers; a vector-only answer is rebuilt from chunk metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, model_validator

from reference_server.catalog import ADP_CEP_ID, OFF_COLLECTIONS, adp_rule_id
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OFF, calculate_confidence
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Citation, Evidence

NAME = "adp.get"
COLLECTION = OFF_COLLECTIONS["adp"]
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
CORE = "core_manual"

# (pattern, device type, category, words that find the device's manual sections); first match wins.
DEVICES: list[tuple[str, str, str, tuple[str, ...]]] = [
    (r"power add-?on", "power_add_on", "mobility", ("add-on",)),
    (
        r"power (wheel)?chair|electric wheelchair|power base|power tilt|tilt (and|&|/) ?recline",
        "power_wheelchair",
        "mobility",
        ("power",),
    ),
    (r"scooter", "scooter", "mobility", ("scooter",)),
    (r"manual wheelchair", "manual_wheelchair", "mobility", ("manual wheelchair",)),
    (r"wheel ?chair", "wheelchair", "mobility", ("wheelchair",)),
    (r"rollator|walker", "walker", "mobility", ("walker", "ambulation")),
    (r"crutch", "crutches", "mobility", ("crutch", "ambulation")),
    (r"standing frame", "standing_frame", "mobility", ("standing frame",)),
    (r"positioning|seating|cushion", "positioning_device", "mobility", ("positioning", "seating")),
    (
        r"\bsgds?\b|speech[- ]generat|\bvocas?\b|\baac\b|augmentative",
        "speech_generating_device",
        "comm_aids",
        ("speech generating", "sgd", "augmentative"),
    ),
    (r"electrolarynx|electrolarynges", "electrolarynx", "comm_aids", ("electrolaryn",)),
    (r"voice amplifier", "voice_amplifier", "comm_aids", ("voice amplifier",)),
    (
        r"speaking valve|voice restoration|voice prosthes",
        "voice_restoration_valve",
        "comm_aids",
        ("speaking valve",),
    ),
    (
        r"communication (aid|device|board)|writing aid",
        "communication_aid",
        "comm_aids",
        ("communication aid",),
    ),
    (r"cochlear", "cochlear_implant_processor", "hearing_devices", ("cochlear",)),
    (
        r"hearing aid|hearing device|\bfm system|\bbaha\b",
        "hearing_aid",
        "hearing_devices",
        ("hearing",),
    ),
    (r"\btty\b|teletypewriter", "teletypewriter", "hearing_devices", ("teletypewriter",)),
    (
        r"magnif|\bcctv\b|low vision|visual aid|braille|white cane",
        "visual_aid",
        "visual_aids",
        ("optical", "reading", "visual"),
    ),
    (
        r"\b(c|bi|a)?pap\b|bi-?level|positive airway",
        "cpap",
        "respiratory",
        ("positive airway",),
    ),
    (r"ventilator", "ventilator", "respiratory", ("ventilator",)),
    (
        r"nebuli[sz]er|compressor|suction|cough assist|airway clearance|apnea monitor|respiratory",
        "respiratory_equipment",
        "respiratory",
        ("compressor", "suction", "airway"),
    ),
    (r"insulin pump|pump suppl|infusion set", "insulin_pump", "insulin_pump", ("insulin pump",)),
    (
        r"\bcgms?\b|continuous glucose|glucose monitor|dexcom|glucose sensor",
        "continuous_glucose_monitor",
        "glucose_monitoring",
        ("glucose",),
    ),
    (r"breast prosthe|mastectomy", "breast_prosthesis", "grants", ("breast prosthes",)),
    (r"enteral|feeding pump", "enteral_feeding_pump", "grants", ("enteral",)),
    (r"ocular prosthe|artificial eye|scleral", "ocular_prosthesis", "prosthesis", ("ocular",)),
    (
        r"maxillofacial|facial prosthe|obturator|intraoral|extraoral",
        "maxillofacial_prosthesis",
        "maxillofacial",
        ("prosthes",),
    ),
    (
        r"prosthe|artificial (leg|arm|limb)|amputee",
        "limb_prosthesis",
        "prosthesis",
        ("limb prosthes",),
    ),
    (
        r"ortho(sis|ses|tic)|brace|compression garment|lymphedema|pressure garment",
        "orthotic_or_pressure_device",
        CORE,
        ("orthotic", "pressure"),
    ),
]

# Exclusion kinds a question can ask about or trigger (adp_exclusion.exclusion values).
FLAGS: dict[str, str] = {
    "batteries": r"batter(y|ies)",
    "repairs_maintenance": r"repair|maintenance|broken|\bfix",
    "alternative_transport": (
        r"car[- ]substitut|substitut\w* for (a |the |his |her |their )?car|instead of (a |the )?"
        r"(car|taxi|bus)|replace (a |the |his |her |their )?car|outdoors?[- ]only|only (used )?"
        r"(outdoors|outside)|only for outdoor|intermittent|occasional"
    ),
    "education_work_recreation_only": r"only for (school|work|sport|recreation|leisure)|"
    r"(school|work|sports?|recreation)[- ]only",
    "therapy_training_only": r"(therapy|exercise|training)[- ]only|only for (therapy|exercise|training)",
    "backup_spare_duplicate": r"back-?up|spare|duplicate|second (device|chair|one)",
    "used_devices": r"second-?hand|refurbished|rebuilt|\bused (device|chair|scooter|wheelchair)",
    "bought_before_approval": r"already (bought|purchased)|(bought|purchased) before|before approval",
    "other_payer": r"\bwsib\b|veterans|workers'? comp",
}
EXCLUSION_LABELS = {
    "batteries": "Batteries not covered",
    "repairs_maintenance": "Repairs and maintenance not covered",
    "alternative_transport": "Not funded as alternative transport (car substitute) or intermittent/outdoor-only use",
    "education_work_recreation_only": "Not funded for school, work or recreation-only use",
    "therapy_training_only": "Not funded for therapy, exercise or training-only use",
    "backup_spare_duplicate": "Back-up, spare or duplicate devices not funded",
    "used_devices": "Used or rebuilt devices not funded",
    "bought_before_approval": "Devices bought before ADP approval not reimbursed",
    "unregistered_supplier": "Devices from unregistered or out-of-province suppliers not funded",
    "warranty_fees": "Extended warranties, service plans and handling fees not covered",
    "cosmetic": "Cosmetic items not funded",
    "other_payer": "Not funded when another payer (WSIB, Veterans Affairs, federal) is responsible",
    "general_not_funded": "Items listed as not funded by ADP",
}
FAST_TRACK = re.compile(r"fast[- ]?track|expedit|urgent|priority|rush", re.I)
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)\s?(k\b)?|\b(\d+(?:\.\d+)?)\s?k\b", re.I)
_INCOME_NUMBER = re.compile(r"income[^\d$]{0,25}(\d[\d,]{3,})", re.I)
_FAMILY = re.compile(
    r"\b(family|families|married|spouse|partner|husband|wife|couple|children|kids|dependants?)\b",
    re.I,
)
_SINGLE = re.compile(r"\b(single|lives alone|living alone)\b", re.I)
_NOT_RESIDENT = re.compile(
    r"not (an )?ontario resident|out[- ]of[- ]province|visitor|tourist|non-?resident", re.I
)
_RESIDENT = re.compile(r"ontario resident|resident of ontario|\bohip\b|health card", re.I)
_NO_RX = re.compile(r"no (valid )?prescription|without (a )?(valid )?prescription", re.I)
_RX = re.compile(r"(has|have|with) (a |an )?(valid )?(prescription|authori[sz]ation)", re.I)
_DAILY = re.compile(r"\bdaily\b|every ?day|all day", re.I)
_REQUIREMENT_HEADING = re.compile(r"requirement|eligib|functional status|criteria", re.I)


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
@dataclass
class Parsed:
    text: str
    device_type: str | None = None
    category: str | None = None
    keywords: tuple[str, ...] = ()
    income: float | None = None
    household: str = "single"
    household_stated: bool = False
    flags: list[str] = field(default_factory=list)
    fast_track: bool = False
    social_assistance: bool = False
    daily: bool | None = None
    resident: bool | None = None
    prescription: bool | None = None


# Ontario Works, ODSP and ACSD recipients: their own co-payment rules (comm_aids 710, core 310.00).
_SOCIAL_ASSISTANCE = re.compile(
    r"\b(ontario works|odsp|ontario disability support|acsd|assistance to children with severe disabilities|social assistance)\b",
    re.I,
)


def _money(text: str) -> float | None:
    m = _MONEY.search(text)
    if m:
        number, k = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), "k")
        return float(number.replace(",", "")) * (1000 if k else 1)
    m = _INCOME_NUMBER.search(text)
    return float(m.group(1).replace(",", "")) if m else None


def parse(req: Request) -> Parsed:
    """Rule-based extraction (regex + alias table) from the query and the structured fields."""
    use = req.use_case
    text = " ".join(
        t for t in (req.query, req.device.type if req.device else None, use and use.location) if t
    )
    p = Parsed(text=text)
    p.social_assistance = bool(_SOCIAL_ASSISTANCE.search(text))
    for pattern, dtype, category, words in DEVICES:
        if re.search(pattern, text, re.I):
            p.device_type, p.category, p.keywords = dtype, category, words
            break
    if req.device and req.device.category:
        if p.category != req.device.category:
            p.keywords = ()  # the alias belongs to another manual: its section words do not apply
        p.category = req.device.category
    p.income = req.patient_income if req.patient_income is not None else _money(text)
    if _FAMILY.search(text):
        p.household, p.household_stated = "family", True
    elif _SINGLE.search(text):
        p.household_stated = True
    p.flags = [kind for kind, pattern in FLAGS.items() if re.search(pattern, text, re.I)]
    location = (use.location or "").lower() if use else ""
    outdoor_only = "outdoor" in location and not re.search(r"home|indoor|entry", location)
    if ((use and use.daily is False) or outdoor_only) and "alternative_transport" not in p.flags:
        p.flags.append("alternative_transport")
    p.fast_track = bool(FAST_TRACK.search(text))
    p.daily = (
        use.daily if use and use.daily is not None else (True if _DAILY.search(text) else None)
    )
    p.resident = False if _NOT_RESIDENT.search(text) else (True if _RESIDENT.search(text) else None)
    p.prescription = False if _NO_RX.search(text) else (True if _RX.search(text) else None)
    return p


# ---------------------------------------------------------------------------------- paths
@dataclass
class SqlData:
    funding: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    cep: dict[str, dict[str, Any]]
    sections: list[dict[str, Any]]


def sql_path(rt: Runtime) -> SqlData:
    """The ADP tables are small (tens of rules, ~500 sections): read them whole, filter in merge."""
    db = rt.ohip_sql
    return SqlData(
        funding=db.query("SELECT * FROM adp_funding_rule ORDER BY rule_id"),
        exclusions=db.query("SELECT * FROM adp_exclusion ORDER BY exclusion_id"),
        cep={r["household"]: r for r in db.query("SELECT * FROM adp_cep_threshold")},
        sections=db.query(
            "SELECT id, policy_uid, adp_doc, manual, section_ref, heading, page_num, topics, summary "
            "FROM adp_sections WHERE kind = 'policy' AND summary != '' ORDER BY id"
        ),
    )


def vector_query(p: Parsed) -> str:
    parts = [p.device_type.replace("_", " ") if p.device_type else "", p.text]
    parts += [k.replace("_", " ") for k in p.flags]
    return " ".join(x for x in parts if x)[:1000]


def vector_path(rt: Runtime, p: Parsed, want_cep: bool) -> list[VectorHit]:
    where = {"adp_doc": {"$in": [p.category, CORE]}} if p.category else None
    hits = rt.vectors.search(COLLECTION, vector_query(p), n_results=8, where=where)
    if want_cep:
        hits += rt.vectors.get(COLLECTION, [ADP_CEP_ID])
    return hits


def _rows_from_hits(hits: list[VectorHit], doc_type: str) -> list[dict[str, Any]]:
    """Vector chunk metadata in the SQL row shape, for answers when the SQL path is down."""
    rows = []
    for h in hits:
        m = h.metadata
        if m.get("doc_type") == doc_type:
            rows.append(
                {**m, "id": h.id, "section_ref": m.get("section"), "page_num": m.get("page")}
            )
    return rows


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
    funding_rows = sql.funding if sql else _rows_from_hits(passages, "funding_rule")
    excl_rows = sql.exclusions if sql else _rows_from_hits(passages, "exclusion")
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
        requirement_sections=[s for s in cat_sections if _REQUIREMENT_HEADING.search(s["heading"])][
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
    for m in _pick_funding(_rows_from_hits(passages, "funding_rule"), p):
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
        sql=lambda: sql_path(rt),
        vector=lambda: vector_path(rt, p, want_cep),
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
