"""What an ``odb.get`` question says besides a drug's name: a drug class, a dosage form, a
strength or the condition it asks about, read tolerantly from the words a prescriber uses.

Also the matching rules between those words and the formulary's own abbreviations
(``TAB ER``, ``50mg & 1000mg``), and the token form every name is compared in.
"""

from __future__ import annotations

import re

# Drug classes by ingredient (a small hand-made table; the formulary itself only has broad
# therapeutic categories). Key -> (label in words, words that name it, ingredients).
CLASSES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "statin": (
        "statin (HMG-CoA reductase inhibitor)",
        ("statin", "statins", "hmg coa reductase inhibitor"),
        ("ATORVASTATIN", "FLUVASTATIN", "LOVASTATIN", "PRAVASTATIN", "ROSUVASTATIN", "SIMVASTATIN"),
    ),
    "ppi": (
        "proton pump inhibitor (PPI)",
        ("ppi", "ppis", "proton pump inhibitor", "proton pump inhibitors"),
        (
            "OMEPRAZOLE",
            "ESOMEPRAZOLE",
            "LANSOPRAZOLE",
            "DEXLANSOPRAZOLE",
            "PANTOPRAZOLE",
            "RABEPRAZOLE",
        ),
    ),
    "sglt2": (
        "SGLT2 inhibitor",
        ("sglt2 inhibitor", "sglt2 inhibitors", "sglt2", "sglt 2 inhibitor", "gliflozin"),
        ("CANAGLIFLOZIN", "DAPAGLIFLOZIN", "EMPAGLIFLOZIN", "ERTUGLIFLOZIN"),
    ),
    "glp1": (
        "GLP-1 receptor agonist",
        ("glp 1 agonist", "glp 1 receptor agonist", "glp 1", "glp1", "glp 1 ra"),
        ("SEMAGLUTIDE", "LIRAGLUTIDE", "DULAGLUTIDE", "EXENATIDE", "LIXISENATIDE", "TIRZEPATIDE"),
    ),
    "dpp4": (
        "DPP-4 inhibitor",
        ("dpp 4 inhibitor", "dpp4 inhibitor", "dpp 4", "gliptin"),
        ("SITAGLIPTIN", "SAXAGLIPTIN", "LINAGLIPTIN", "ALOGLIPTIN"),
    ),
    "acei": (
        "ACE inhibitor",
        ("ace inhibitor", "ace inhibitors", "acei"),
        (
            "BENAZEPRIL",
            "CAPTOPRIL",
            "CILAZAPRIL",
            "ENALAPRIL",
            "FOSINOPRIL",
            "LISINOPRIL",
            "PERINDOPRIL",
            "QUINAPRIL",
            "RAMIPRIL",
            "TRANDOLAPRIL",
        ),
    ),
    "arb": (
        "angiotensin II receptor blocker (ARB)",
        ("arb", "arbs", "angiotensin receptor blocker", "sartan"),
        (
            "AZILSARTAN",
            "CANDESARTAN",
            "EPROSARTAN",
            "IRBESARTAN",
            "LOSARTAN",
            "OLMESARTAN",
            "TELMISARTAN",
            "VALSARTAN",
        ),
    ),
    "doac": (
        "direct oral anticoagulant (DOAC)",
        ("doac", "doacs", "direct oral anticoagulant", "noac"),
        ("APIXABAN", "RIVAROXABAN", "EDOXABAN", "DABIGATRAN"),
    ),
}

# The published form words (input enum) -> a test on the formulary's dosage-form tokens.
_EXTENDED = {"er", "sr", "cr", "la", "xl", "xr", "prolong", "mr"}
_DELAYED = {"dr", "ent", "enteric"}


def form_tokens(form: str | None) -> set[str]:
    return {t for t in re.split(r"[\s\-/,()]+", (form or "").lower()) if t}


def form_matches(asked: str, form: str | None) -> bool:
    t = form_tokens(form)
    tab, cap = bool(t & {"tab", "tabs"}), "cap" in t
    tests = {
        "extended-release tablets": tab and bool(t & _EXTENDED),
        "extended-release capsules": cap and bool(t & _EXTENDED),
        "delayed-release tablets": tab and bool(t & _DELAYED),
        "delayed-release capsules": cap and bool(t & _DELAYED),
        "chewable tablets": "chew" in t,
        "orally disintegrating tablets": bool(t & {"disintegrating", "odt", "dissolve"}),
        "sublingual tablets": "sl" in t,
        "extended-release": bool(t & _EXTENDED),
        "tablets": tab and not (t & _EXTENDED),
        "capsules": cap and not (t & _EXTENDED),
        "eye drops": "oph" in t,
        "ear drops": bool(t & {"ot", "otic"}),
        "nasal spray": "nas" in t,
        "inhaler": "inh" in t,
        "ointment": "oint" in t,
        "cream": "cr" in t and not (tab or cap),
        "lotion": "lot" in t,
        "gel": "gel" in t,
        "topical solution": "top" in t and "sol" in t,
        "oral liquid": ("o" in t and "l" in t) or "liq" in t,
        "oral solution": "oral" in t and "sol" in t,
        "suspension": "susp" in t,
        "injection": "inj" in t,
        "patch": bool(t & {"patch", "trans", "transdermal"}),
        "suppositories": "sup" in t,
        "film": bool(t & {"film", "strip"}),
    }
    return tests.get(asked, False)


# Words in a question that name a form, longest first (mapped to the published form words).
_FORM_WORDS: tuple[tuple[str, str], ...] = (
    ("extended release tablets", "extended-release tablets"),
    ("extended release tablet", "extended-release tablets"),
    ("extended release capsules", "extended-release capsules"),
    ("delayed release tablets", "delayed-release tablets"),
    ("delayed release capsules", "delayed-release capsules"),
    ("orally disintegrating tablets", "orally disintegrating tablets"),
    ("chewable tablets", "chewable tablets"),
    ("sublingual tablets", "sublingual tablets"),
    ("topical solution", "topical solution"),
    ("oral solution", "oral solution"),
    ("oral liquid", "oral liquid"),
    ("eye drops", "eye drops"),
    ("ear drops", "ear drops"),
    ("nasal spray", "nasal spray"),
    ("extended release", "extended-release"),
    ("ointment", "ointment"),
    ("cream", "cream"),
    ("lotion", "lotion"),
    ("suspension", "suspension"),
    ("injection", "injection"),
    ("inhaler", "inhaler"),
    ("patch", "patch"),
    ("suppositories", "suppositories"),
    ("suppository", "suppositories"),
    ("capsules", "capsules"),
    ("capsule", "capsules"),
    ("tablets", "tablets"),
    ("tablet", "tablets"),
)

_UNIT = r"(?:mg|mcg|µg|g|%|units?|u|iu|ml|meq|mmol)"
_STRENGTH_EXPR = re.compile(
    rf"(?<![\w.])\d+(?:\.\d+)?\s*{_UNIT}?(?:\s*(?:&|/|and)\s*\d+(?:\.\d+)?\s*{_UNIT}?)*",
    re.IGNORECASE,
)
_PART = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNIT})?", re.IGNORECASE)


def strength_parts(text: str) -> list[tuple[float, str | None]]:
    """'50mg & 1000mg' -> [(50, 'mg'), (1000, 'mg')]; '5/160 mg' -> [(5, 'mg'), (160, 'mg')];
    '50 units' -> [(50, 'u')]. A number after a '/' with no number-free unit before it is a
    further part ('200mg/5mL' -> [(200, 'mg'), (5, 'ml')]); '/mL' alone is dropped."""
    parts: list[tuple[float, str | None]] = []
    for m in _PART.finditer(text):
        unit = (m.group(2) or "").lower() or None
        if unit in {"unit", "units", "iu"}:
            unit = "u"
        if unit == "µg":
            unit = "mcg"
        parts.append((float(m.group(1)), unit))
    # a part without a unit takes the unit of the next part that has one ('5/160 mg')
    filled: list[tuple[float, str | None]] = []
    for i, (num, unit) in enumerate(parts):
        if unit is None:
            unit = next((u for _, u in parts[i + 1 :] if u), None)
        filled.append((num, unit))
    return filled


def strength_matches(asked: str, listed: str | None) -> bool:
    want = strength_parts(asked)
    have = strength_parts(listed or "")
    if not want or len(have) < len(want):
        return False
    for (wn, wu), (hn, hu) in zip(want, have, strict=False):
        if abs(wn - hn) > 1e-9:
            return False
        if wu and hu and wu != hu:
            return False
    return True


def find_strength(text: str) -> str | None:
    """The first strength written in a question ('Januvia 100 mg' -> '100 mg')."""
    for m in _STRENGTH_EXPR.finditer(text):
        expr = m.group(0).strip()
        if re.search(_UNIT + r"\b|%", expr, re.IGNORECASE):
            return expr
    return None


def norm_tokens(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9]+", text.lower().replace("&", " and ")))


def find_class(text: str) -> str | None:
    tokens = " ".join(norm_tokens(text))
    for key, (_, aliases, _) in CLASSES.items():
        for alias in sorted(aliases, key=len, reverse=True):
            if re.search(rf"\b{re.escape(alias)}\b", tokens):
                return key
    return None


def find_form(text: str) -> str | None:
    joined = " ".join(norm_tokens(text))
    for words, form in _FORM_WORDS:
        if re.search(rf"\b{words}\b", joined):
            return form
    return None


def condition_in(q: str | None) -> str | None:
    """'Is Ozempic covered for diabetes?' -> 'diabetes' (the words after 'for', up to '?')."""
    if not q:
        return None
    m = re.search(r"\bcovered for (?:an? |the )?([a-z][a-z0-9 \-']{2,40}?)\s*(?:[?.,;]|$)", q, re.I)
    return m.group(1).strip() if m else None
