"""Derived case sets: deterministic, expected values from the corpus rows, checks that tell an
answer about another product from a right one, and per-family floors in the gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.derive.build import derive, write
from evals.derive.case import family_of
from evals.derive.corpus import Corpus
from evals.derive.registry import all_families
from evals.read.families import family_stats
from evals.read.gate_config import GateConfig
from evals.read.gate_rules import family_findings
from evals.run.checks import CheckContext, CheckFailure, CheckSpec, WrongProduct, run_check
from evals.run.outcome import CallOutcome
from evals.run.runlog import CheckOutcome, ScenarioRecord
from evals.run.scenario import load_scenarios


def _run(result: dict[str, Any], **spec: Any) -> None:
    ctx = CheckContext(result, CallOutcome(structured=result, is_error=False, text=""))
    run_check(ctx, CheckSpec(**spec))


PRODUCT = {"check": "asked_product", "path": "coverage.din", "field": "needs_more_info"}


def test_asked_product_passes_the_product_asked_for() -> None:
    _run({"coverage": {"din": "001"}, "needs_more_info": False}, value=["001", "002"], **PRODUCT)


def test_another_product_unflagged_is_a_wrong_product() -> None:
    with pytest.raises(WrongProduct):
        _run({"coverage": {"din": "009"}, "needs_more_info": False}, value=["001"], **PRODUCT)


def test_another_product_flagged_is_a_miss_but_not_a_wrong_product() -> None:
    with pytest.raises(CheckFailure) as failure:
        _run({"coverage": {"din": "009"}, "needs_more_info": True}, value=["001"], **PRODUCT)
    assert not isinstance(failure.value, WrongProduct)


def test_nothing_listed_passes_when_the_answer_says_so_or_names_nothing() -> None:
    _run({"coverage": {"din": "009"}, "needs_more_info": True}, value=[], **PRODUCT)
    _run({"coverage": None, "needs_more_info": False}, value=[], **PRODUCT)
    with pytest.raises(WrongProduct):
        _run({"coverage": {"din": "009"}, "needs_more_info": False}, value=[], **PRODUCT)


def test_asked_product_reads_the_id_from_text_and_a_needs_more_info_decision() -> None:
    spec = {
        "check": "asked_product",
        "path": "summary",
        "pattern": r"DIN (\d{8})",
        "field": "decision",
    }
    _run(
        {"summary": "X (DIN 02471469) is a benefit", "decision": "covered"},
        value=["02471469"],
        **spec,
    )
    _run({"summary": "X (DIN 02540258)", "decision": "needs_more_info"}, value=[], **spec)
    with pytest.raises(WrongProduct):
        _run({"summary": "X (DIN 02540258)", "decision": "covered"}, value=["02471469"], **spec)


def test_contains_record_needs_every_field_on_one_item() -> None:
    result = {"items": [{"component": "H", "fee": 10.0}, {"component": "P", "fee": 25.5}]}
    _run(result, check="contains_record", path="items", value={"component": "P", "fee": 25.5})
    with pytest.raises(CheckFailure):
        _run(result, check="contains_record", path="items", value={"component": "H", "fee": 25.5})


@pytest.fixture(scope="module")
def sample() -> dict[str, list[Any]]:
    return derive(Corpus(), per_family=25, seed=7)


def test_every_family_derives_cases_with_a_source_and_its_tag(sample: dict[str, list[Any]]) -> None:
    assert set(sample) == set(all_families())
    for name, cases in sample.items():
        assert cases, f"family {name} derived nothing"
        for case in cases:
            assert family_of(case.tags) == name
            assert case.tool == all_families()[name].tool
            assert "corpus" in case.source
            assert case.expect


def test_sampling_is_seeded_and_nested() -> None:
    again = derive(Corpus(), families=["odb.din"], per_family=25, seed=7)["odb.din"]
    larger = derive(Corpus(), families=["odb.din"], per_family=60, seed=7)["odb.din"]
    other = derive(Corpus(), families=["odb.din"], per_family=25, seed=8)["odb.din"]
    first = derive(Corpus(), families=["odb.din"], per_family=25, seed=7)["odb.din"]
    assert [c.id for c in again] == [c.id for c in first]
    assert [c.id for c in other] != [c.id for c in first]
    assert len(larger) == 60


def test_din_cases_expect_the_corpus_row() -> None:
    corpus = Corpus()
    row = next(r for r in corpus.rows("odb_drugs.csv") if r["din"] == "02471469")
    case = next(
        c for c in derive(corpus, families=["odb.din"])["odb.din"] if c.args == {"din": "02471469"}
    )
    expected = {spec.path: spec.value for spec in case.expect}
    assert expected["coverage.brand_name"] == row["brand_name"]
    assert expected["coverage.strength"] == row["strength"]
    assert expected["coverage.covered"] is (row["is_benefit"] == "1")


def test_written_cases_load_back_as_scenarios(tmp_path: Path, sample: dict[str, list[Any]]) -> None:
    write(sample, tmp_path)
    loaded = load_scenarios(tmp_path)
    assert sorted(s.id for s in loaded) == sorted(c.id for cases in sample.values() for c in cases)


def _record(family: str, passed: bool, failure: str | None = None) -> ScenarioRecord:
    checks = [] if passed else [CheckOutcome(check="asked_product", passed=False, failure=failure)]
    return ScenarioRecord(
        id=f"derived.{family}.{failure}.{passed}",
        title="t",
        tool="odb.get",
        version=1,
        tags=["derived", f"family:{family}"],
        status="passed" if passed else "failed",
        checks=checks,
    )


def test_family_floors_fail_on_accuracy_and_on_an_unflagged_other_product() -> None:
    records = [_record("odb.x", True)] * 8 + [
        _record("odb.x", False, "WrongProduct"),
        _record("odb.x", False, "ValueMismatch"),
    ]
    stats = family_stats(records)["odb.x"]
    assert (stats.cases, stats.passed, stats.wrong_product) == (10, 8, 1)
    config = GateConfig.model_validate(
        {"floors": {"per_family": {"odb.x": {"pass_rate": 0.8, "wrong_product": 0}}}}
    )
    findings = {f.name: f.passed for f in family_findings(config, records, [])}
    assert findings == {"family odb.x pass_rate": True, "family odb.x wrong_product": False}


def test_before_and_after_tables_show_both_runs_per_family() -> None:
    from evals.read.families import before_after

    before = family_stats([_record("odb.x", False, "WrongProduct"), _record("odb.x", True)])
    after = family_stats([_record("odb.x", True), _record("odb.y", True)])
    table = before_after(before, after)
    assert "| odb.x | odb.get | 1 | 1/2 (50.0%) | 1/1 (100.0%) | 1 -> 0 |" in table
    assert "| odb.y | odb.get | 1 | - | 1/1 (100.0%) | - -> 0 |" in table
