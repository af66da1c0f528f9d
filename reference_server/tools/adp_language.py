"""How clinicians word ADP questions: devices, circumstances, income and household, read by rules.

adp.get turns a request (free text and/or structured fields) into a `Parsed` reading with
`read`: an alias table names the device, its ADP category and the words that find its manual
sections; further patterns flag exclusions (batteries, repairs, alternative transport, ...),
income, household size, social assistance, daily use, residency and prescription.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reference_server.retrieval.adp_manuals import CORE

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
REQUIREMENT_HEADING = re.compile(r"requirement|eligib|functional status|criteria", re.I)


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


def read(
    text: str,
    *,
    category: str | None = None,
    income: float | None = None,
    daily: bool | None = None,
    location: str | None = None,
) -> Parsed:
    """Rule-based extraction (regex + alias table) from the request text and structured fields."""
    p = Parsed(text=text)
    p.social_assistance = bool(_SOCIAL_ASSISTANCE.search(text))
    for pattern, dtype, device_category, words in DEVICES:
        if re.search(pattern, text, re.I):
            p.device_type, p.category, p.keywords = dtype, device_category, words
            break
    if category:
        if p.category != category:
            p.keywords = ()  # the alias belongs to another manual: its section words do not apply
        p.category = category
    p.income = income if income is not None else _money(text)
    if _FAMILY.search(text):
        p.household, p.household_stated = "family", True
    elif _SINGLE.search(text):
        p.household_stated = True
    p.flags = [kind for kind, pattern in FLAGS.items() if re.search(pattern, text, re.I)]
    where = (location or "").lower()
    outdoor_only = "outdoor" in where and not re.search(r"home|indoor|entry", where)
    if (daily is False or outdoor_only) and "alternative_transport" not in p.flags:
        p.flags.append("alternative_transport")
    p.fast_track = bool(FAST_TRACK.search(text))
    p.daily = daily if daily is not None else (True if _DAILY.search(text) else None)
    p.resident = False if _NOT_RESIDENT.search(text) else (True if _RESIDENT.search(text) else None)
    p.prescription = False if _NO_RX.search(text) else (True if _RX.search(text) else None)
    return p
