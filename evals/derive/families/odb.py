"""ODB formulary cases: every DIN, every brand and generic at each strength, clinicians' phrasings,
and strengths a brand is not listed at (the answer must say so, never answer another strength)."""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from evals.derive.case import ExpectSpec, derived_case
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
    group_id: str = ""
    price: float | None = None


def name_key(name: str) -> str:
    """A name as the questions write it (case-folded, spaces collapsed): 'Sandoz Omeprazole  DR
    Cap' and 'Sandoz Omeprazole DR Cap' are two listed spellings of one name as asked."""
    return re.sub(r"\s+", " ", name).strip().casefold()


def normal_strength(strength: str) -> str:
    return re.sub(r"\s+", "", strength).casefold()


def form_word(form: str) -> str | None:
    """The prescriber's words for a dosage form, from the code's first word ('Tab-28 Pk' is
    tablets too: the pack size follows a hyphen)."""
    words = re.split(r"[\s-]+", form.strip())
    first = words[0].casefold() if words else ""
    second = words[1].casefold() if len(words) > 1 else ""
    if first in ("er", "cr"):  # extended or controlled release, not 'Cr' (cream)
        kinds = {"tab": "extended-release tablets", "cap": "extended-release capsules"}
        if second in kinds:
            return kinds[second]
        return None if first == "er" else FORM_WORDS.get(first)  # 'ER Inj', 'Cr-50g Pk'
    return FORM_WORDS.get(first)


MASS_MG = {"g": 1000.0, "mg": 1.0, "mcg": 0.001}


def strength_numbers(strength: str) -> tuple[float, ...]:
    """The amounts a strength states, masses in mg, per mL where a volume follows, sorted:
    '20mg/25mg' and '20mg & 25mg', '0.05%' and '0.05% w/w', '50mcg/Metered Dose' and
    '50mcg/Actuation', '1000U/10mL' and '100U/mL' state the same ones. A deliberately crude
    reading of the corpus text (not the tool's parser): two strengths with the same amounts are
    never called different."""
    text = strength.replace(",", "")
    volume = re.search(r"/\s*(\d+(?:\.\d+)?)?\s*mL\b", text, re.I)
    per = float(volume.group(1)) if volume and volume.group(1) else 1.0
    if volume:
        text = text[: volume.start()] + text[volume.end() :]
    out = [
        round(float(number) * MASS_MG.get(unit.casefold(), 1.0) / per, 6)
        for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-zA-Z%]*)", text)
    ]
    return tuple(sorted(out))


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
            group_id=r["group_id"].strip(),
            price=float(r["individual_price"]) if r["individual_price"].strip() else None,
        )
        for r in corpus.rows(DRUGS)
    ]


def by_group(every: list[Product]) -> dict[str, list[Product]]:
    groups: dict[str, list[Product]] = defaultdict(list)
    for p in every:
        if p.group_id:
            groups[p.group_id].append(p)
    return groups


def price_check(asked: list[Product], groups: dict[str, list[Product]]) -> list[ExpectSpec]:
    """Every unit price the answer gives for the products asked, or a member of their
    interchangeable groups, is the formulary's (individual_price), wherever the answer puts it
    (a listed item's `din` and `price`, `requested_din` and `requested_price`, ...)."""
    members = [*asked, *(m for p in asked if p.group_id for m in groups.get(p.group_id, []))]
    table = {p.din: p.price for p in members if p.price is not None}
    if not table:
        return []
    return [
        {
            "check": "source_values",
            "path": "$",
            "key": "din",
            "field": "price",
            "value": dict(sorted(table.items())),
            "tolerance": 0.00005,
        }
    ]


def _choice(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def _covered_check(group: list[Product]) -> list[ExpectSpec]:
    """Check covered only when every product in the expected set agrees."""
    values = {p.covered for p in group}
    if len(values) != 1:
        return []
    return [{"check": "equals", "path": "coverage.covered", "value": values.pop()}]


def _product_check(group: list[Product]) -> ExpectSpec:
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
    every = products(corpus)
    groups = by_group(every)
    for p in every:
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
                *price_check([p], groups),
            ],
            title=f"DIN {p.din} is {p.brand} {p.strength}",
            source=_source([p], f"din = {p.din}"),
        )


def _grouped(corpus: Corpus, name_of: str) -> dict[tuple[str, str], list[Product]]:
    """(name as asked, strength) -> the products a question naming both may mean. A form written
    in the strength cell ('Strip') names the products of that name listed in that form without
    a strength as well: a question cannot tell them apart."""
    groups: dict[tuple[str, str], list[Product]] = defaultdict(list)
    unstated: dict[str, list[Product]] = defaultdict(list)
    for p in products(corpus):
        name = getattr(p, name_of)
        if name and p.strength:
            groups[(name_key(name), normal_strength(p.strength))].append(p)
        elif name:
            unstated[name_key(name)].append(p)
    for (name, strength), group in groups.items():
        if not strength_numbers(strength):
            group.extend(p for p in unstated[name] if normal_strength(p.form) == strength)
    return groups


@family("odb.brand_strength", tool="odb.get")
def by_brand_and_strength(corpus: Corpus) -> Iterator[Scenario]:
    """Every brand at every listed strength, asked with the drug and strength arguments."""
    groups = by_group(products(corpus))
    for (_, strength), group in sorted(_grouped(corpus, "brand").items()):
        first = group[0]
        yield derived_case(
            "odb.brand_strength",
            f"{first.brand}-{strength}",
            tool="odb.get",
            args={"drug": first.brand, "strength": first.strength},
            expect=[_product_check(group), *_covered_check(group), *price_check(group, groups)],
            title=f"{first.brand} {first.strength} answers that product",
            source=_source(group, f"brand_name = {first.brand!r}, strength = {first.strength!r}"),
        )


@family("odb.generic_strength", tool="odb.get")
def by_generic_and_strength(corpus: Corpus) -> Iterator[Scenario]:
    """Every generic name at every listed strength, asked in lower case with the strength."""
    groups = by_group(products(corpus))
    for (generic, strength), group in sorted(_grouped(corpus, "generic").items()):
        first = group[0]
        yield derived_case(
            "odb.generic_strength",
            f"{generic}-{strength}",
            tool="odb.get",
            args={"drug": generic, "strength": first.strength},
            expect=[_product_check(group), *_covered_check(group), *price_check(group, groups)],
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
        for (asked_name, strength), group in sorted(_grouped(corpus, name_of).items()):
            first = group[0]
            key = f"{name_of}-{asked_name}-{strength}"
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
    answer must say the strength is not listed, never answer another strength as if asked.

    Strengths stating the brand's amounts in other words ('20mg/25mg' for '20mg & 25mg') are
    not asked: they are listed. A brand named by its bare generic name ('Metronidazole') is
    also that generic: the generic's products at the strength asked answer it."""
    everything = products(corpus)
    by_brand: dict[str, list[Product]] = defaultdict(list)
    by_generic: dict[str, set[str]] = defaultdict(set)
    by_name: dict[str, list[Product]] = defaultdict(list)  # generic names and ingredient keys
    for p in everything:
        if p.brand and p.strength:
            by_brand[p.brand.casefold()].append(p)
            by_generic[p.generic.casefold()].add(p.strength)
    for p, row in zip(everything, corpus.rows(DRUGS), strict=True):
        for name in {p.generic.casefold(), row["ingredient"].casefold()}:
            by_name[name].append(p)
    for brand_key, group in sorted(by_brand.items()):
        listed = {strength_numbers(p.strength) for p in group}
        others = sorted(
            {
                s
                for p in group
                for s in by_generic[p.generic.casefold()]
                if strength_numbers(s) not in listed
            }
        )
        if not others:
            continue
        asked = others[_choice(brand_key, len(others))]
        brand = group[0].brand
        generic = [
            p
            for p in by_name.get(brand_key, [])
            if normal_strength(p.strength) == normal_strength(asked)
        ]
        expected = sorted(p.din for p in generic)
        yield derived_case(
            "odb.absent_strength",
            f"{brand_key}-{normal_strength(asked)}",
            tool="odb.get",
            args={"drug": brand, "strength": asked},
            expect=[
                {"check": "asked_product", "path": "coverage.din", "value": expected, "field": FLAG}
            ],
            title=(
                f"{brand} is not listed at {asked}: the answer says so"
                if not expected
                else f"{brand} at {asked} is the generic {brand}'s product at that strength"
            ),
            source=(
                f"corpus {DRUGS}: brand_name {brand!r} is listed at "
                f"{', '.join(sorted({p.strength for p in group}))} only; {asked} is a strength "
                f"of its generic name in other products (ODB formulary extract)"
                + (
                    f"; {brand!r} is also a generic name or ingredient, listed at {asked} as "
                    f"DINs {', '.join(expected[:8])}"
                    if expected
                    else ""
                )
            ),
        )
