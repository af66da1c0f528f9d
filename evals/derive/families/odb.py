"""ODB formulary cases: every DIN, every brand and generic at each strength, clinicians' phrasings,
and strengths a brand is not listed at (the answer must say so, never answer another strength)."""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.registry import family
from evals.run.scenario import Scenario

DRUGS = "odb_drugs.csv"
FLAG = "needs_more_info"

# Dosage-form codes of the extract (first word) in the words a prescriber uses.
FORM_WORDS = {
    "tab": "tablets",
    "cap": "capsules",
    "oint": "ointment",
    "cr": "cream",
    "o/l": "oral liquid",
    "oral": "oral solution",
    "oph": "eye drops",
    "inj": "injection",
    "sup": "suppositories",
    "trans": "patch",
    "transdermal": "patch",
    "lot": "lotion",
    "gel": "gel",
    "susp": "suspension",
    "inh": "inhaler",
    "er": "extended-release tablets",
    "chew": "chewable tablets",
}


@dataclass(frozen=True)
class Product:
    din: str
    brand: str
    generic: str
    strength: str
    form: str
    covered: bool
    lu_required: bool


def normal_strength(strength: str) -> str:
    return re.sub(r"\s+", "", strength).casefold()


def form_word(form: str) -> str | None:
    words = form.split()
    first = words[0].casefold() if words else ""
    if first == "er" and len(words) > 1 and words[1].casefold() == "cap":
        return "extended-release capsules"
    return FORM_WORDS.get(first)


def spoken_strength(strength: str, variant: int) -> str:
    """The strength as a prescriber writes it: '160mg' or '160 mg', units spelled for U."""
    text = re.sub(r"(?<=\d)U\b", " units", strength)
    if variant % 2:
        text = re.sub(r"(?<=\d)(mg|mcg|g|mL|mEq)\b", r" \1", text)
    return text


def products(corpus: Corpus) -> list[Product]:
    return [
        Product(
            din=r["din"],
            brand=r["brand_name"].strip(),
            generic=r["generic_name"].strip(),
            strength=r["strength"].strip(),
            form=r["dosage_form"].strip(),
            covered=r["is_benefit"] == "1",
            lu_required=r["lu_required"] == "1",
        )
        for r in corpus.rows(DRUGS)
    ]


def _choice(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def _covered_check(group: list[Product]) -> list[dict[str, object]]:
    """Check covered only when every product in the expected set agrees."""
    values = {p.covered for p in group}
    if len(values) != 1:
        return []
    return [{"check": "equals", "path": "coverage.covered", "value": values.pop()}]


def _product_check(group: list[Product]) -> dict[str, object]:
    return {
        "check": "asked_product",
        "path": "coverage.din",
        "value": sorted(p.din for p in group),
        "field": FLAG,
    }


def _source(group: list[Product], what: str) -> str:
    dins = ", ".join(sorted(p.din for p in group)[:8]) + (" ..." if len(group) > 8 else "")
    return (
        f"corpus {DRUGS} rows {what} (DINs {dins}), ingested from the ODB formulary extract "
        "(drug@id, name, genericName, pcg9 strength and dosageForm, notABenefit)"
    )


@family("odb.din", tool="odb.get")
def by_din(corpus: Corpus) -> Iterator[Scenario]:
    """Every DIN asked by number: that product's names, strength, coverage and Limited Use
    (an empty corpus cell is a fact the extract does not state: the answer must give null)."""
    for p in products(corpus):
        yield derived_case(
            "odb.din",
            p.din,
            tool="odb.get",
            args={"din": p.din},
            expect=[
                {"check": "equals", "path": "coverage.din", "value": p.din},
                {"check": "equals", "path": "coverage.brand_name", "value": p.brand or None},
                {"check": "equals", "path": "coverage.generic_name", "value": p.generic or None},
                {"check": "equals", "path": "coverage.strength", "value": p.strength or None},
                {"check": "equals", "path": "coverage.covered", "value": p.covered},
                {"check": "equals", "path": "coverage.lu_required", "value": p.lu_required},
            ],
            title=f"DIN {p.din} is {p.brand} {p.strength}",
            source=_source([p], f"din = {p.din}"),
        )


def _grouped(corpus: Corpus, name_of: str) -> dict[tuple[str, str], list[Product]]:
    groups: dict[tuple[str, str], list[Product]] = defaultdict(list)
    for p in products(corpus):
        name = getattr(p, name_of)
        if name and p.strength:
            groups[(name.casefold(), normal_strength(p.strength))].append(p)
    return groups


@family("odb.brand_strength", tool="odb.get")
def by_brand_and_strength(corpus: Corpus) -> Iterator[Scenario]:
    """Every brand at every listed strength, asked with the drug and strength arguments."""
    for (_, strength), group in sorted(_grouped(corpus, "brand").items()):
        first = group[0]
        yield derived_case(
            "odb.brand_strength",
            f"{first.brand}-{strength}",
            tool="odb.get",
            args={"drug": first.brand, "strength": first.strength},
            expect=[_product_check(group), *_covered_check(group)],
            title=f"{first.brand} {first.strength} answers that product",
            source=_source(group, f"brand_name = {first.brand!r}, strength = {first.strength!r}"),
        )


@family("odb.generic_strength", tool="odb.get")
def by_generic_and_strength(corpus: Corpus) -> Iterator[Scenario]:
    """Every generic name at every listed strength, asked in lower case with the strength."""
    for (generic, strength), group in sorted(_grouped(corpus, "generic").items()):
        first = group[0]
        yield derived_case(
            "odb.generic_strength",
            f"{generic}-{strength}",
            tool="odb.get",
            args={"drug": generic, "strength": first.strength},
            expect=[_product_check(group), *_covered_check(group)],
            title=f"{generic} {first.strength} answers a product of that generic and strength",
            source=_source(
                group, f"generic_name = {first.generic!r}, strength = {first.strength!r}"
            ),
        )


BRAND_QUESTIONS = (
    "Is {name} {strength} {form}covered by ODB?",
    "Does the Ontario Drug Benefit cover {name} {strength} {form}?",
    "{name} {strength} {form}- is it an ODB benefit?",
    "Can my patient get {name} {strength} {form}on the ODB formulary?",
)
GENERIC_QUESTIONS = (
    "Is {name} {strength} {form}covered under ODB?",
    "ODB coverage for {name} {strength} {form}?",
)


def _question(template: str, name: str, strength: str, form: str | None) -> str:
    text = template.format(name=name, strength=strength, form=f"{form} " if form else "")
    return re.sub(r"\s+", " ", text.replace(" ?", "?")).strip()


@family("odb.question", tool="odb.get")
def by_question(corpus: Corpus) -> Iterator[Scenario]:
    """Clinicians' questions naming a brand or generic, a strength as written on a prescription
    (160mg, 160 mg, 5%, 50 units) and, in half of them, the dosage form."""
    for name_of, templates in (("brand", BRAND_QUESTIONS), ("generic", GENERIC_QUESTIONS)):
        for (name_key, strength), group in sorted(_grouped(corpus, name_of).items()):
            first = group[0]
            key = f"{name_of}-{name_key}-{strength}"
            pick = _choice(key, 4 * len(templates))
            form = form_word(first.form) if pick % 4 >= 2 else None
            expected = [p for p in group if form is None or form_word(p.form) == form]
            name = first.brand if name_of == "brand" else first.generic.lower()
            q = _question(templates[pick // 4], name, spoken_strength(first.strength, pick), form)
            yield derived_case(
                "odb.question",
                key,
                tool="odb.get",
                args={"q": q},
                expect=[_product_check(expected), *_covered_check(expected)],
                title=f"'{q}' answers that product",
                source=_source(
                    expected,
                    f"{name_of} name {name!r}, strength {first.strength!r}"
                    + (f", dosage forms read as {form!r}" if form else ""),
                ),
            )


@family("odb.absent_strength", tool="odb.get")
def absent_strength(corpus: Corpus) -> Iterator[Scenario]:
    """A brand asked at a strength its generic comes in but the brand is not listed at: the
    answer must say the strength is not listed, never answer another strength as if asked."""
    by_brand: dict[str, list[Product]] = defaultdict(list)
    by_generic: dict[str, set[str]] = defaultdict(set)
    for p in products(corpus):
        if p.brand and p.strength:
            by_brand[p.brand.casefold()].append(p)
            by_generic[p.generic.casefold()].add(p.strength)
    for brand_key, group in sorted(by_brand.items()):
        listed = {normal_strength(p.strength) for p in group}
        others = sorted(
            s
            for p in group
            for s in by_generic[p.generic.casefold()]
            if normal_strength(s) not in listed
        )
        if not others:
            continue
        asked = others[_choice(brand_key, len(others))]
        brand = group[0].brand
        yield derived_case(
            "odb.absent_strength",
            f"{brand_key}-{normal_strength(asked)}",
            tool="odb.get",
            args={"drug": brand, "strength": asked},
            expect=[{"check": "asked_product", "path": "coverage.din", "value": [], "field": FLAG}],
            title=f"{brand} is not listed at {asked}: the answer says so",
            source=(
                f"corpus {DRUGS}: brand_name {brand!r} is listed at "
                f"{', '.join(sorted({p.strength for p in group}))} only; {asked} is a strength "
                f"of its generic name in other products (ODB formulary extract)"
            ),
        )
