"""The ODB case family's own reading of the corpus text (independent of the tool's parser)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.derive.corpus import Corpus
from evals.derive.families.odb import by_question, form_word, strength_numbers
from evals.run.scenario import Scenario


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


def _corpus(tmp_path: Path, rows: list[tuple[str, str, str, str, str]]) -> Corpus:
    """A described formulary: (din, brand, generic, strength, form) rows, all benefits."""
    columns = "din,brand_name,generic_name,strength,dosage_form,is_benefit,lu_required,group_id,individual_price"
    lines = [columns] + [f"{d},{b},{g},{s},{f},1,0,,1.0" for d, b, g, s, f in rows]
    (tmp_path / "odb_drugs.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Corpus(tmp_path)


def _asked(scenario: Scenario) -> list[str]:
    check = next(c for c in scenario.expect if c.check == "asked_product")
    assert isinstance(check.value, list)
    return [str(din) for din in check.value]


def test_names_differing_only_in_spacing_are_one_name_asked(tmp_path: Path) -> None:
    """Two listings of 'Sandoz Omeprazole DR Cap' 20mg, one spelled with a double space: a
    question cannot tell them apart, so either answers it."""
    corpus = _corpus(
        tmp_path,
        [
            ("02296446", "Sandoz Omeprazole  DR Cap", "OMEPRAZOLE", "20mg", ""),
            ("09857314", "Sandoz Omeprazole DR Cap", "OMEPRAZOLE", "20mg", ""),
        ],
    )
    brand = [s for s in by_question(corpus) if s.id.startswith("derived.odb.question.brand")]
    assert len(brand) == 1
    assert _asked(brand[0]) == ["02296446", "09857314"]


def test_a_form_in_the_strength_cell_asks_for_every_product_in_that_form(tmp_path: Path) -> None:
    """'glucose oxidase Strip': one listing writes Strip as its strength, two as their form
    with no strength; a tablet of the same name is not asked."""
    corpus = _corpus(
        tmp_path,
        [
            ("09857547", "Spirit", "GLUCOSE OXIDASE", "Strip", ""),
            ("09857522", "Suretest", "GLUCOSE OXIDASE", "", "Strip"),
            ("09857526", "CareSens N", "GLUCOSE OXIDASE", "", "Strip"),
            ("09999999", "Other", "GLUCOSE OXIDASE", "", "Tab"),
        ],
    )
    generic = [s for s in by_question(corpus) if s.id.startswith("derived.odb.question.generic")]
    assert len(generic) == 1
    assert _asked(generic[0]) == ["09857522", "09857526", "09857547"]
