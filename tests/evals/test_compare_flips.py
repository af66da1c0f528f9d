"""compare names its regressions: scenarios that went from pass to fail, McNemar's exact test on
the pass/fail pairs, a newly failing critical scenario, and the checked facts that changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from evals_testkit import record

from evals.read.compare import EXIT_OK, EXIT_REGRESSION, compare_logs
from evals.read.compare_json import to_json
from evals.read.flips import exact_test, failure_lines
from evals.run.runlog import CheckOutcome, RunLog, ScenarioRecord


def test_exact_test_against_hand_computed_binomials() -> None:
    assert exact_test(0, 0) == 1.0
    assert exact_test(4, 0) == pytest.approx(1 / 16)  # four flips one way: 0.5^4
    assert exact_test(6, 0) == pytest.approx(1 / 64)
    assert exact_test(5, 1) == pytest.approx(7 / 64)  # P(X >= 5 | n 6) = (6 + 1) / 64
    assert exact_test(1, 5) == pytest.approx(63 / 64)


def _passages(
    statuses: list[str], tool: str = "source.passages", tags: list[str] | None = None
) -> list[ScenarioRecord]:
    return [record(f"{tool}-{i}", tool=tool, status=s, tags=tags) for i, s in enumerate(statuses)]


def test_a_tool_that_loses_six_of_twelve_is_a_regression_named_per_scenario(
    make_log: Callable[..., Path],
) -> None:
    """The independent backend's degraded source.passages: 6/12 -> 2/12 and nothing fixed,
    beside a tool that did not move."""
    good = _passages(["passed"] * 6 + ["failed"] * 6) + _passages(["passed"] * 10, tool="odb.get")
    bad = _passages(["passed"] * 2 + ["failed"] * 10) + _passages(["passed"] * 10, tool="odb.get")
    # the overall test: 4 pass -> fail, 0 back: p 1/16 > 0.05; so add two elsewhere
    bad[-1] = record("odb.get-9", tool="odb.get", status="failed")
    bad[-2] = record("odb.get-8", tool="odb.get", status="failed")
    result = compare_logs(RunLog.read(make_log(good)), RunLog.read(make_log(bad)))
    assert result.exit_code == EXIT_REGRESSION
    named = [(f.tool, f.scenario) for f in result.flips.newly_failing]
    assert named == [
        ("odb.get", "odb.get-8"),
        ("odb.get", "odb.get-9"),
        *[("source.passages", f"source.passages-{i}") for i in range(2, 6)],
    ]
    overall = next(t for t in result.flips.tests if t.scope == "overall")
    assert (overall.newly_failing, overall.newly_passing) == (6, 0)
    assert overall.p == pytest.approx(1 / 64) and overall.significant
    body = to_json(result)["flips"]
    assert body["newly_failing"][0]["failures"] == [
        "equals at coverage.covered: expected True, got False"
    ]


def test_a_newly_failing_critical_scenario_fails_the_compare_alone(
    make_log: Callable[..., Path],
) -> None:
    good = _passages(["passed"] * 12, tags=["critical"])
    bad = list(good)
    bad[3] = record("source.passages-3", tool="source.passages", status="failed", tags=["critical"])
    result = compare_logs(RunLog.read(make_log(good)), RunLog.read(make_log(bad)))
    assert [f.scenario for f in result.flips.critical_failing] == ["source.passages-3"]
    assert not result.flips.significant  # one flip is not significant by itself
    assert result.exit_code == EXIT_REGRESSION


def test_as_many_fixed_as_broken_is_no_regression(make_log: Callable[..., Path]) -> None:
    good = _passages(["passed", "passed", "failed", "failed"])
    other = _passages(["failed", "failed", "passed", "passed"])
    result = compare_logs(RunLog.read(make_log(good)), RunLog.read(make_log(other)))
    assert result.exit_code == EXIT_OK
    assert len(result.flips.newly_failing) == len(result.flips.newly_passing) == 2


def _priced(scenario: str, price: float) -> ScenarioRecord:
    return ScenarioRecord(
        id=scenario,
        title=scenario,
        tool="odb.get",
        version=1,
        status="passed",
        checks=[
            CheckOutcome(check="no_tool_error", passed=True, implicit=True),
            CheckOutcome(check="at_least", path="coverage.price", passed=True),
            CheckOutcome(check="exists", path="interchangeable[*].din", passed=True),
        ],
        result={"coverage": {"price": price, "din": "02443937"}, "interchangeable": [{"din": "1"}]},
    )


def test_a_changed_price_is_named_even_when_every_check_still_passes(
    make_log: Callable[..., Path],
) -> None:
    a = [_priced("odb-x", 2.71), _priced("odb-y", 1.00)]
    b = [_priced("odb-x", 3.12), _priced("odb-y", 1.00)]
    result = compare_logs(RunLog.read(make_log(a)), RunLog.read(make_log(b)))
    assert [(c.scenario, c.path, c.a, c.b) for c in result.flips.facts] == [
        ("odb-x", "coverage.price", 2.71, 3.12)
    ]


def test_one_missing_id_is_one_failure_not_a_cascade() -> None:
    checks = [
        CheckOutcome(
            check="contains", path=f"passages[{i}].text", passed=False, message=f"[{i}] no A101"
        )
        for i in range(5)
    ] + [CheckOutcome(check="exists", path="passages", passed=False, message="unknown chunk id")]
    rec = ScenarioRecord(
        id="s", title="s", tool="source.passages", version=1, status="failed", checks=checks
    )
    assert failure_lines(rec) == ("[0] no A101", "unknown chunk id")
