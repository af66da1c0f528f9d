"""Paraphrase families: seeded misspellings, fair cases only, strengths in other units, both
directions of a brand/generic swap, ADP rules in other words; expected values from the corpus."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pytest

from evals.derive.build import derive
from evals.derive.corpus import Corpus
from evals.derive.families.adp_paraphrase import SYNONYMS
from evals.derive.families.odb_misspelling import misspelling_plan
from evals.derive.families.odb_paraphrase import rewrite_strength
from evals.derive.misspell import RULES, misspell

ODB = Path(__file__).resolve().parents[2] / "reference_server" / "corpus" / "off" / "odb_drugs.csv"
PARAPHRASE_FAMILIES = [
    "odb.misspelling",
    "odb.strength_format",
    "odb.paraphrase",
    "odb.brand_generic_swap",
    "adp.paraphrase",
]


def _rows() -> list[dict[str, str]]:
    with ODB.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def cases() -> dict[str, list[Any]]:
    return derive(Corpus(), families=PARAPHRASE_FAMILIES)


@pytest.mark.parametrize(
    ("rule", "name", "typed"),
    [
        ("drop_double", "amoxicillin", "amoxicilin"),
        ("double_single", "lipitor", None),  # some consonant doubled: checked below
        ("transpose", "ramipril", None),
    ],
)
def test_each_rule_makes_a_clinicians_slip(rule: str, name: str, typed: str | None) -> None:
    out = RULES[rule](name, "k")
    assert out is not None and out != name
    assert len(out) - len(name) in (-1, 0, 1)
    if typed is not None:
        assert out == typed


def test_spellings_by_ear_include_the_usual_ones() -> None:
    heard = {RULES["by_ear"]("metformin", f"k{i}") for i in range(40)}
    assert "metforman" in heard
    heard = {RULES["by_ear"]("atorvastatin", f"k{i}") for i in range(40)}
    assert "atorvastatine" in heard
    heard = {RULES["by_ear"]("phenytoin", f"k{i}") for i in range(40)}
    assert "fenytoin" in heard


def test_misspellings_are_seeded_not_random() -> None:
    names = ["amoxicillin", "metformin", "Ozempic", "Jardiance", "rosuvastatin", "Synthroid"]
    first = [misspell(n, seed=0) for n in names]
    assert first == [misspell(n, seed=0) for n in names]
    assert first != [misspell(n, seed=1) for n in names]


def test_no_misspelling_asked_is_another_name_in_the_corpus(
    cases: dict[str, list[Any]],
) -> None:
    words: set[str] = set()
    for r in _rows():
        for text in (r["brand_name"], r["generic_name"], r["ingredient"]):
            words.update(w.casefold() for w in re.findall(r"[A-Za-z]+", text))
            words.add(text.strip().casefold())
    asked = misspelling_plan(Corpus()).asked
    assert asked
    for _, _, typed, _ in asked:
        assert typed.casefold() not in words
    typed_in_cases = {
        word.casefold()
        for case in cases["odb.misspelling"]
        for word in re.findall(r"[A-Za-z]+", case.args.get("drug") or case.args["q"])
    }
    assert {typed.casefold() for _, _, typed, _ in asked} <= typed_in_cases


def test_unfair_misspellings_are_skipped_and_counted() -> None:
    plan = misspelling_plan(Corpus())
    skipped = [typed for reasons in plan.skipped.values() for _, typed in reasons]
    assert sum(len(v) for v in plan.skipped.values()) == len(skipped) > 0
    asked = {typed for _, _, typed, _ in plan.asked}
    assert not asked & {s.split("~")[0] for s in skipped}


def test_a_misspelt_case_expects_the_named_products_at_the_strength(
    cases: dict[str, list[Any]],
) -> None:
    case = next(
        c
        for c in cases["odb.misspelling"]
        if c.id.startswith("derived.odb.misspelling.brand-lipitor-")
    )
    strength = case.id.rsplit("-", 1)[1]
    dins = sorted(
        r["din"]
        for r in _rows()
        if r["brand_name"] == "Lipitor" and r["strength"].casefold() == strength
    )
    assert case.expect[0].value == dins
    assert "Lipitor" not in str(case.args) and "lipitor" not in str(case.args).casefold()


@pytest.mark.parametrize(
    ("listed", "written"),
    [
        ("0.5mg", "500 mcg"),
        ("125mcg", "0.125 mg"),
        ("1g", "1000 mg"),
        ("1500mg", "1.5 g"),
        ("5mg & 160mg", "5/160 mg"),
        ("250mg/5mL", "250 mg per 5 mL"),
        ("20mg", None),
    ],
)
def test_strengths_are_rewritten_in_other_units(listed: str, written: str | None) -> None:
    assert rewrite_strength(listed) == written


def _lipitor_group() -> tuple[str, set[str], set[str]]:
    rows = _rows()
    lipitor = next(r for r in rows if r["brand_name"] == "Lipitor" and r["strength"] == "20mg")
    group = [r for r in rows if r["group_id"] == lipitor["group_id"]]
    generics = {
        r["din"]
        for r in group
        if "atorvastatin" in r["brand_name"].lower() and r["is_benefit"] == "1"
    }
    return lipitor["group_id"], {lipitor["din"]}, generics


def test_a_brand_asked_for_its_generic_expects_the_groups_covered_generics(
    cases: dict[str, list[Any]],
) -> None:
    group_id, _, generics = _lipitor_group()
    case = next(
        c
        for c in cases["odb.brand_generic_swap"]
        if c.id == f"derived.odb.brand_generic_swap.{group_id}-to-generic"
    )
    assert "Lipitor" in case.args["q"] and "atorvastatin" not in case.args["q"].lower()
    listed = case.expect[1]
    assert listed.path == "interchangeable"
    assert set(re.findall(r"\d{8}", listed.item.pattern)) == generics


def test_a_generic_asked_for_brands_expects_the_originator(cases: dict[str, list[Any]]) -> None:
    group_id, brand, _ = _lipitor_group()
    case = next(
        c
        for c in cases["odb.brand_generic_swap"]
        if c.id == f"derived.odb.brand_generic_swap.{group_id}-to-brand"
    )
    assert "atorvastatin" in case.args["q"] and "lipitor" not in case.args["q"].lower()
    listed = case.expect[1]
    assert listed.path == "brands"
    assert set(re.findall(r"\d{8}", listed.item.pattern)) == brand


def test_paraphrase_cases_are_deterministic(cases: dict[str, list[Any]]) -> None:
    again = derive(Corpus(), families=PARAPHRASE_FAMILIES)
    for name in PARAPHRASE_FAMILIES:
        assert [(c.id, c.args) for c in again[name]] == [(c.id, c.args) for c in cases[name]]
        assert all("corpus" in c.source for c in cases[name])


def test_adp_paraphrases_name_a_device_of_the_rules_category(cases: dict[str, list[Any]]) -> None:
    funding = Path(ODB.parent / "adp_funding_rule.csv")
    with funding.open(encoding="utf-8", newline="") as fh:
        batteries = [
            r
            for r in csv.DictReader(fh)
            if r["scenario"] == "batteries" and r["adp_doc"] == "hearing_devices"
        ]
    assert batteries
    shares = [
        c
        for c in cases["adp.paraphrase"]
        if c.id.startswith("derived.adp.paraphrase.share-hearing_devices-batteries")
    ]
    assert shares
    for case in shares:
        assert any(device in case.args["query"] for device in SYNONYMS["hearing_devices"])
        cited = case.expect[0].item.pattern
        assert all(r["section_ref"] in cited for r in batteries)
