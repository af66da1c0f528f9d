"""Acceptable tools of a routing case from the tools' specs, strict versus accepting metrics,
name expansion, the split of cases into a tuning and a held-out half, and the catalogue built
in the background."""

from __future__ import annotations

from typing import Any

from evals.routing.acceptable import alternatives, is_validation_only
from evals.routing.cases import RoutingCase
from evals.routing.metrics import Outcome, summary
from evals.routing.tune import halves
from tool_search.ranking_config import acronym_expansion, expanded_name


def test_domain_tool_questions_are_also_answered_by_the_orchestrator() -> None:
    others, basis = alternatives("odb.get", {"q": "Is Ozempic covered?"}, [], [])
    assert others == ("coverage.answer",)
    assert basis and "seed 002" in basis[0]


def test_orchestrator_question_about_one_domain_accepts_that_domain_tool() -> None:
    assert alternatives("coverage.answer", {"hints": {"drug": "apixaban"}}, [], [])[0] == (
        "odb.get",
    )
    assert alternatives("coverage.answer", {}, [], ["coverage", "billing"])[0] == ("schedule.get",)


def test_orchestrator_question_about_several_domains_accepts_only_itself() -> None:
    hints = {"codes": ["C122"], "device": {"type": "walker"}, "drug": "apixaban"}
    assert alternatives("coverage.answer", {"hints": hints}, [], [])[0] == ()
    assert alternatives("coverage.answer", {}, [], ["multi-domain", "billing", "device"])[0] == ()


def test_general_search_confined_to_one_organisation_accepts_its_tool() -> None:
    assert alternatives("opa.search_sections", {"source_org": "pho"}, [], [])[0] == (
        "opa.ipac_guidance",
    )
    documents = [[{"check": "matches", "value": "cpso-virtual-care"}], ["cpso-virtual-care:s01"]]
    assert alternatives("opa.search_sections", {"query": "x"}, documents, [])[0] == (
        "opa.policy_check",
    )
    # a Ministry document has no specialised tool; documents of two organisations name none
    assert alternatives("opa.search_sections", {"source_org": "moh"}, [], [])[0] == ()
    two = [["cpso-a:s01", "pho-b:s02"]]
    assert alternatives("opa.search_sections", {"query": "x"}, two, [])[0] == ()


def test_specialised_opa_tools_accept_the_general_search_and_others_stand_alone() -> None:
    assert alternatives("opa.policy_check", {}, [], [])[0] == ("opa.search_sections",)
    assert alternatives("opa.get_section", {}, [], [])[0] == ()
    assert alternatives("source.passages", {}, [], [])[0] == ()


def test_validation_only_scenarios_are_not_routing_cases() -> None:
    assert is_validation_only([{"check": "tool_error"}])
    assert not is_validation_only([{"check": "tool_error"}, {"check": "equals"}])
    assert not is_validation_only([])


def test_strict_counts_only_the_cases_own_tool() -> None:
    case = RoutingCase("x", "t", ("s/own", "s/also"), "golden", "s")
    outcome = Outcome(case, ("s/also", "s/other", "s/own"))
    assert (outcome.rank, outcome.strict_rank) == (1, 3)
    assert summary([outcome])["top1"] == 1.0
    assert summary([outcome], strict=True) == {"cases": 1, "top1": 0.0, "top3": 1.0, "mrr": 0.3333}


def test_acronym_expansion_reads_adjacent_capitalised_words() -> None:
    text = "Ontario Drug Benefit (ODB) formulary: is a drug covered"
    assert acronym_expansion("odb", text) == "Ontario Drug Benefit"
    assert acronym_expansion("odb", "Ontario drug list with Benefit") == ""
    assert expanded_name("odb.get", "", text) == "odb get Ontario Drug Benefit"
    assert expanded_name("search_trials", "", text) == "search trials"


def test_halves_split_every_case_once_and_depend_on_the_seed() -> None:
    cases = [RoutingCase(f"c{i}", "t", ("s/a",), "golden", "s") for i in range(200)]
    tune, held = halves(cases, 0)
    assert len(tune) + len(held) == 200 and not {c.id for c in tune} & {c.id for c in held}
    assert 60 < len(tune) < 140
    assert {c.id for c in halves(cases, 1)[0]} != {c.id for c in tune}


def test_background_service_reports_a_failed_build_to_every_call() -> None:
    import pytest

    from tool_search.background import BackgroundService

    def broken() -> Any:
        raise ValueError("no such catalogue")

    service = BackgroundService(broken)
    with pytest.raises(RuntimeError, match="no such catalogue"):
        service.categories()


def test_a_mistyped_spec_is_caught_before_the_catalogue_is_read() -> None:
    import pytest

    from tool_search.sources import SourceError, check_spec

    check_spec("inprocess")
    check_spec("distractors:10")
    check_spec("tool_search/catalogues/clinical_trials_assistant.json")
    with pytest.raises(SourceError, match="unknown catalogue"):
        check_spec("tool_search/catalogues/no_such_file.json")
