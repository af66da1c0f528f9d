"""What an ODB question asks for in words: the checks odb.get answers beyond those requested,
and the words coverage.answer reads to tell a question about coverage or criteria."""

from __future__ import annotations

from typing import Literal

Check = Literal[
    "coverage",
    "interchangeable",
    "lowest_cost",
    "lu_criteria",
    "alternatives",
    "interchangeable_group",
    "price_comparison",
    "all_strengths",
]
# What a free-text question asks for, beyond the requested `check` list.
INTENTS: dict[Check, str] = {
    "lowest_cost": r"cheap|lowest[- ]cost|least expensive|inexpensive|lowest price",
    "interchangeable": r"generic|interchangeab|substitut|biosimilar",
    "lu_criteria": r"limited use|\blu\b|criteria|special authori|prior auth",
    "alternatives": r"alternative|instead of|other option|switch",
    "price_comparison": r"\bsav(e|es|ing|ings)\b|price|how much|compare",
    "coverage": r"\bcover(ed|age)?\b|\bbenefit\b|formulary|\bfunded\b|\bpays?\b",
    "all_strengths": r"strengths|all doses|brands|brand names?|biosimilar|versions",
}
