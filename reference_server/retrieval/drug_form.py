"""Dosage forms in a prescriber's words, matched to the formulary's dosage-form codes.

The extract writes 'Tab', 'ER Cap', 'Oint', 'Cr', 'Oph Sol-5mL Pk', 'O/L', 'Inj Sol-Pref Syr',
'Trans Patch'; a question says 'tablets', 'extended-release capsules', 'ointment', 'cream', 'eye
drops', 'oral liquid', 'injection', 'patch'. Both become a `Kind`; a word asks for its own kinds
first and for related ones only when none is listed ('tablets' -> Tab, then ER or chewable Tab).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

Kind = Literal[
    "tablet",
    "er_tablet",
    "dr_tablet",
    "chewable_tablet",
    "odt",
    "sublingual",
    "capsule",
    "er_capsule",
    "dr_capsule",
    "ointment",
    "cream",
    "lotion",
    "gel",
    "topical_solution",
    "eye",
    "ear",
    "nasal",
    "inhaler",
    "injection",
    "patch",
    "suppository",
    "oral_liquid",
    "oral_solution",
    "suspension",
    "film",
]
_ER = {"er", "sr", "la", "cr", "xr", "xl", "prolong", "mr", "rel"}
_DR = {"dr", "ent", "enteric", "del"}
_TABLETS: tuple[Kind, ...] = (
    "tablet",
    "er_tablet",
    "dr_tablet",
    "chewable_tablet",
    "odt",
    "sublingual",
)
_CAPSULES: tuple[Kind, ...] = ("capsule", "er_capsule", "dr_capsule")
_LIQUIDS: tuple[Kind, ...] = ("oral_liquid", "oral_solution", "suspension")


def kind_of(code: str | None) -> Kind | None:
    """The kind of a formulary dosage-form code ('ER Tab' -> er_tablet); None if unknown."""
    words = re.findall(r"[a-z]+", (code or "").lower())
    w = set(words)
    first = words[0] if words else ""
    if "oph" in w or "ophthalmic" in w:
        return "eye"
    if "otic" in w or "ot" in w:
        return "ear"
    if "nas" in w or "nasal" in w:
        return "nasal"
    if w & {"inh", "inhaler", "inhalation"}:
        return "inhaler"
    if w & {"inj", "injection", "syr", "autoinj", "depot", "intravitreal", "vial", "amp"}:
        return "injection"
    if "patch" in w:
        return "patch"
    if "sup" in w or "suppository" in w:
        return "suppository"
    if w & {"tab", "tabs", "tablet", "caplet"}:
        if w & _ER:
            return "er_tablet"
        if "chew" in w:
            return "chewable_tablet"
        if w & {"orally", "disintegrating", "rapid", "odt"}:
            return "odt"
        if "sl" in w:
            return "sublingual"
        if w & _DR:
            return "dr_tablet"
        return "tablet"
    if w & {"cap", "caps"}:
        if w & _ER:
            return "er_capsule"
        if w & _DR:
            return "dr_capsule"
        return "capsule"
    if "oint" in w:
        return "ointment"
    if w & {"cr", "cream"}:
        return "cream"
    if "lot" in w or "lotion" in w:
        return "lotion"
    if "gel" in w:
        return "gel"
    if first == "o" and "l" in w:  # O/L
        return "oral_liquid"
    if first == "oral" and "sol" in w:
        return "oral_solution"
    if "susp" in w:
        return "suspension"
    if first in {"liq", "oral", "syrup"}:
        return "oral_liquid"
    if "top" in w and "sol" in w:
        return "topical_solution"
    if w & {"strip", "film"}:
        return "film"
    return None


@dataclass(frozen=True)
class FormWord:
    """A form as a question writes it: the kinds it asks for, best first."""

    word: str  # a `Word`, or the formulary code given as the form
    tiers: tuple[tuple[Kind, ...], ...]


# The words a request may name a form by (published in odb.get's `form` enum, in this order).
Word = Literal[
    "extended-release tablets",
    "extended-release capsules",
    "delayed-release tablets",
    "delayed-release capsules",
    "chewable tablets",
    "orally disintegrating tablets",
    "sublingual tablets",
    "extended-release",
    "tablets",
    "capsules",
    "eye drops",
    "ear drops",
    "nasal spray",
    "inhaler",
    "ointment",
    "cream",
    "lotion",
    "gel",
    "topical solution",
    "oral liquid",
    "oral solution",
    "suspension",
    "injection",
    "patch",
    "suppositories",
    "film",
]

_RELEASE = r"(?:extended|sustained|slow|controlled|prolonged|modified)[- ]release|long[- ]acting"
# (pattern, canonical words, tiers); earlier patterns win where two overlap ('ER tablets').
WORDS: tuple[tuple[str, Word, tuple[tuple[Kind, ...], ...]], ...] = (
    (
        rf"(?:{_RELEASE}|\b(?:er|xr|xl|sr|cr|la)\b) ?tab(?:let)?s?",
        "extended-release tablets",
        (("er_tablet",),),
    ),
    (
        rf"(?:{_RELEASE}|\b(?:er|xr|xl|sr|cr|la)\b) ?cap(?:sule)?s?",
        "extended-release capsules",
        (("er_capsule",),),
    ),
    (
        r"(?:delayed[- ]release|enteric[- ]coated) ?tab(?:let)?s?",
        "delayed-release tablets",
        (("dr_tablet",),),
    ),
    (
        r"(?:delayed[- ]release|enteric[- ]coated) ?cap(?:sule)?s?",
        "delayed-release capsules",
        (("dr_capsule",),),
    ),
    (r"chewable(?: tab(?:let)?s?)?", "chewable tablets", (("chewable_tablet",),)),
    (
        r"orally disintegrating(?: tab(?:let)?s?)?|\bodt\b|rapid[- ]dissolv\w*(?: tab(?:let)?s?)?",
        "orally disintegrating tablets",
        (("odt",),),
    ),
    (r"sublingual(?: tab(?:let)?s?)?", "sublingual tablets", (("sublingual",),)),
    (_RELEASE, "extended-release", (("er_tablet", "er_capsule"),)),
    (r"tablets?|tabs|caplets?", "tablets", (("tablet",), _TABLETS)),
    (r"capsules?", "capsules", (("capsule",), _CAPSULES)),
    (
        r"eye drops?|ophthalmic(?: solution| drops| suspension)?|eye ointment",
        "eye drops",
        (("eye",),),
    ),
    (r"ear drops?|otic(?: solution| drops| suspension)?", "ear drops", (("ear",),)),
    (r"nasal spray|nose spray", "nasal spray", (("nasal",),)),
    (r"inhalers?|puffers?|inhalation", "inhaler", (("inhaler",),)),
    (r"ointments?", "ointment", (("ointment",),)),
    (r"creams?", "cream", (("cream",),)),
    (r"lotions?", "lotion", (("lotion",),)),
    (r"gels?", "gel", (("gel",),)),
    (r"topical solution", "topical solution", (("topical_solution",),)),
    (r"oral liquid|liquid|syrup|elixir", "oral liquid", (("oral_liquid",), _LIQUIDS)),
    (r"oral solution|solution for oral use", "oral solution", (("oral_solution",), _LIQUIDS)),
    (r"(?:oral )?suspension", "suspension", (("suspension",), _LIQUIDS)),
    (
        r"injections?|injectables?|vials?|pre-?filled syringes?|syringes?|auto-?injectors?",
        "injection",
        (("injection",),),
    ),
    (r"(?:transdermal )?patch(?:es)?", "patch", (("patch",),)),
    (r"suppositor(?:y|ies)", "suppositories", (("suppository",),)),
    (r"(?:oral |soluble )?films?|strips?", "film", (("film",),)),
)
_PATTERNS = [(re.compile(rf"(?<![\w-])(?:{p})(?![\w-])", re.I), word, t) for p, word, t in WORDS]
BY_WORD: dict[str, FormWord] = {word: FormWord(word, tiers) for _, word, tiers in WORDS}
FORM_WORDS: tuple[Word, ...] = get_args(Word)


@dataclass(frozen=True)
class FormMention:
    form: FormWord
    start: int
    end: int


def find(text: str | None) -> FormMention | None:
    """The first dosage form a question names (the earliest; the longest where two start
    together), or None."""
    best: FormMention | None = None
    for pattern, word, tiers in _PATTERNS:
        m = pattern.search(text or "")
        if m and (
            best is None
            or m.start() < best.start
            or (m.start() == best.start and m.end() > best.end)
        ):
            best = FormMention(FormWord(word, tiers), m.start(), m.end())
    return best


def form_word(text: str | None) -> FormWord | None:
    """A form given on its own ('tablets', 'eye drops', or a formulary code such as 'Oph Sol')."""
    if not text:
        return None
    if text.strip().lower() in BY_WORD:
        return BY_WORD[text.strip().lower()]
    mention = find(text)
    if mention:
        return mention.form
    kind = kind_of(text)
    return FormWord(text.strip(), ((kind,),)) if kind else None


def matching(form: FormWord, codes: list[str | None]) -> list[int]:
    """Indexes of the codes of the best tier that has any (empty: the form is not listed)."""
    kinds = [kind_of(c) for c in codes]
    for tier in form.tiers:
        hits = [i for i, k in enumerate(kinds) if k in tier]
        if hits:
            return hits
    return []
