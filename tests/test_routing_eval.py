"""Routing metrics on hand-computed rankings, cases built from their sources, the floors check
and the sign test of the compare section."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.routing.cases import RoutingCase, file_cases, question_of
from evals.routing.compare import catalogue_spec, sign_test
from evals.routing.metrics import Outcome, confusion, grouped, summary
from evals.routing.report import check_floors


def _case(i: int, expected: str) -> RoutingCase:
    return RoutingCase(f"c{i}", "text", (expected,), "golden", expected.split("/")[0])


# ranks 1, 2, 4 and absent: top-1 1/4, top-3 2/4, MRR (1 + 1/2 + 1/4 + 0) / 4 = 0.4375
OUTCOMES = [
    Outcome(_case(1, "s/a"), ("s/a", "s/b")),
    Outcome(_case(2, "s/a"), ("s/b", "s/a")),
    Outcome(_case(3, "s/b"), ("s/a", "s/c", "s/d", "s/b")),
    Outcome(_case(4, "s/c"), ("s/a", "s/b")),
]


def test_summary_counts_top1_top3_and_mrr() -> None:
    assert summary(OUTCOMES) == {"cases": 4, "top1": 0.25, "top3": 0.5, "mrr": 0.4375}


def test_per_tool_groups_by_the_expected_tool() -> None:
    per_tool = grouped(OUTCOMES, "tool")
    assert per_tool["s/a"] == {"cases": 2, "top1": 0.5, "top3": 1.0, "mrr": 0.75}
    assert per_tool["s/c"]["mrr"] == 0.0


def test_confusion_names_who_took_the_questions() -> None:
    rows = confusion(OUTCOMES)
    assert rows[0] == {"expected": "s/a", "ranked_first": "s/b", "cases": 1}
    assert {(r["expected"], r["ranked_first"]) for r in rows} == {
        ("s/a", "s/b"),
        ("s/b", "s/a"),
        ("s/c", "s/a"),
    }


def test_any_listed_tool_counts_as_right() -> None:
    case = RoutingCase("x", "t", ("s/a", "s/b"), "file", "s")
    assert Outcome(case, ("s/b", "s/a")).rank == 1


def test_question_of_prefers_the_question_and_otherwise_words_the_arguments() -> None:
    assert (
        question_of("schedule.get", {"q": "Can I bill C124?", "codes": ["C124"]})
        == "Can I bill C124?"
    )
    assert (
        question_of("opa.get_section", {"section_id": "cpso-x:s01", "include_parent": True})
        == "section id cpso-x:s01"
    )


def test_seed003_cases_cover_all_seventeen_tools() -> None:
    cases = file_cases(Path("evals/routing/seed003_cases.yaml"))
    assert len({c.expected[0] for c in cases}) == 17
    assert all(c.catalogue == "trials" and c.source.startswith("seed003_cases:") for c in cases)


def test_floors_report_each_metric_below_its_minimum(tmp_path: Path) -> None:
    floors = tmp_path / "floors.yaml"
    floors.write_text("steps:\n  reference:\n    hybrid: {top1: 0.9, top3: 0.5}\n")
    record = {
        "steps": [
            {"name": "reference", "modes": {"hybrid": {"overall": {"top1": 0.8, "top3": 0.6}}}}
        ]
    }
    assert check_floors(record, floors) == ["reference hybrid top1 0.8000 < floor 0.9"]


def test_sign_test_is_exact() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)  # two-sided, n = 5
    assert sign_test(3, 3) == 1.0


def test_compare_targets_map_to_catalogues() -> None:
    assert catalogue_spec("hybrid") == "inprocess"
    assert catalogue_spec("stdio:python -m x") == "reference=stdio:python -m x"
