"""Routing metrics on hand-computed rankings, cases built from their sources, the floors check
and the sign test of the compare section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from evals.routing.cases import RoutingCase, file_cases, fingerprint, load_cases, question_of
from evals.routing.compare import catalogue_spec, sign_test
from evals.routing.metrics import Outcome, confusion, grouped, summary
from evals.routing.report import FLOORS, check_floors, floors_not_applied, measured_floors


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


def _record(fingerprint: str, top1: float = 0.8) -> dict[str, Any]:
    summary_ = {"cases": 10, "top1": top1, "top3": 0.9, "mrr": 0.85}
    return {
        "cases": 10,
        "cases_fingerprint": fingerprint,
        "steps": [
            {"name": "reference", "modes": {"hybrid": {"overall": summary_, "strict": summary_}}}
        ],
    }


def test_floors_measured_on_other_cases_do_not_judge(tmp_path: Path) -> None:
    floors = tmp_path / "floors.yaml"
    floors.write_text(
        "cases: {count: 10, fingerprint: aaaa}\nsteps:\n  reference:\n    hybrid: {top1: 0.9}\n"
    )
    assert floors_not_applied(_record("aaaa"), floors) is None
    assert check_floors(_record("aaaa"), floors) == ["reference hybrid top1 0.8000 < floor 0.9"]
    reason = floors_not_applied(_record("bbbb"), floors)
    assert reason is not None and "aaaa" in reason and "bbbb" in reason


def test_written_floors_sit_a_point_under_and_name_their_cases() -> None:
    written = measured_floors(_record("cccc", top1=0.8349))
    assert written["cases"] == {"count": 10, "fingerprint": "cccc"}
    # 0.8349 - 0.01 = 0.8249, down to the half point: 0.82
    assert written["steps"]["reference"]["hybrid"]["top1"] == 0.82
    assert written["steps"]["reference"]["hybrid"]["strict_top3"] == 0.89


def test_fingerprint_follows_ids_questions_and_accepted_tools() -> None:
    one = [_case(1, "s/a"), _case(2, "s/b")]
    assert fingerprint(one) == fingerprint(list(reversed(one)))
    assert fingerprint(one) != fingerprint([_case(1, "s/a"), _case(2, "s/c")])
    assert fingerprint(one) != fingerprint(one[:1])


@pytest.mark.usefixtures("settings")  # the derived cases read the index
def test_committed_floors_were_measured_on_todays_cases() -> None:
    """A change to the cases (golden, derived families, seed 003) must come with floors measured
    on them (`make routing-floors`), or `make routing` cannot judge the search."""
    floors = yaml.safe_load(FLOORS.read_text(encoding="utf-8"))
    cases = load_cases("sources")
    assert floors["cases"] == {"count": len(cases), "fingerprint": fingerprint(cases)}
