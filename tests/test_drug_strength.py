"""Strengths and dosage forms as prescriptions write them, against the formulary's spelling.

Expected values are written by hand from the formulary's strength and dosage-form columns
(corpus/off/odb_drugs.csv), never computed by the code under test.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_server.retrieval import drug_form, drug_strength
from reference_server.retrieval.drug_strength import parse, same_strength

D = Decimal


@pytest.mark.parametrize(
    ("text", "amounts"),
    [
        ("160mg", ((D(160), "mg"),)),
        ("160 mg", ((D(160), "mg"),)),
        ("1g", ((D(1000), "mg"),)),
        ("25mcg", ((D("0.025"), "mg"),)),
        ("5%", ((D(5), "%"),)),
        ("0.05% w/w", ((D("0.05"), "%"),)),
        ("50U", ((D(50), "u"),)),
        ("50 units", ((D(50), "u"),)),
        ("50U/Vial", ((D(50), "u"),)),  # a per-use denominator states no other product
        ("10,000IU/mL", ((D(10000), "u"),)),
        ("5/160 mg", ((D(5), "mg"), (D(160), "mg"))),  # one unit shared by both amounts
        ("20mg/25mg", ((D(20), "mg"), (D(25), "mg"))),  # '/' between two masses: a combination
        ("50mg & 850mg", ((D(50), "mg"), (D(850), "mg"))),
        ("20000 & 55000 & 55000 USP Units", ((D(20000), "u"), (D(55000), "u"), (D(55000), "u"))),
    ],
)
def test_amounts_in_canonical_units(text: str, amounts: tuple[tuple[Decimal, str], ...]) -> None:
    strength = parse(text)
    assert strength is not None and strength.amounts == amounts


def test_denominators_that_change_the_product_are_kept() -> None:
    assert parse("10mg/mL") == drug_strength.Strength(((D(10), "mg"),), ((D(1), "ml"),))
    assert parse("1000U/10mL") == drug_strength.Strength(((D(1000), "u"),), ((D(10), "ml"),))
    assert parse("2mg/g") == drug_strength.Strength(((D(2), "mg"),), ((D(1000), "mg"),))
    assert parse("25mcg/hr") == drug_strength.Strength(((D("0.025"), "mg"),), (), per_time=True)


@pytest.mark.parametrize("text", ["", "3 Phase", "every 24 hours", "Humulin 30/70", "age 70"])
def test_no_strength_without_a_drug_amount(text: str) -> None:
    assert parse(text) is None


@pytest.mark.parametrize(
    ("asked", "listed", "match"),
    [
        ("160 mg", "160mg", "exact"),
        ("1000 mg", "1g", "exact"),
        ("50 units", "50U/Vial", "exact"),
        ("50U", "100U/Vial", None),  # Botox 50U is not the 100U vial
        ("0.05%", "0.05% w/w", "exact"),
        ("5/160 mg", "5mg & 160mg", "exact"),
        ("300mg & 25mg", "300mg & 12.5mg", None),  # irbesartan HCT: another product
        ("25mg & 300mg", "300mg & 25mg", "close"),  # the ingredients in another order
        ("10mg", "10mg/mL", None),  # morphine tablets are not the oral solution
        ("100 units/mL", "1000U/10mL", "close"),  # a concentration: the vial has it
        ("250mg/5mL", "50mg/mL", "close"),  # a suspension's concentration per dose volume
        ("18mg/10 Sq Cm", "9mg/5 Sq Cm", None),  # two patch sizes
        ("24/26 mg", "24.3mg & 25.7mg", "close"),  # a combination written rounded
        ("24/26 mg", "48.6mg & 51.4mg", None),
        ("0.5mg", "0.45mg", None),  # a single amount is never rounded
        ("25 mcg", "25mcg/hr", "close"),  # a patch's strength said without its rate
        ("50mcg/Metered Dose", "50mcg/Actuation", "exact"),
        ("3 Phase", "3 phase", "exact"),  # no units: compared as text
    ],
)
def test_same_strength(asked: str, listed: str, match: str | None) -> None:
    assert same_strength(asked, listed) == match


def test_strengths_found_in_questions() -> None:
    q = "Does ODB cover Ratio-Tecnal C1/2 330 mg & 50 mg & 40 mg & 30 mg capsules?"
    assert [m.text for m in drug_strength.find(q)] == ["330 mg & 50 mg & 40 mg & 30 mg"]
    q = "Is Humulin 30/70 100 units/mL covered for a patient aged 70?"
    assert [m.text for m in drug_strength.find(q)] == ["100 units/mL"]
    assert drug_strength.first("Is fusidic acid 2% ointment covered?").text == "2%"  # type: ignore[union-attr]
    q = "Is calcipotriol & betamethasone 50mcg/g & 0.5mg/g covered?"  # a denominator on each
    assert [m.text for m in drug_strength.find(q)] == ["50mcg/g & 0.5mg/g"]


amount = st.decimals(min_value=D("0.001"), max_value=D(5000), places=3)
unit = st.sampled_from(["mg", "mcg", "g", "%", "U", "mL"])


@given(st.lists(st.tuples(amount, unit), min_size=1, max_size=4), st.booleans())
def test_spacing_never_changes_a_strength(parts: list[tuple[Decimal, str]], spaced: bool) -> None:
    """'160mg' and '160 mg', '&' with or without spaces: one strength."""
    tight = " & ".join(f"{a}{u}" for a, u in parts)
    loose = (" & " if spaced else "&").join(f"{a} {u}" for a, u in parts)
    assert same_strength(loose, tight) == "exact"


@given(amount, st.sampled_from(["mg", "mcg", "g"]))
def test_a_mass_in_another_unit_is_the_same_strength(value: Decimal, unit_: str) -> None:
    in_mg = value * {"mg": D(1), "mcg": D("0.001"), "g": D(1000)}[unit_]
    assert same_strength(f"{value}{unit_}", f"{in_mg}mg") == "exact"


@given(amount, amount)
def test_different_amounts_never_match(a: Decimal, b: Decimal) -> None:
    if a.normalize() != b.normalize():
        assert same_strength(f"{a}mg", f"{b}mg") is None


# ------------------------------------------------------------------------------------ forms


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("Tab", "tablet"),
        ("Tab-28 Pk", "tablet"),
        ("ER Tab", "er_tablet"),
        ("Chew Tab", "chewable_tablet"),
        ("Orally Disintegrating Tab", "odt"),
        ("Cap", "capsule"),
        ("DR Cap", "dr_capsule"),
        ("Oint", "ointment"),
        ("Cr", "cream"),
        ("Oph Sol-5mL Pk", "eye"),
        ("O/L", "oral_liquid"),
        ("Oral Susp", "suspension"),
        ("Inj Sol-Pref Syr", "injection"),
        ("Pd Inj-50U Vial Pk", "injection"),
        ("Trans Patch", "patch"),
        ("Sup", "suppository"),
    ],
)
def test_kind_of_formulary_codes(code: str, kind: str) -> None:
    assert drug_form.kind_of(code) == kind


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("Is Lipitor 20 mg tablets covered?", "tablets"),
        ("metformin 1000mg extended-release tablets", "extended-release tablets"),
        ("Is fusidic acid 2% ointment covered?", "ointment"),
        ("latanoprost eye drops", "eye drops"),
        ("amoxicillin oral suspension", "suspension"),
        ("fentanyl 25 mcg patch", "patch"),
        ("Is Botox 50 units injection covered?", "injection"),
        ("Is Ozempic covered for diabetes?", None),
        ("Is there a dose cap on this?", None),
    ],
)
def test_forms_in_words(question: str, word: str | None) -> None:
    mention = drug_form.find(question)
    assert (mention.form.word if mention else None) == word


def test_a_form_word_asks_for_its_own_kind_first() -> None:
    tablets = drug_form.BY_WORD["tablets"]
    assert drug_form.matching(tablets, ["ER Tab", "Tab", "Cap"]) == [1]
    assert drug_form.matching(tablets, ["ER Tab", "Cap"]) == [0]  # only ER tablets are listed
    assert drug_form.matching(drug_form.BY_WORD["ointment"], ["O/L", "Cr"]) == []


def test_the_form_words_literal_lists_every_word_once_in_order() -> None:
    """odb.get publishes `drug_form.Word` as its `form` enum: it must be the words the patterns
    answer, each once, in their order."""
    assert tuple(drug_form.BY_WORD) == drug_form.FORM_WORDS


@pytest.mark.parametrize(
    ("asked", "listed"),
    [("250 mg per 5 mL", "250mg/5mL"), ("10 mg per mL", "10mg/mL"), ("5 mg per tablet", "5mg")],
)
def test_per_is_written_for_a_slash(asked: str, listed: str) -> None:
    assert same_strength(asked, listed) == "exact"
    mention = drug_strength.first(f"Is it covered at {asked}?")
    assert mention is not None and mention.text == asked
