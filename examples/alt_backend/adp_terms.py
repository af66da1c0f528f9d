"""What an ``adp.get`` question says: the device and its category, the things a manual may
refuse to fund, an annual income and whether the client lives alone or with a family.
"""

from __future__ import annotations

import re

from examples.alt_backend.text import terms, words

# Words that name no device (a question made only of these has no category to infer).
GENERIC_TERMS = frozenset(
    terms(
        "adp assistive devices device program fund funding funded cover covered coverage pay pays "
        "paid client patient cost costs what does get need needs help grant eligible eligibility"
    )
)

# Device words -> (device in words, category). Longest phrases are tried first.
DEVICES: tuple[tuple[str, str, str], ...] = (
    ("power wheelchair", "power wheelchair", "mobility"),
    ("power chair", "power wheelchair", "mobility"),
    ("electric wheelchair", "power wheelchair", "mobility"),
    ("manual wheelchair", "manual wheelchair", "mobility"),
    ("wheelchair", "wheelchair", "mobility"),
    ("power scooter", "power scooter", "mobility"),
    ("mobility scooter", "power scooter", "mobility"),
    ("scooter", "power scooter", "mobility"),
    ("rollator", "walker", "mobility"),
    ("walker", "walker", "mobility"),
    ("crutch", "crutches", "mobility"),
    ("standing frame", "standing frame", "mobility"),
    ("seating", "seating / positioning device", "mobility"),
    ("power add-on", "power add-on device", "mobility"),
    ("speech generating device", "speech generating device", "comm_aids"),
    ("speech-generating device", "speech generating device", "comm_aids"),
    ("sgd", "speech generating device", "comm_aids"),
    ("voca", "speech generating device", "comm_aids"),
    ("communication device", "communication aid", "comm_aids"),
    ("communication aid", "communication aid", "comm_aids"),
    ("speaking valve", "voice restoration / speaking valve", "comm_aids"),
    ("voice restoration", "voice restoration / speaking valve", "comm_aids"),
    ("electrolarynx", "electrolarynx", "comm_aids"),
    ("voice amplifier", "voice amplifier", "comm_aids"),
    ("hearing aid", "hearing aid", "hearing_devices"),
    ("fm system", "FM system", "hearing_devices"),
    ("cochlear", "cochlear implant speech processor", "hearing_devices"),
    ("baha", "bone anchored hearing aid", "hearing_devices"),
    ("magnifier", "magnifier", "visual_aids"),
    ("cctv", "closed-circuit television reader", "visual_aids"),
    ("low vision", "visual aid", "visual_aids"),
    ("cpap", "CPAP machine", "respiratory"),
    ("bipap", "BiPAP machine", "respiratory"),
    ("ventilator", "ventilator", "respiratory"),
    ("oxygen", "home oxygen", "respiratory"),
    ("insulin pump", "insulin pump", "insulin_pump"),
    ("continuous glucose monitor", "continuous glucose monitor", "glucose_monitoring"),
    ("glucose monitor", "continuous glucose monitor", "glucose_monitoring"),
    ("cgm", "continuous glucose monitor", "glucose_monitoring"),
    ("breast prosthesis", "breast prosthesis", "grants"),
    ("breast prostheses", "breast prosthesis", "grants"),
    ("ostomy", "ostomy supplies", "grants"),
    ("artificial limb", "limb prosthesis", "prosthesis"),
    ("prosthetic leg", "limb prosthesis", "prosthesis"),
    ("prosthetic arm", "limb prosthesis", "prosthesis"),
    ("artificial eye", "ocular prosthesis", "prosthesis"),
    ("ocular prosthesis", "ocular prosthesis", "prosthesis"),
    ("facial prosthesis", "facial prosthesis", "maxillofacial"),
    ("compression garment", "compression garment", "core_manual"),
    ("lymphedema", "compression garment", "core_manual"),
    ("orthosis", "orthosis", "core_manual"),
    ("brace", "orthosis", "core_manual"),
)

# Things a question can ask about that a manual may refuse: label, question words, text words.
CONCERNS: tuple[tuple[str, str, str, str], ...] = (
    ("batteries", "Batteries", r"batter", r"batter"),
    ("repairs", "Repairs and maintenance", r"repair|maintenance|fix", r"repair"),
    (
        "transport",
        "Use only outdoors or as a substitute for a car or other transport",
        r"car substitute|substitute for a car|instead of a car|outdoors? only|only (?:for )?outdoors?|outdoor use|replace (?:a|the|her|his) car",
        r"alternative means of transportation|substitution for car|replacement for a car",
    ),
    (
        "single_purpose",
        "Use solely for school, work, recreation or sport",
        r"only for (?:school|work|sports?|recreation)|just for (?:school|work|sports?)",
        r"school|recreation|sports",
    ),
    (
        "backup",
        "Backup, spare or duplicate devices",
        r"backup|back-up|spare|second (?:chair|device)",
        r"backup|spare|duplicate",
    ),
)


def find_device(text: str) -> tuple[str | None, str | None]:
    low = " ".join(words(text.replace("-", " ")))
    for phrase, device, category in sorted(DEVICES, key=lambda d: -len(d[0])):
        p = " ".join(words(phrase.replace("-", " ")))
        if re.search(rf"\b{re.escape(p)}s?\b", low):
            return device, category
    return None, None


def find_income(text: str) -> tuple[float | None, str | None]:
    """An annual income stated in words around a dollar amount ('income $19,000', 'earns
    $26,000 a year', 'family income $30k'); a price ('a $2,400 wheelchair') is not one."""
    amount = r"\$?\s?(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)?"
    patterns = (
        rf"(?:income|earns?|earning|makes|salary|pension)[^$\d]{{0,25}}{amount}",
        rf"{amount}\s*(?:a|per|/)\s*(?:year|yr|annum)",
        rf"{amount}\s*(?:annual|yearly)\s*income",
    )
    for pat in patterns:
        m = re.search(pat, text, re.IGNORECASE)
        if m:
            value = float(m.group(1).replace(",", ""))
            if m.group(2):
                value *= 1000
            return value, m.group(0).strip()
    return None, None


def find_household(text: str) -> tuple[str, bool]:
    """('family' | 'single', stated?)."""
    if re.search(
        r"\b(family|household of [2-9]|spouse|married|couple|children|kids|dependants?)\b",
        text,
        re.I,
    ):
        return "family", True
    if re.search(r"\b(lives alone|living alone|single|on (?:her|his|their) own)\b", text, re.I):
        return "single", True
    return "single", False
