"""Retrieval metrics against values computed by hand (gain = grade, log2 discount)."""

from __future__ import annotations

import copy

import pytest
from evals_testkit import record

from evals.run.extract import organisation, parent_section, retrieved_ids
from evals.run.metrics import (
    aggregate,
    mean_scores,
    metrics_frame,
    per_query,
    ranked_run,
    score_records,
)

# q1: judged a=3, b=1, c=2; ranking a, x, c, b
#   DCG  = 3/log2(2) + 0 + 2/log2(4) + 1/log2(5) = 3 + 1 + 0.430677 = 4.430677
#   IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4)     = 3 + 1.261860 + 0.5 = 4.761860
#   nDCG@10 = 0.930450; RR = 1; R@5 = 3/3; P@5 = 3/5; AP = (1/1 + 2/3 + 3/4) / 3 = 0.805556
# q2: judged d=1, e=1; ranking y, z, e
#   DCG = 1/log2(4) = 0.5; IDCG = 1 + 1/log2(3) = 1.630930; nDCG@10 = 0.306574
#   RR = 1/3; R@5 = 1/2; P@5 = 1/5; AP = (1/3) / 2 = 0.166667
# q3: judged f=2; no results at all -> every metric 0 (the query still counts)
QRELS = {"q1": {"a": 3, "b": 1, "c": 2}, "q2": {"d": 1, "e": 1}, "q3": {"f": 2}}
RUN = {"q1": ranked_run(["a", "x", "c", "b"]), "q2": ranked_run(["y", "z", "e"])}
EXPECTED = {
    "q1": {"nDCG@10": 0.930450, "RR@10": 1.0, "R@5": 1.0, "R@10": 1.0, "P@5": 0.6, "AP": 0.805556},
    "q2": {
        "nDCG@10": 0.306574,
        "RR@10": 1 / 3,
        "R@5": 0.5,
        "R@10": 0.5,
        "P@5": 0.2,
        "AP": 0.166667,
    },
    "q3": {"nDCG@10": 0.0, "RR@10": 0.0, "R@5": 0.0, "R@10": 0.0, "P@5": 0.0, "AP": 0.0},
}


def test_ranked_run_scores_strictly_decrease() -> None:
    scores = list(ranked_run(["a", "b", "c"]).values())
    assert scores == [3.0, 2.0, 1.0]


def test_per_query_matches_hand_computed_values() -> None:
    got = per_query(QRELS, RUN)
    assert set(got) == {"q1", "q2", "q3"}
    for qid, expected in EXPECTED.items():
        for metric, value in expected.items():
            assert got[qid][metric] == pytest.approx(value, abs=1e-5), (qid, metric)


def test_means_count_missing_queries_as_zero() -> None:
    means = mean_scores(per_query(QRELS, RUN))
    # nDCG: (0.930450 + 0.306574 + 0) / 3; MRR: (1 + 1/3 + 0) / 3
    assert means["nDCG@10"] == pytest.approx(0.412341, abs=1e-5)
    assert means["RR@10"] == pytest.approx(0.444444, abs=1e-5)


def test_per_query_does_not_mutate_inputs() -> None:
    qrels, run = copy.deepcopy(QRELS), copy.deepcopy(RUN)
    per_query(qrels, run)
    assert qrels == QRELS and run == RUN


def test_records_get_metrics_per_mode_and_aggregate_by_tool_org_mode() -> None:
    records = [
        record("q1", relevant={"cpso-a:s01": 1}, retrieved=["cpso-a:s01"]),
        record("q2", relevant={"pho-b:s01": 1}, retrieved=["x", "pho-b:s01"]),
        record("q3", tool="schedule.get", relevant={"A007": 1}, retrieved=[]),
        record("q4", tool="schedule.get"),  # no judgments: not a retrieval query
        record("q2", mode="keyword", relevant={"pho-b:s01": 1}, retrieved=["pho-b:s01"]),
    ]
    records = [r.model_copy(update={"org": organisation(r.tool, r.relevant)}) for r in records]
    scored = score_records(records)
    assert scored[0].metrics["RR@10"] == 1.0
    assert scored[1].metrics["RR@10"] == 0.5
    assert scored[2].metrics["RR@10"] == 0.0
    assert scored[3].metrics == {}
    assert scored[4].metrics["RR@10"] == 1.0  # scored within its own mode
    frame = metrics_frame(scored)
    main = frame[frame["mode"] == "default"]
    assert aggregate(main).loc["all", "RR@10"] == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    by_tool = aggregate(main, "tool")
    assert by_tool.loc["opa.search_sections", "RR@10"] == pytest.approx(0.75)
    assert by_tool.loc["schedule.get", "queries"] == 1
    by_org = aggregate(main, "org")
    assert set(by_org.index) == {"cpso", "pho", "ohip"}
    by_mode = aggregate(frame, "mode")
    assert by_mode.loc["keyword", "RR@10"] == 1.0


@pytest.mark.parametrize(
    ("tool", "result", "ids"),
    [
        (
            "opa.search_sections",
            {
                "sections": [
                    {"section_id": "d:s02:c1"},
                    {"section_id": "d:s02:c3"},
                    {"section_id": "d:s01"},
                ]
            },
            ["d:s02", "d:s01"],
        ),
        ("opa.get_section", {"section": {"section_id": "d:s04"}}, ["d:s04"]),
        (
            "odb.get",
            {
                "coverage": {"din": "1"},
                "interchangeable": [{"din": "2"}, {"din": "1"}],
                "lowest_cost": {"din": "2"},
            },
            ["1", "2"],
        ),
        (
            "coverage.answer",
            {
                "highlights": [
                    {"citations": [{"loc": "A"}, {"loc": "B"}]},
                    {"citations": [{"loc": "A"}]},
                ]
            },
            ["A", "B"],
        ),
        ("schedule.get", {"items": []}, []),
    ],
)
def test_retrieved_ids_registry(tool: str, result: dict[str, object], ids: list[str]) -> None:
    assert retrieved_ids(tool, result) == ids


def test_parent_section_and_organisation() -> None:
    assert parent_section("cpso-virtual-care:s03:c12") == "cpso-virtual-care:s03"
    assert organisation("opa.search_sections", ["cep-dementia:s01"]) == "cep"
    assert organisation("adp.get", []) == "adp"
    assert organisation("opa.search_sections", ["zzz"]) == "other"
