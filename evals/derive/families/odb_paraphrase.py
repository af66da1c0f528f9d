"""ODB cases in clinicians' own words: looser questions and word orders, and strengths written in
other units; the corpus products by name and strength that these families and the misspelling and
brand/generic swap families (odb_misspelling.py, odb_brand_swap.py) ask about.

The plain ODB families ask in the words the formulary uses; these ask as a prescriber types.
Every expected product still comes from the corpus rows (odb_drugs.csv: brand_name,
generic_name, ingredient, strength, group_id), never from odb.get.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.odb import (
    DRUGS,
    Product,
    _choice,
    _covered_check,
    _product_check,
    _source,
    name_key,
    normal_strength,
    products,
    strength_numbers,
)
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

SEED = 0
TOOL = "odb.get"


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


def _name_of(item: Listed, name_of: str) -> str:
    p = item.product
    return {"brand": p.brand, "generic": p.generic, "ingredient": item.ingredient}[name_of]


def _by(items: list[Listed], name_of: str) -> dict[str, dict[str, list[Product]]]:
    """name (`name_key`) -> normalised strength -> products, for brands, generic names or
    ingredient keys."""
    out: dict[str, dict[str, list[Product]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        p = item.product
        name = _name_of(item, name_of)
        if name and p.strength:
            out[name_key(name)][normal_strength(p.strength)].append(p)
    return out


def _without_strength(items: list[Listed], name_of: str) -> dict[str, list[Product]]:
    """name (`name_key`) -> its products listed without a strength (test strips, devices)."""
    out: dict[str, list[Product]] = defaultdict(list)
    for item in items:
        name = _name_of(item, name_of)
        if name and not item.product.strength:
            out[name_key(name)].append(item.product)
    return out


def _pick_strength(key: str, strengths: dict[str, list[Product]]) -> list[Product]:
    ordered = sorted(strengths)
    return strengths[ordered[_choice(key, len(ordered))]]


def _question(template: str, **parts: str) -> str:
    text = template.format(**parts)
    return re.sub(r"\s+", " ", text).strip()


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
        for named, strengths in sorted(table.items()):
            for strength_key, group in sorted(strengths.items()):
                first = group[0]
                written = rewrite_strength(first.strength)
                if written is None or not same_amounts(first.strength, written):
                    continue
                name = first.brand if kind == "brand" else first.generic.lower()
                key = f"{kind}-{named}-{strength_key}"
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
                    args: Arguments = {"drug": name, "strength": written}
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
    for kind in ("brand", "generic"):
        table, unstated = _by(items, kind), _without_strength(items, kind)
        for named, strengths in sorted(table.items()):
            if kind == "brand" and re.search(r"\d", named):
                continue  # a brand named with its strength ('Ferrous Gluconate 300mg')
            key = f"{kind}-{named}"
            group = _pick_strength(key, strengths)
            first = group[0]
            name = first.brand if kind == "brand" else first.generic.lower()
            bare = bare_number(first.strength, strengths)
            templates = WITH_STRENGTH + WITHOUT_STRENGTH + ((BARE,) if bare else ())
            template = templates[_choice(f"{SEED}:{key}", len(templates))]
            if "{strength}" not in template and "{bare}" not in template:
                group = [p for ps in strengths.values() for p in ps] + unstated[named]
            elif not strength_numbers(first.strength):  # a form in the strength cell ('Strip')
                word = first.strength.casefold()
                group = group + [p for p in unstated[named] if p.form.casefold() == word]
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
