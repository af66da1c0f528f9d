"""ODB cases on misspelt drug names: every one-word brand and ingredient misspelt once, as
clinicians do (seeded rules, evals/derive/misspell.py), at one of its strengths. A misspelling that
spells another drug's name, or is as close to another drug as to the one meant, is no fair
question: it is skipped and counted (`misspelling_plan`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.odb import (
    Product,
    _choice,
    _covered_check,
    _product_check,
    _source,
    normal_strength,
)
from evals.derive.families.odb_paraphrase import (
    SEED,
    TOOL,
    Listed,
    _by,
    _pick_strength,
    _question,
    listed,
)
from evals.derive.misspell import misspell
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

ONE_WORD_BRAND = re.compile(r"[A-Za-z]{6,}")
ONE_WORD_GENERIC = re.compile(r"[a-z]{7,}")


@dataclass
class MisspellingPlan:
    """The misspelt names asked, and those skipped with the reason."""

    asked: list[tuple[str, str, str, list[Product]]] = field(default_factory=list)
    # (kind, name, misspelt, expected products at one strength)
    skipped: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))


def corpus_words(items: list[Listed]) -> set[str]:
    """Every word of every brand, generic name and ingredient key (a misspelling that is one of
    them names another drug, or another salt)."""
    words: set[str] = set()
    for item in items:
        for text in (item.product.brand, item.product.generic, item.ingredient):
            words.update(w.casefold() for w in re.findall(r"[A-Za-z]{3,}", text))
    return words


def misspelling_plan(corpus: Corpus, seed: int = SEED) -> MisspellingPlan:
    """Every one-word brand and ingredient misspelt once; fair cases only."""
    items = listed(corpus)
    brands, ingredients = _by(items, "brand"), _by(items, "ingredient")
    generics = _by(items, "generic")
    # the ingredient key of every name: names of one ingredient answer the same products
    key_of: dict[str, set[str]] = defaultdict(set)
    for item in items:
        key_of[item.product.brand.casefold()].add(item.ingredient)
        key_of[item.ingredient.casefold()].add(item.ingredient)
    words = corpus_words(items)
    names = sorted(n for n in key_of if n)
    plan = MisspellingPlan()
    for kind, table, shape in (
        ("brand", brands, ONE_WORD_BRAND),
        ("ingredient", ingredients, ONE_WORD_GENERIC),
    ):
        for name, strengths in sorted(table.items()):
            first = next(iter(strengths.values()))[0]
            shown = first.brand if kind == "brand" else name
            if not shape.fullmatch(shown) or (kind == "brand" and name in ingredients):
                continue  # brands named by their generic are asked as the generic
            typed = misspell(shown, seed)
            if typed is None:
                plan.skipped["no rule applies"].append((shown, ""))
                continue
            text = typed.text.casefold()
            if text in words:
                plan.skipped["spells another name"].append((shown, typed.text))
                continue
            own = Levenshtein.distance(text, name)
            close = process.extract(
                text, names, scorer=Levenshtein.distance, score_cutoff=own, limit=None
            )
            rival = next((other for other, _, _ in close if not key_of[other] & key_of[name]), None)
            if rival is not None:
                plan.skipped["as close to another drug"].append((shown, f"{typed.text}~{rival}"))
                continue
            if kind == "ingredient" and name in generics:
                # products whose generic name is the name written answer it, not its salts'
                # ('hydrocortisone' 0.2% is not hydrocortisone valerate 0.2%)
                strengths = generics[name]
            plan.asked.append((kind, shown, typed.text, _pick_strength(name, strengths)))
    return plan


MISSPELT_QUESTIONS = (
    "Is {name} {strength} covered by ODB?",
    "{name} {strength} - ODB benefit?",
    "does odb cover {name} {strength}",
)


@family("odb.misspelling", tool=TOOL)
def misspellings(corpus: Corpus) -> Iterator[Scenario]:
    """Every one-word brand and ingredient, misspelt as clinicians do (seeded rules), at one of
    its strengths: the answer is that drug's product at that strength."""
    for kind, name, typed, group in misspelling_plan(corpus).asked:
        first = group[0]
        pick = _choice(f"{SEED}:{typed}", len(MISSPELT_QUESTIONS) + 1)
        if pick == len(MISSPELT_QUESTIONS):
            args: Arguments = {"drug": typed, "strength": first.strength}
        else:
            args = {"q": _question(MISSPELT_QUESTIONS[pick], name=typed, strength=first.strength)}
        yield derived_case(
            "odb.misspelling",
            f"{kind}-{name.casefold()}-{normal_strength(first.strength)}",
            tool=TOOL,
            args=args,
            expect=[_product_check(group), *_covered_check(group)],
            title=f"'{typed}' is {name} {first.strength}",
            source=_source(
                group,
                f"{'brand_name' if kind == 'brand' else 'ingredient'} {name!r}, strength "
                f"{first.strength!r}; asked misspelt as {typed!r} (evals/derive/misspell.py)",
            ),
        )
