"""Calibration of a published confidence: metrics on hand-computed fixtures, the report section,
compare's paired verdict and the gate's rules (evals/read/calibration*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from evals.read import calibration as cal
from evals.read import (
    calibration_answers,
    calibration_compare,
    compare,
    compare_report,
    gate,
    report,
)
from evals.read.calibration_answers import Answer
from evals.run.runlog import CheckOutcome, RunLog, RunSummary, ScenarioRecord

TOOL = "odb.get"
SILENT = "opa.get_section"  # publishes no confidence in these logs


def rec(
    sid: str,
    confidence: float | None,
    right: bool = True,
    *,
    tool: str = TOOL,
    tags: list[str] | None = None,
    failed_check: str = "equals",
    expect_error: bool = False,
    status: str | None = None,
) -> ScenarioRecord:
    """A scenario record whose result states ``confidence`` (None: no such field)."""
    checks = [CheckOutcome(check="no_tool_error", passed=True, implicit=True)]
    if expect_error:
        checks = [CheckOutcome(check="tool_error", passed=True)]
    if not right:
        checks.append(CheckOutcome(check=failed_check, passed=False, message="wrong"))
    result: dict[str, Any] = {"summary": "an answer"}
    if confidence is not None:
        result["confidence"] = confidence
    return ScenarioRecord(
        id=sid,
        title=sid,
        tool=tool,
        version=1,
        tags=tags or [],
        status=status or ("passed" if right else "failed"),  # type: ignore[arg-type]
        is_error=expect_error,
        checks=checks,
        result=None if expect_error else result,
    )


def log_of(records: list[ScenarioRecord], golden: str = "no-such-golden") -> RunLog:
    summary = RunSummary(
        status="complete",
        target="synthetic",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        duration_s=1.0,
        config={"golden": golden},
        counts={"scenarios": len(records)},
    )
    return RunLog(summary=summary, records=records)


def answers(conf: list[float], right: list[bool], tool: str = TOOL) -> list[Answer]:
    return [
        Answer(f"q{i}", 1, tool, None, r, c)
        for i, (c, r) in enumerate(zip(conf, right, strict=True))
    ]


# ----------------------------------------------------------------------------- metrics


def test_hand_computed_two_levels() -> None:
    """Five answers at 0.9 (4 right) and five at 0.3 (1 right), worked out by hand: bins
    {0.3: 1/5 right} and {0.9: 4/5}; ECE (5 * 0.1 + 5 * 0.1) / 10; Brier
    (4 * 0.01 + 0.81 + 4 * 0.09 + 0.49) / 10; AUROC: of 25 (right, wrong) pairs 16 ranked
    right, 4 + 4 tied (half each) = 20 / 25."""
    s = cal.measure("x", "tool", answers([0.9] * 5 + [0.3] * 5, [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]))
    assert [b.count for b in s.bins] == [5, 5]
    assert [(b.confidence, b.accuracy) for b in s.bins[:1]] == [pytest.approx((0.3, 0.2))]
    assert [(b.confidence, b.accuracy) for b in s.bins[1:]] == [pytest.approx((0.9, 0.8))]
    assert s.ece is not None and s.ece.value == pytest.approx(0.1)
    assert s.ece.low is not None and s.ece.high is not None and s.ece.low <= 0.1 <= s.ece.high
    assert s.brier is not None and s.brier.value == pytest.approx(0.17)
    assert s.auroc == pytest.approx(0.8) and s.auroc_note == ""
    assert (s.high_n, s.high_accuracy) == (5, pytest.approx(0.8))
    # the top five are tied at 0.9: any of them first, 0.8 expected; then 0.2 each below
    risk = s.risk
    assert risk is not None
    assert dict(risk.points) == pytest.approx(
        {0.1: 0.8, 0.25: 0.8, 0.5: 0.8, 0.75: 4.6 / 8, 1.0: 0.5}
    )
    kept = [0.8] * 5 + [(4 + 0.2 * j) / (5 + j) for j in range(1, 6)]
    assert risk.aurc == pytest.approx(float(np.mean([1 - a for a in kept])))
    assert risk.aurc_random == pytest.approx(0.5)
    assert risk.aurc_best == pytest.approx(np.mean([0] * 5 + [1 - 5 / k for k in range(6, 11)]))


def test_wrong_at_0_8_counts_from_the_boundary() -> None:
    """0.8 itself counts as acted on (so does 0.8 less a rounding hair), 0.7999 does not; the
    wrong answers at >= 0.8 are named by scenario id, in order."""
    conf = [0.8, 0.8 - 1e-12, 0.7999, 0.95, 0.99, 0.3]
    right = [False, True, False, True, False, False]
    s = cal.measure("x", "tool", answers(conf, right))
    assert s.acted_n == 4
    assert s.acted_wrong == ("q0", "q4")
    assert s.acted_accuracy == pytest.approx(0.5)
    assert s.value("accuracy_at_0.8") == pytest.approx(0.5)
    none_high = cal.measure("x", "tool", answers([0.5, 0.7], [True, False]))
    assert none_high.acted_n == 0 and none_high.value("accuracy_at_0.8") is None


def test_perfectly_calibrated() -> None:
    """Ten answers at each of 0.2, 0.5, 0.8 with 2, 5, 8 right: every bin on the diagonal."""
    conf = [0.2] * 10 + [0.5] * 10 + [0.8] * 10
    right = [i < 2 for i in range(10)] + [i < 5 for i in range(10)] + [i < 8 for i in range(10)]
    s = cal.measure("x", "tool", answers(conf, right))
    assert len(s.bins) == 3  # 6 asked (30 answers), ties never split
    assert s.ece is not None and s.ece.value == pytest.approx(0.0, abs=1e-12)
    # Brier = mean p(1 - p) here: (0.16 + 0.25 + 0.16) / 3
    assert s.brier is not None and s.brier.value == pytest.approx(0.19)
    assert s.auroc is not None and s.auroc > 0.5


def test_overconfident() -> None:
    """Every answer at 0.95, half of them right."""
    s = cal.measure("x", "tool", answers([0.95] * 20, [i % 2 == 0 for i in range(20)]))
    assert s.ece is not None and s.ece.value == pytest.approx(0.45)
    assert s.brier is not None and s.brier.value == pytest.approx((0.05**2 + 0.95**2) / 2)
    assert s.auroc == pytest.approx(0.5) and "constant" in s.auroc_note
    assert (s.high_n, s.high_accuracy) == (20, pytest.approx(0.5))


def test_constant_confidence_all_right_has_no_auroc() -> None:
    s = cal.measure("x", "tool", answers([1.0] * 12, [True] * 12))
    assert s.auroc is None and s.auroc_note == "not measured: all answers right"
    assert s.ece is not None and s.ece.value == 0.0 and s.brier is not None
    wrong = cal.measure("x", "tool", answers([0.4, 0.6], [False, False]))
    assert wrong.auroc is None and wrong.auroc_note == "not measured: all answers wrong"


def test_small_n_gets_fewer_bins_and_one_answer_no_interval() -> None:
    assert [cal.n_bins_for(n) for n in (1, 4, 9, 10, 27, 50, 500)] == [1, 1, 1, 2, 5, 10, 10]
    three = cal.measure("x", "tool", answers([0.2, 0.6, 0.9], [False, True, True]))
    assert len(three.bins) == 1
    one = cal.measure("x", "tool", answers([0.7], [True]))
    assert one.ece is not None and one.ece.value == pytest.approx(0.3) and one.ece.low is None


def test_vectorised_ece_and_auroc_match_the_library() -> None:
    """The bootstrap's row-wise ECE and AUROC equal the per-sample library figures (ties too)."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(10, 80))
        conf = np.round(rng.uniform(0, 1, n), 1)  # many ties
        right = rng.uniform(0, 1, n) < conf
        if right.all() or not right.any():
            continue
        k = cal.n_bins_for(n)
        assert cal.ece_rows(conf, right, k) == pytest.approx(
            cal.ece_of(cal.reliability(conf, right, k))
        )
        rows = calibration_compare._auroc_rows(conf[None, :], right[None, :].astype(float))
        assert rows[0] == pytest.approx(roc_auc_score(right, conf))


# ----------------------------------------------------------------------------- answers


def test_what_counts_as_an_answer_and_as_right() -> None:
    records = [
        rec("ok", 0.9),
        rec("wrong", 0.9, right=False),
        # an off-topic question answered "nothing found" too confidently: right, overconfident
        rec("offtopic", 0.8, right=False, failed_check="confidence_range"),
        rec("expects-error", None, expect_error=True),
        rec("harness", 0.9, status="error"),
        rec("silent", None, tool=SILENT),
    ]
    found, aside = calibration_answers.answers(records)
    assert {a.scenario: a.right for a in found} == {
        "ok": True,
        "wrong": False,
        "offtopic": True,
        "silent": True,
    }
    assert (aside.expect_error, aside.harness_errors) == (1, 1)
    c = cal.from_answers(found)
    silent = c.scope(SILENT, "tool")
    assert silent is not None and not silent.published and silent.value("ece") is None
    assert c.not_published == [SILENT]
    overall = c.scope("overall")
    assert overall is not None and overall.scored == 3 and overall.without_confidence == 1


def test_confidence_path_from_a_tools_sidecar(tmp_path: Path) -> None:
    """A golden file's <name>.tools.yaml may say where a tool states its confidence."""
    (tmp_path / "mine.yaml").write_text("[]\n")
    (tmp_path / "mine.tools.yaml").write_text("their.tool:\n  confidence: meta.certainty\n")
    record = rec("a", None, tool="their.tool").model_copy(
        update={"result": {"meta": {"certainty": 0.25}, "confidence": "high"}}
    )
    found, _ = calibration_answers.answers(
        [record], calibration_answers.confidence_paths(log_of([record], str(tmp_path)))[0]
    )
    assert found[0].confidence == 0.25
    # the default path holds text here: no confidence, never 0
    assert calibration_answers.read_confidence(record.result) is None
    assert calibration_answers.read_confidence({"confidence": True}) is None
    assert calibration_answers.read_confidence({"confidence": 1.5}) is None


# ----------------------------------------------------------------------------- report


def test_report_has_a_calibration_section_with_plots() -> None:
    records = [rec(f"q{i}", 0.9 if i % 4 else 0.2, right=i % 4 != 0) for i in range(20)]
    records += [rec(f"s{i}", None, tool=SILENT) for i in range(3)]
    doc = report.document(log_of(records))
    section = next(s for s in doc.sections if s.title == "Calibration")
    md = report.to_markdown(log_of(records))
    assert "## Calibration" in md and "ECE [95% CI]" in md
    assert f"| {SILENT} | 3 | no confidence published |" in md
    names = {getattr(b, "name", None) for b in section.blocks}
    assert {"calibration_reliability", "calibration_risk_coverage"} <= names


# ----------------------------------------------------------------------------- compare


def _pair(conf_a: float, conf_b: float) -> tuple[RunLog, RunLog]:
    """40 answers, 30 right, the same on both sides; A states conf_a on right answers and
    1 - conf_a on wrong ones, B states conf_b on every answer."""
    right = [i % 4 != 0 for i in range(40)]
    a = [rec(f"q{i}", conf_a if r else 1 - conf_a, r) for i, r in enumerate(right)]
    b = [rec(f"q{i}", conf_b, r) for i, r in enumerate(right)]
    return log_of(a), log_of(b)


def test_compare_overconfident_b_is_worse_and_exits_1() -> None:
    a, b = _pair(0.9, 0.95)
    result = compare.compare_logs(a, b)
    c = result.calibration
    assert c is not None
    overall = c.scope("overall")
    assert overall is not None and overall.verdict == calibration_compare.WORSE
    assert overall.brier is not None and overall.brier.mean_a == pytest.approx(0.01)
    assert overall.brier.mean_b == pytest.approx((30 * 0.05**2 + 10 * 0.95**2) / 40)
    assert overall.p_holm is not None and overall.p_holm < 0.05
    assert overall.auroc is not None and overall.auroc.a == 1.0 and overall.auroc.b == 0.5
    assert result.flips.newly_failing == [] and result.exit_code == compare.EXIT_REGRESSION
    md = compare_report.document(result)
    assert any(s.title == "Calibration" for s in md.sections)
    assert md.verdict is not None and "calibration worse: overall Brier" in md.verdict.text
    # the other way round B is better, and no regression
    better = compare.compare_logs(b, a)
    assert better.calibration is not None
    assert better.calibration.scope("overall").verdict == calibration_compare.BETTER  # type: ignore[union-attr]
    assert better.exit_code == compare.EXIT_OK


def test_compare_same_confidence_or_none_published() -> None:
    a, _ = _pair(0.9, 0.95)
    same = compare.compare_logs(a, a)
    assert same.calibration is not None and same.exit_code == compare.EXIT_OK
    assert same.calibration.scope("overall").verdict == calibration_compare.SAME  # type: ignore[union-attr]
    silent = log_of([rec(f"q{i}", None) for i in range(10)])
    none = compare.compare_logs(a, silent).calibration
    assert none is not None
    scope = none.scope(TOOL)
    assert scope is not None and scope.verdict == calibration_compare.NOT_COMPARED
    assert scope.reason == "B: no confidence published"


# ----------------------------------------------------------------------------- gate


def test_gate_rules_pass_fail_and_skip() -> None:
    rules = gate.GateConfig.model_validate(
        {
            "calibration": {
                "min_answers": 10,
                "overall": {"ece_max": 0.15, "accuracy_at_0_9_min": 0.9},
                "per_tool": {"*": {"ece_max": 0.15, "auroc_min": 0.6}},
            }
        }
    )
    calibrated, overconfident = _pair(0.9, 0.95)
    silent = [rec(f"s{i}", None, tool=SILENT) for i in range(12)]
    notes: list[str] = []
    held = gate.calibration_findings(rules, log_of(calibrated.records + silent), notes)
    assert held and all(f.passed for f in held), [f.message for f in held]
    assert any(f"(no confidence published): {SILENT}" in n for n in notes)
    failed = {
        f.name
        for f in gate.calibration_findings(rules, log_of(overconfident.records), [])
        if not f.passed
    }
    assert failed == {
        "calibration overall ECE",
        "calibration overall accuracy at confidence >= 0.9",
        f"calibration {TOOL} ECE",
        f"calibration {TOOL} AUROC",
    }
    # no wrong answer at >= 0.8 as a floor: the finding names the wrong answers stated that high
    strict = gate.GateConfig.model_validate(
        {"calibration": {"min_answers": 10, "overall": {"accuracy_at_0_8_min": 1.0}}}
    )
    records = [rec(f"r{i}", 0.85) for i in range(10)] + [rec("w1", 0.81, right=False)]
    (finding,) = gate.calibration_findings(strict, log_of(records), [])
    assert not finding.passed
    assert finding.name == "calibration overall accuracy at confidence >= 0.8"
    assert finding.message.endswith("wrong at >= 0.8: w1"), finding.message
    below = [rec(f"r{i}", 0.85) for i in range(10)] + [rec("w1", 0.79, right=False)]
    assert all(f.passed for f in gate.calibration_findings(strict, log_of(below), []))
    # every answer right: AUROC is not measured, so it is skipped with the reason, not failed
    notes = []
    all_right = log_of([rec(f"q{i}", 0.99) for i in range(12)])
    assert all(f.passed for f in gate.calibration_findings(rules, all_right, notes))
    assert any("AUROC not measured" in n and "all answers right" in n for n in notes)
    # too few answers: skipped, named
    notes = []
    assert gate.calibration_findings(rules, log_of(overconfident.records[:5]), notes) == []
    assert any("fewer than 10 answers" in n for n in notes)


def test_committed_gate_config_has_loose_calibration_rules() -> None:
    config = gate.load_config(gate.DEFAULT_CONFIG)
    assert config.calibration is not None
    assert config.calibration.overall.ece_max is not None
