"""The words of OHIP schedule questions and descriptions: fee-code shape, billing words that say
nothing about a service, and the light stemmer both the store and the merge compare words with."""

from __future__ import annotations

import re

from reference_server.text import plural_stem

CODE_IN_TEXT = re.compile(r"\b([A-Za-z]{1,2}\d{3}[A-Za-z]?)\b")
GENERIC = frozenset(
    {"bill", "billing", "billed", "code", "codes", "fee", "fees", "ohip", "claim", "claims"}
    | {"use", "get", "many", "much", "apply", "valid"}
)


stem = plural_stem


# The extract's abbreviations and the words a clinician types for them, compared as one word.
ABBREVIATIONS: dict[str, str] = {
    "addl": "additional",
    "assmt": "assessment",
    "assmts": "assessment",
    "consult": "consultation",
    "hosp": "hospital",
    "incl": "including",
    "max": "maximum",
    "mo": "month",
    "proc": "procedure",
    "pt": "patient",
    "pts": "patient",
    "tx": "treatment",
    "yr": "year",
    "yrs": "year",
}
