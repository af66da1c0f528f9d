"""ODB cases on brand/generic swaps: each interchangeable group with an originator brand, asked by
the brand for a generic (a covered generic of the group answers) and by the generic for brands
(the originator answers). Groups and brands come from the corpus rows (odb_drugs.csv: group_id,
brand_name, ingredient), never from odb.get.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.odb import (
    _choice,
    _product_check,
    _source,
    normal_strength,
)
from evals.derive.families.odb_paraphrase import (
    SEED,
    TOOL,
    Listed,
    _question,
    _spaced,
    listed,
)
from evals.derive.registry import family
from evals.run.scenario import Scenario

TO_GENERIC = (
    "Is there a generic {brand} {strength} covered by ODB?",
    "{brand} {strength} - is a generic on the formulary?",
    "cheaper generic for {brand} {strength} under ODB?",
)
TO_BRAND = (
    "Which brands of {generic} {strength} does ODB list?",
    "{generic} {strength}: brand names on the ODB formulary?",
)


def _is_generic_brand(brand: str, ingredient: str) -> bool:
    """A generic's brand spells the ingredient ('Apo-Atorvastatin'); an originator's does not."""
    words = [w for w in re.findall(r"[a-z]{4,}", ingredient)]
    return any(w in brand.casefold() for w in words)


def swap_groups(corpus: Corpus) -> list[tuple[str, list[Listed], list[Listed]]]:
    """Interchangeable groups with an originator brand and a covered generic: (group id,
    originator products, generic products). A brand also listed at that strength in another
    group (a chewable beside a capsule) is left out: its name and strength name two products."""
    groups: dict[str, list[Listed]] = defaultdict(list)
    by_brand: dict[tuple[str, str], list[Listed]] = defaultdict(list)
    for item in listed(corpus):
        if item.group_id and item.product.strength:
            groups[item.group_id].append(item)
            key = (item.product.brand.casefold(), normal_strength(item.product.strength))
            by_brand[key].append(item)
    out = []
    for group_id, members in sorted(groups.items()):
        originals = [m for m in members if not _is_generic_brand(m.product.brand, m.ingredient)]
        generics = [m for m in members if _is_generic_brand(m.product.brand, m.ingredient)]
        if not originals or not any(g.product.covered for g in generics):
            continue
        first = sorted(originals, key=lambda m: m.product.din)[0].product
        elsewhere = [
            b
            for b in by_brand[(first.brand.casefold(), normal_strength(first.strength))]
            if b.group_id != group_id
        ]
        if not elsewhere:  # the brand at that strength is this group's product, not another's
            out.append((group_id, originals, generics))
    return out


def brand_ingredient(originals: list[Listed]) -> str:
    return sorted(originals, key=lambda m: m.product.din)[0].ingredient


def _din_pattern(items: list[Listed]) -> str:
    return "^(" + "|".join(sorted(i.product.din for i in items)) + ")$"


@family("odb.brand_generic_swap", tool=TOOL)
def brand_generic_swaps(corpus: Corpus) -> Iterator[Scenario]:
    """Each interchangeable group with an originator brand: asked by the brand for a generic,
    the answer lists a covered generic of the group; asked by the generic for brands, the
    answer lists the originator."""
    listed_by_ingredient: dict[str, list[Listed]] = defaultdict(list)
    for item in listed(corpus):
        listed_by_ingredient[item.ingredient].append(item)
    for group_id, originals, generics in swap_groups(corpus):
        members = originals + generics
        brand = sorted(originals, key=lambda m: m.product.din)[0].product
        strength = _spaced(brand.strength)
        covered = [g for g in generics if g.product.covered]
        template = TO_GENERIC[_choice(f"{SEED}:{group_id}", len(TO_GENERIC))]
        q = _question(template, brand=brand.brand, strength=strength)
        yield derived_case(
            "odb.brand_generic_swap",
            f"{group_id}-to-generic",
            tool=TOOL,
            args={"q": q},
            expect=[
                _product_check([m.product for m in members]),
                {
                    "check": "any_item",
                    "path": "interchangeable",
                    "item": {"check": "matches", "path": "din", "pattern": _din_pattern(covered)},
                },
            ],
            title=f"'{q}' lists a covered generic of group {group_id}",
            source=_source(
                [m.product for m in members],
                f"group_id {group_id}: originator {brand.brand!r}, covered generics "
                f"{', '.join(sorted({g.product.brand for g in covered}))}",
            ),
        )
        generic = brand.generic.lower()
        same = [
            i.product
            for i in listed_by_ingredient[brand_ingredient(originals)]
            if normal_strength(i.product.strength) == normal_strength(brand.strength)
        ]
        template = TO_BRAND[_choice(f"{SEED}:{group_id}:b", len(TO_BRAND))]
        q = _question(template, generic=generic, strength=strength)
        yield derived_case(
            "odb.brand_generic_swap",
            f"{group_id}-to-brand",
            tool=TOOL,
            args={"q": q},
            expect=[
                _product_check(
                    list({p.din: p for p in same + [m.product for m in members]}.values())
                ),
                {
                    "check": "any_item",
                    "path": "brands",
                    "item": {"check": "matches", "path": "din", "pattern": _din_pattern(originals)},
                },
            ],
            title=f"'{q}' lists the originator {brand.brand} of group {group_id}",
            source=_source(
                [m.product for m in members],
                f"group_id {group_id}: generic name {brand.generic!r}, originator "
                f"{', '.join(sorted({o.product.brand for o in originals}))}",
            ),
        )
