"""The ranking's settings in one place, so the routing evaluation can compare variants on one
half of its cases and report the other half (`ocm routing-tune`).

Name expansion: a dotted name's prefix is often an acronym the tool's own title or description
spells out (`odb` -> "Ontario Drug Benefit"); the spelled-out words are added to the name, so
a tool whose name carries no words is still found by them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from tool_search.text import split_name

# The title is the tool's purpose in the author's words; a dotted name often carries none
# (`odb.get`), so the title weighs more than the name (chosen on the tuning half, 2026-11-27).
DEFAULT_FIELD_WEIGHTS = {
    "name": 2.0,
    "title": 3.0,
    "description": 1.0,
    "argument_names": 1.5,
    "argument_descriptions": 0.6,
}
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class RankingConfig:
    """Defaults: the variant chosen on the tuning half of the routing cases (2026-11-27,
    docs/tool-search.md), which ranks the right tool first more often at 1,000+ tools."""

    rrf_k: int = 5
    # weight of the semantic ranking's RRF term (the keyword ranking's is 1)
    semantic_weight: float = 1.5
    field_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS))
    expand_names: bool = True
    # "max": a tool's similarity is its best view; "max+whole": plus half its whole view's
    semantic_pool: str = "max"
    # add a view of the title and the description's first sentence
    lead_view: bool = True

    def but(self, **changes: Any) -> RankingConfig:
        return replace(self, **changes)


def acronym_expansion(prefix: str, text: str) -> str:
    """The run of capitalised words in `text` whose initials spell `prefix` (case-insensitive),
    or '' when there is none: `odb` in "Ontario Drug Benefit (ODB) formulary" -> that phrase."""
    if len(prefix) < 2 or not prefix.isalpha():
        return ""
    tokens = _WORD.findall(text)  # adjacent words only: "Drug Benefit", not "Drug ... Benefit"
    n = len(prefix)
    for i in range(len(tokens) - n + 1):
        run = tokens[i : i + n]
        if all(t[0].isupper() and t[1:].islower() for t in run) and (
            "".join(t[0] for t in run).lower() == prefix.lower()
        ):
            return " ".join(run)
    return ""


def expanded_name(name: str, title: str, description: str) -> str:
    """The split name with each dotted or underscored prefix's spelled-out form appended."""
    parts = re.split(r"[./]", name)
    extra = [acronym_expansion(p, f"{title} {description}") for p in parts[:-1]]
    return " ".join([split_name(name), *(e for e in extra if e)])
