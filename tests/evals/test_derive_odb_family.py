"""The ODB case family's own reading of the corpus text (independent of the tool's parser)."""

from __future__ import annotations

import pytest

from evals.derive.families.odb import form_word, strength_numbers


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("20mg/25mg", "20mg & 25mg"),
        ("0.05%", "0.05% w/w"),
        ("50mcg/Metered Dose", "50mcg/Actuation"),
        ("1000U/10mL", "100U/mL"),
        ("1g", "1000mg"),
    ],
)
def test_the_same_amounts_written_otherwise_are_not_an_absent_strength(a: str, b: str) -> None:
    assert strength_numbers(a) == strength_numbers(b)


@pytest.mark.parametrize(("a", "b"), [("10mg", "20mg"), ("300mg & 25mg", "300mg & 12.5mg")])
def test_other_amounts_stay_apart(a: str, b: str) -> None:
    assert strength_numbers(a) != strength_numbers(b)


def test_a_pack_size_after_a_hyphen_keeps_the_form() -> None:
    assert form_word("Tab-28 Pk") == "tablets"
    assert form_word("O/L-15mL Pk") == "oral liquid"
    assert form_word("ER Cap") == "extended-release capsules"
