"""ODB cases in clinicians' own words: looser questions and word orders, misspelt names, strengths
written in other units, and brand/generic swaps.

The plain ODB families ask in the words the formulary uses; these ask as a prescriber types.
Every expected product still comes from the corpus rows (odb_drugs.csv: brand_name,
generic_name, ingredient, strength, group_id), never from odb.get. A misspelling that spells
another drug's name, or is as close to another drug as to the one meant, is no fair question:
it is skipped and counted (`misspelling_plan`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.odb import (
    DRUGS,
    Product,
    _choice,
    _covered_check,
    _product_check,
    _source,
    normal_strength,
    products,
    strength_numbers,
)
from evals.derive.misspell import misspell
from evals.derive.registry import family
from evals.run.scenario import Scenario

SEED = 0
TOOL = "odb.get"
ONE_WORD_BRAND = re.compile(r"[A-Za-z]{6,}")
ONE_WORD_GENERIC = re.compile(r"[a-z]{7,}")


@dataclass(frozen=True)
class Listed:
    """A corpus product with the ingredient key and interchangeable group of its row."""

    product: Product
    ingredient: str
    group_id: str


def listed(corpus: Corpus) -> list[Listed]:
    return [
        Listed(p, row["ingredient"].strip(), row["group_id"].strip())
        for p, row in zip(products(corpus), corpus.rows(DRUGS), strict=True)
    ]


def _by(items: list[Listed], name_of: str) -> dict[str, dict[str, list[Product]]]:
    """name (case-folded) -> normalised strength -> products, for brands, generic names or
    ingredient keys."""
    out: dict[str, dict[str, list[Product]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        p = item.product
        name = {"brand": p.brand, "generic": p.generic, "ingredient": item.ingredient}[name_of]
        if name and p.strength:
            out[name.casefold()][normal_strength(p.strength)].append(p)
    return out


def _pick_strength(key: str, strengths: dict[str, list[Product]]) -> list[Product]:
    ordered = sorted(strengths)
    return strengths[ordered[_choice(key, len(ordered))]]


def _question(template: str, **parts: str) -> str:
    text = template.format(**parts)
    return re.sub(r"\s+", " ", text).strip()


# ------------------------------------------------------------------------------ misspellings
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
            args = {"drug": typed, "strength": first.strength}
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


# ------------------------------------------------------------------------------ strengths
MASS = re.compile(r"(\d+(?:\.\d+)?)(mg|mcg|g)")
PAIR = re.compile(r"(\d+(?:\.\d+)?)mg & (\d+(?:\.\d+)?)mg")
PER_ML = re.compile(r"(\d+(?:\.\d+)?)(mg|mcg)/(\d+(?:\.\d+)?)?mL")


def _number(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def rewrite_strength(strength: str) -> str | None:
    """The same strength as a prescriber may write it in other units or words: '0.5mg' ->
    '500 mcg', '125mcg' -> '0.125 mg', '1g' -> '1000 mg', '1500mg' -> '1.5 g', '5mg & 160mg'
    -> '5/160 mg', '250mg/5mL' -> '250 mg per 5 mL'. None when no such writing is usual."""
    text = strength.strip()
    if m := MASS.fullmatch(text):
        value, unit = Decimal(m.group(1)), m.group(2)
        if unit == "mg" and value < 1:
            return f"{_number(value * 1000)} mcg"
        if unit == "mg" and value >= 1000 and (value / 1000) * 100 % 1 == 0:
            return f"{_number(value / 1000)} g"
        if unit == "mcg":
            return f"{_number(value / 1000)} mg"
        if unit == "g":
            return f"{_number(value * 1000)} mg"
        return None
    if m := PAIR.fullmatch(text):
        return f"{m.group(1)}/{m.group(2)} mg"
    if m := PER_ML.fullmatch(text):
        volume = f"{m.group(3)} mL" if m.group(3) else "mL"
        return f"{m.group(1)} {m.group(2)} per {volume}"
    return None


def same_amounts(a: str, b: str) -> bool:
    """The family's own guard: both writings state the same amounts ('per' read as '/')."""
    return strength_numbers(a) == strength_numbers(re.sub(r"\s+per\s+", "/", b))


STRENGTH_QUESTIONS = (
    "Is {name} {strength} covered by ODB?",
    "ODB coverage for {name} {strength}?",
)


@family("odb.strength_format", tool=TOOL)
def strength_formats(corpus: Corpus) -> Iterator[Scenario]:
    """Every brand and generic name at a strength a prescriber may write in other units or
    words (0.5mg as 500 mcg, 1g as 1000 mg, 5mg & 160mg as 5/160 mg, per mL): that product."""
    items = listed(corpus)
    for kind, table in (("brand", _by(items, "brand")), ("generic", _by(items, "generic"))):
        for name_key, strengths in sorted(table.items()):
            for strength_key, group in sorted(strengths.items()):
                first = group[0]
                written = rewrite_strength(first.strength)
                if written is None or not same_amounts(first.strength, written):
                    continue
                name = first.brand if kind == "brand" else first.generic.lower()
                key = f"{kind}-{name_key}-{strength_key}"
                # the name's products stating the same amounts ('1g' and '1000mg') answer it
                amounts = strength_numbers(first.strength)
                group = [
                    p
                    for ps in strengths.values()
                    for p in ps
                    if strength_numbers(p.strength) == amounts
                ]
                pick = _choice(key, len(STRENGTH_QUESTIONS) + 1)
                if pick == len(STRENGTH_QUESTIONS):
                    args = {"drug": name, "strength": written}
                else:
                    q = _question(STRENGTH_QUESTIONS[pick], name=name, strength=written)
                    args = {"q": q}
                yield derived_case(
                    "odb.strength_format",
                    key,
                    tool=TOOL,
                    args=args,
                    expect=[_product_check(group), *_covered_check(group)],
                    title=f"{name} {written} is {name} {first.strength}",
                    source=_source(
                        group,
                        f"{kind} name {name!r}, strength {first.strength!r} asked as {written!r}",
                    ),
                )


# ------------------------------------------------------------------------------ paraphrases
# {name}: as the prescriber writes it; {strength}: as listed, '160 mg' spacing; {bare}: the
# number alone ('jardiance 25'), used only where one listed strength of the name has it.
WITH_STRENGTH = (
    "my pt is on {name} {strength} - does ODB pay for it?",
    "{strength} {name}: on the ODB formulary?",
    "does the ontario drug benefit pay for {lower} {strength}",
    "{upper} {strength} ODB?",
    "Senior on ODB needs {name} {strength}, covered or not?",
    "coverage check: {name}, {strength}",
)
WITHOUT_STRENGTH = ("is {name} covered for my patient", "{lower} - ODB benefit?")
BARE = "ODB coverage for {lower} {bare}"


def _spaced(strength: str) -> str:
    return re.sub(r"(?<=\d)(mg|mcg|g|mL|U)\b", r" \1", strength)


def bare_number(strength: str, strengths: dict[str, list[Product]]) -> str | None:
    """'25' for '25mg' when no other listed strength of the name has the number 25."""
    m = MASS.fullmatch(strength)
    if not m:
        return None
    number = m.group(1)
    holders = [s for s in strengths if re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.])", s)]
    return number if len(holders) == 1 else None


@family("odb.paraphrase", tool=TOOL)
def paraphrases(corpus: Corpus) -> Iterator[Scenario]:
    """Every brand and generic name asked as clinicians write: other word orders, lower or upper
    case, a bare number for the strength ('jardiance 25'), or no strength at all (then any of
    the name's products answers it)."""
    items = listed(corpus)
    for kind, table in (("brand", _by(items, "brand")), ("generic", _by(items, "generic"))):
        for name_key, strengths in sorted(table.items()):
            if kind == "brand" and re.search(r"\d", name_key):
                continue  # a brand named with its strength ('Ferrous Gluconate 300mg')
            key = f"{kind}-{name_key}"
            group = _pick_strength(key, strengths)
            first = group[0]
            name = first.brand if kind == "brand" else first.generic.lower()
            bare = bare_number(first.strength, strengths)
            templates = WITH_STRENGTH + WITHOUT_STRENGTH + ((BARE,) if bare else ())
            template = templates[_choice(f"{SEED}:{key}", len(templates))]
            if "{strength}" not in template and "{bare}" not in template:
                group = [p for ps in strengths.values() for p in ps]
            q = _question(
                template,
                name=name,
                lower=name.lower(),
                upper=name.upper(),
                strength=_spaced(first.strength),
                bare=bare or "",
            )
            asked = "any strength" if "{strength}" not in template and not bare else first.strength
            if template == BARE:
                asked = f"{first.strength} (written '{bare}')"
            yield derived_case(
                "odb.paraphrase",
                key,
                tool=TOOL,
                args={"q": q},
                expect=[_product_check(group), *_covered_check(group)],
                title=f"'{q}' answers {name} at {asked}",
                source=_source(group, f"{kind} name {name!r} at {asked}"),
            )


# ------------------------------------------------------------------------------ swaps
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
