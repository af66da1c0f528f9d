"""The OHIP case families: expected values come from the corpus rows, and the description rule
keeps names of services and drops fragments (values checked by hand in ohip_fee_schedule.csv)."""

from __future__ import annotations

from typing import Any

import pytest

from evals.derive.corpus import Corpus
from evals.derive.families.ohip import code_fee, description_top1, description_top5, nameable
from evals.run.scenario import Scenario


@pytest.fixture(scope="module")
def fee_cases() -> dict[str, Scenario]:
    return {case.args["codes"][0]: case for case in code_fee(Corpus())}


def _expect(case: Scenario) -> list[dict[str, Any]]:
    return [spec.model_dump(exclude_defaults=True) for spec in case.expect]


def test_every_code_is_asked_once(fee_cases: dict[str, Scenario]) -> None:
    codes = {row["code"] for row in Corpus().rows("ohip_fee_schedule.csv")}
    assert set(fee_cases) == codes


def test_technical_and_professional_components_are_expected(
    fee_cases: dict[str, Scenario],
) -> None:
    # corpus row X090 'single view': fee 14.9, h_fee 14.9, p_fee 6.35
    expect = _expect(fee_cases["X090"])
    assert {"check": "equals", "path": "items[0].fee", "value": 14.9, "tolerance": 0.005} in expect
    records = [e["value"] for e in expect if e["check"] == "contains_record"]
    assert records == [{"component": "H", "fee": 14.9}, {"component": "P", "fee": 6.35}]


def test_a_code_without_a_flat_fee_checks_only_its_components(
    fee_cases: dict[str, Scenario],
) -> None:
    # corpus row J290 'Spinal sonography': fee_kind missing, p_fee 30.6
    expect = _expect(fee_cases["J290"])
    assert not [e for e in expect if e["path"] == "items[0].fee"]
    assert [e["value"] for e in expect if e["check"] == "contains_record"] == [
        {"component": "P", "fee": 30.6}
    ]


def test_every_listing_of_a_code_is_expected(fee_cases: dict[str, Scenario]) -> None:
    # A100: 76.9 in A1 (7 source rows, the main listing) and 0.0 with all six columns in GP110
    expect = _expect(fee_cases["A100"])
    assert {"check": "equals", "path": "items[0].fee", "value": 76.9, "tolerance": 0.005} in expect
    variants = [e["value"] for e in expect if e["path"] == "items[0].fee_variants"]
    assert sorted(v["fee"] for v in variants) == [0.0, 76.9]
    components = [e["value"] for e in expect if e["path"] == "items[0].fee_components"]
    assert len(components) == 6 and all(c["fee"] == 0.0 for c in components)


@pytest.mark.parametrize(
    ("description", "kept"),
    [
        ("Laser retinopexy for Retinopathy Prematurity – one eye", True),
        ("Routine EEG - technical component", True),
        ("single view", False),  # a line under a heading
        ("Minor assessment", False),  # two content words
        ("Application of SPECT, to J807", False),  # names another code
    ],
)
def test_descriptions_that_name_a_service(description: str, kept: bool) -> None:
    assert nameable(description) is kept


def test_description_families_ask_the_same_questions() -> None:
    top1 = list(description_top1(Corpus()))
    top5 = list(description_top5(Corpus()))
    assert [c.args["q"] for c in top1] == [c.args["q"] for c in top5]
    assert {c.args["top_k"] for c in top1} == {1} and {c.args["top_k"] for c in top5} == {5}
    by_code = {c.expect[0].value: c for c in top1}
    # corpus row E125: the only code described 'Laser retinopexy for Retinopathy Prematurity ...'
    assert "Laser retinopexy for Retinopathy Prematurity – one eye" in by_code["E125"].args["q"]
    assert "X090" not in by_code  # 'single view' is not nameable
