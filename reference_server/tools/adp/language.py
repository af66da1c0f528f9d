"""How clinicians word ADP questions: devices, circumstances, income and household, read by rules.

adp.get turns a request (free text and/or structured fields) into a `Parsed` reading with
`read`: an alias table names the device, its ADP category and the words that find its manual
sections; further patterns flag exclusions (batteries, repairs, alternative transport, ...),
income, household size, social assistance, daily use, residency and prescription.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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
        r"\bsgds?\b|speech[- ]generat|speech (?:device|aid)|\bvocas?\b|\baac\b|augmentative",
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
        r"\b(c|bi|a)?pap\b|bi-?level|positive airway|(?:sleep )?apno?ea (?:machine|device)",
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
    (
        r"insulin pump|pump suppl|infusion set|omnipod|patch pump",
        "insulin_pump",
        "insulin_pump",
        ("insulin pump",),
    ),
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
        r"maxillofacial|facial prosthe|obturator|intraoral|extraoral|"
        r"(?:nasal|nose|ear|auricular) prosthe|prosthetic (?:nose|ear)",
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
        r"instead of driving|rather than driv|only for (?:outings|trips)|car[- ]substitut|substitut\w* for (a |the |his |her |their )?car|instead of (a |the )?"
        r"(car|taxi|bus)|replace (a |the |his |her |their )?car|outdoors?[- ]only|only (used )?"
        r"(outdoors|outside)|only for outdoor|intermittent|occasional"
    ),
    "education_work_recreation_only": r"(?:only|just|solely) (?:for|at|in) (?:school|work|class|"
    r"(?:his |her |their )?job|sports?|recreation|leisure)\b|"
    r"(school|work|sports?|recreation)[- ]only",
    "therapy_training_only": r"(therapy|exercise|training)[- ]only|(?:only|just|solely) (?:for|in|at|"
    r"during) (?:the )?(?:therapy|physio\w*|rehab\w*|exercise|training)",
    "backup_spare_duplicate": r"back-?up|spare|duplicate|second (device|chair|one)",
    "used_devices": r"second-?hand|refurbished|rebuilt|pre-?owned|\bused (device|chair|scooter|"
    r"wheelchair)|\b(?:a|an) used (?!to\b|for\b|only\b|just\b)\w",
    "bought_before_approval": r"already (bought|purchased)|(bought|purchased) before|"
    r"before (?:the |adp |adp's )?approv",
    "other_payer": r"\bwsib\b|veterans|workers'? comp",
    "unregistered_supplier": r"unregistered|not registered with (the )?adp|supplier (located )?outside "
    r"(of )?ontario|out[- ]of[- ]province (supplier|vendor|store)",
    "warranty_fees": r"extended warrant|service plans?|handling fees?",
    "cosmetic": r"\bcosmetic",
    "general_not_funded": r"non-?eligible items|ineligible items|items .{0,50}\bnot funded|"
    r"list of .{0,30}not funded",
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
# Income: an amount counts only where the question states it as income ("income of $28,000",
# "earns $30k", "makes $22,000 a year"); a price ("a $2,400 wheelchair", "costs $900") is not.
_AMOUNT = r"(\$\s?)?(\d[\d,]*(?:\.\d+)?)\s?(k\b|thousand\b)?"
_NOT_PRICE = r"(?:(?!cost|pric|quot|worth|pay|paid|charge)[^.;$\d])"
_INCOME_PATTERNS = [
    # "income of $28,000", "household income: 19k", "salary $40,000", "pension is $21,500"
    re.compile(
        rf"\b(?:income|salary|earnings|wages?|pension)\b{_NOT_PRICE}{{0,30}}?{_AMOUNT}", re.I
    ),
    # "earns $30,000", "makes about $22k", "brings in $1,800 a month" (the month is kept below)
    re.compile(
        r"\b(?:earns?|earning|makes?|making|made|brings? in|takes? home)\s+(?:about |around |"
        rf"roughly |approximately |only |just |under |over |less than |more than |~)?{_AMOUNT}",
        re.I,
    ),
    # "$22,000 a year", "19k per annum", "$25,000 annual income", "$30,000 annually"
    re.compile(
        rf"{_AMOUNT}\s*(?:/|a|per|each)\s*(?:year|yr|annum)\b|{_AMOUNT}\s+(?:annually|yearly|"
        r"(?:annual |yearly |household |family )?income)\b",
        re.I,
    ),
]
_PER_MONTH = re.compile(r"^\s*(?:/|a|per|each)\s*month\b", re.I)


def _amount(dollar: str | None, number: str, k: str | None) -> float:
    return float(number.replace(",", "")) * (1000 if k else 1)


def income_of(text: str) -> float | None:
    """The annual income the text states, or None: amounts not stated as income are prices.
    Bare numbers need a dollar sign, a 'k' or four digits, so '3 years' is never income."""
    for pattern in _INCOME_PATTERNS:
        for m in pattern.finditer(text):
            groups = [g for g in range(1, (m.lastindex or 0) + 1, 3) if m.group(g + 1)]
            if not groups:
                continue
            g = groups[0]
            dollar, number, k = m.group(g), m.group(g + 1), m.group(g + 2)
            if not (dollar or k or len(number.replace(",", "").split(".")[0]) >= 4):
                continue
            value = _amount(dollar, number, k)
            return value * 12 if _PER_MONTH.match(text[m.end() :]) else value
    return None


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
_LEASE = re.compile(r"\bleas(?:e|ed|es|ing)\b|\brent(?:al|ed|ing)?\b", re.I)
_DAILY = re.compile(r"\bdaily\b|every ?day|all day", re.I)
REQUIREMENT_HEADING = re.compile(r"requirement|eligib|functional status|criteria", re.I)


@dataclass(frozen=True)
class Parsed:
    """What an ADP request states, read once (the structured fields win over the text)."""

    text: str
    device_type: str | None = None
    category: str | None = None
    keywords: tuple[str, ...] = ()  # words that find the device's manual sections
    income: float | None = None
    household: str = "single"
    household_stated: bool = False
    flags: tuple[str, ...] = ()  # exclusion kinds the question triggers
    fast_track: bool = False
    social_assistance: bool | None = None  # None: the request does not say
    assistance_program: str | None = None  # ontario_works | odsp | acsd | social_assistance
    topics: tuple[str, ...] = ()  # descriptive-rule topics asked about
    lease: bool = False  # the question is about a leased device
    daily: bool | None = None
    resident: bool | None = None
    prescription: bool | None = None


# Ontario Works, ODSP and ACSD recipients: the manuals cover their co-payment (core 310.00, the
# categories' section 710). A negation just before the name ("not on ODSP") means the opposite.
ASSISTANCE_PROGRAMS: dict[str, re.Pattern[str]] = {
    "ontario_works": re.compile(r"\bontario works\b|(?-i:\bOW\b)|\bwelfare\b", re.I),
    "odsp": re.compile(r"\bodsp\b|\bontario disability support\b", re.I),
    "acsd": re.compile(r"\bacsd\b|\bassistance (?:to|for) children with severe disabilit", re.I),
    "social_assistance": re.compile(r"\bsocial assistance\b|\bincome support\b", re.I),
}
_NEGATION = re.compile(
    r"\b(?:not|no|isn'?t|aren'?t|never|neither|nor|without|doesn'?t|does not|no longer|"
    r"ineligible for)\b[^.;,]{0,25}$",
    re.I,
)


def assistance_of(text: str) -> tuple[bool | None, str | None]:
    """(on social assistance?, which program) as the text states it; (None, None) when silent."""
    negated: str | None = None
    for program, pattern in ASSISTANCE_PROGRAMS.items():
        for m in pattern.finditer(text):
            if _NEGATION.search(text[max(0, m.start() - 40) : m.start()]):
                negated = negated or program
                continue
            return True, program
    return (False, negated) if negated else (None, None)


# Questions about who does what (equipment pool, leases, suppliers, repairs, agreements): the
# words that ask about each descriptive-rule topic (adp_descriptive_rule.topic).
_POOL = r"(?:\bcep\b|equipment pool|\bpool\b)"
TOPIC_QUESTIONS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "pool_operator": rf"\bwho\b.{{0,40}}\b(?:operat|runs?\b|manag)|\b(?:operat\w*|run by|"
        rf"runs?)\b.{{0,40}}{_POOL}|{_POOL}.{{0,40}}\b(?:operat\w*|run by|runs?\b)",
        "pool_service_only": rf"\b(?:servic\w*|modif\w*)\b.{{0,60}}{_POOL}|{_POOL}.{{0,60}}"
        r"\b(?:servic\w*|modif\w*)",
        "pool_support": r"loaner|on-?call|emergency service|technical support|warranty repairs?|"
        r"prevent(?:a|i)t?ive maintenance|no cost to|free of charge",
        "pool_supply": r"recycled|discount|new or used|new and used",
        "pool_application": r"\b(?:tilt|recline)\b.{0,80}\b(?:apply|application|through|where)|"
        r"\b(?:apply|application)\b.{0,80}\b(?:tilt|recline)\b",
        "pool_lease": r"\bleas(?:e|ed|es|ing)\b.{0,80}\b(?:communication|aac|sgd|speech)|"
        r"\b(?:communication|aac|sgd|speech)\b.{0,80}\bleas|\bwho leases\b",
        "lease_order": rf"\border\w*\b.{{0,80}}(?:\blease|{_POOL})|(?:\blease\w*|{_POOL}).{{0,80}}"
        r"\border",
        "lease_order_fill": rf"\border\w*\b.{{0,80}}(?:\blease|{_POOL})|(?:\blease\w*|{_POOL})"
        r".{0,80}\border",
        "lease_fee_payment": r"(?:annual|yearly) (?:lease )?fee|lease fee|\bpay\w*\b.{0,40}\blease|"
        r"\blease\w*\b.{0,40}\bpay",
        "lease_fee_basis": r"\bfees?\b.{0,60}\b(?:based|calculat\w*|set|determin\w*|worked out)|"
        r"how (?:are|is) .{0,40}\bfees?\b",
        "lease_writing_aid": r"writing aid",
        "lease_preliminary": r"prelim|\b(?:start|begin)\w*\b.{0,30}\bleas|\bleas\w*\b.{0,60}"
        r"\b(?:start|begin)|first lease|new lease",
        "lease_reapplication": r"\$\s?500\b|\b500 dollars|new application|re-?appl",
        "lease_to_purchase": r"\bleas\w*\b.{0,60}\b(?:purchase|buy|own)|\b(?:convert|transform|"
        r"turn)\w*\b.{0,40}\b(?:purchase|buy)|\b(?:buy|purchase)\b.{0,60}\bleas(?:ed|ing)\b|"
        r"rent-?to-?own",
        "supplier_choice": r"\bsuppliers?\b|where (?:can|do|does|should)\b.{0,40}\b(?:buy|purchase)|"
        r"\bbuy\b.{0,20}\bfrom\b|\b(?:store|retailer)\b",
        "vendor_after_sale": r"\bvendors?\b.{0,60}\b(?:stock|warrant\w*|after-?sale|repairs?)|"
        r"after-?sale|manufacturer'?s? warrant",
        "repair_quotes": r"\bquot(?:e|es|ation|ations)\b",
        "service_agreements": r"service agreements?|\brepair\w*\b.{0,40}\b(?:premises|on[- ]site|"
        r"in-?house)|(?:premises|on[- ]site|in-?house)\b.{0,40}\brepair",
        "device_replacement": r"\breplac\w*\b(?!\s+batter)|irrepar|beyond repair|one third|"
        r"third of|\b1/3\b",
        "funding_period": r"funding period|good repair|how long .{0,40}\b(?:last|expected)",
        "invoice_over_approved_price": r"\binvoice|(?:costs?|price\w*)\b.{0,40}\b(?:more than|"
        r"above|exceed\w*|over)\b.{0,10}\bapproved",
        "valve_no_approved_price": r"approved price.{0,60}\b(?:valve|voice restoration)|"
        r"\b(?:valve|voice restoration)\b.{0,60}\bapproved price",
        "authorizer_qualifications": r"\bauthori[sz]ers?\b|who can (?:authori[sz]e|assess)|"
        r"\bcaslpo\b|\bcoto\b",
        "vendor_staffing": r"\bstaff(?:ing)?\b|\bemploy(?:s|ees?)?\b",
    }.items()
}


def read(
    text: str,
    *,
    category: str | None = None,
    income: float | None = None,
    daily: bool | None = None,
    location: str | None = None,
    assistance: str | None = None,
) -> Parsed:
    """Rule-based extraction (regex + alias table) from the request text and structured fields
    (a structured field wins over the text; `assistance` 'none' = not on social assistance)."""
    if assistance is not None:
        on: bool | None = assistance != "none"
        program = assistance if on else None
    else:
        on, program = assistance_of(text)
        program = program if on else None
    device_type: str | None = None
    device_category: str | None = None
    keywords: tuple[str, ...] = ()
    for pattern, dtype, cat, words in DEVICES:
        if re.search(pattern, text, re.I):
            device_type, device_category, keywords = dtype, cat, words
            break
    if category:
        if device_category != category:
            keywords = ()  # the alias belongs to another manual: its section words do not apply
        device_category = category
    household, household_stated = "single", False
    if _FAMILY.search(text):
        household, household_stated = "family", True
    elif _SINGLE.search(text):
        household_stated = True
    flags = [kind for kind, pattern in FLAGS.items() if re.search(pattern, text, re.I)]
    where = (location or "").lower()
    outdoor_only = "outdoor" in where and not re.search(r"home|indoor|entry", where)
    if (daily is False or outdoor_only) and "alternative_transport" not in flags:
        flags.append("alternative_transport")
    return Parsed(
        text=text,
        device_type=device_type,
        category=device_category,
        keywords=keywords,
        income=income if income is not None else income_of(text),
        household=household,
        household_stated=household_stated,
        flags=tuple(flags),
        fast_track=bool(FAST_TRACK.search(text)),
        social_assistance=on,
        assistance_program=program,
        topics=tuple(name for name, pattern in TOPIC_QUESTIONS.items() if pattern.search(text)),
        lease=bool(_LEASE.search(text)),
        daily=daily if daily is not None else (True if _DAILY.search(text) else None),
        resident=False
        if _NOT_RESIDENT.search(text)
        else (True if _RESIDENT.search(text) else None),
        prescription=False if _NO_RX.search(text) else (True if _RX.search(text) else None),
    )
