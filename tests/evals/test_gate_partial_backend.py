"""The gate on a backend that serves some of the golden tools and has no search modes: its own
tools judged, the rest listed as not served, the ablation rules skipped with the reason."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from evals.read.baseline import Baseline, BaselineScenario
from evals.read.gate import evaluate
from evals.read.gate_config import load_config
from evals.run.runlog import CheckOutcome, RunLog, RunSummary, ScenarioRecord

TOOLS = {
    "odb.get": {"inputSchema": {"properties": {"drug": {"type": "string"}}}, "outputSchema": {}},
    "source.passages": {
        "inputSchema": {"properties": {"ids": {"type": "array"}}},
        "outputSchema": {},
    },
}


def _record(
    sid: str, tool: str, passed: bool = True, tags: list[str] | None = None
) -> ScenarioRecord:
    return ScenarioRecord(
        id=sid,
        title=sid,
        tool=tool,
        version=1,
        tags=tags or [],
        status="passed" if passed else "failed",
        checks=[CheckOutcome(check="no_tool_error", passed=True, implicit=True)],
        latency_ms=5.0,
    )


def _log(records: list[ScenarioRecord], surface: dict[str, object] | None = TOOLS) -> RunLog:
    summary = RunSummary(
        status="complete",
        target="stdio:their-backend",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        duration_s=1.0,
        tools=sorted(surface or {}),
        missing_tools=["adp.get", "schedule.get"],
        modes=["default"],
    )
    return RunLog(summary=summary, records=records, surface=surface)  # type: ignore[arg-type]


def _baseline() -> Baseline:
    return Baseline(
        created_at=datetime.now(UTC).isoformat(),
        run="r",
        target="their-backend",
        scenarios={
            "odb-1": BaselineScenario(version=1, tool="odb.get", critical=True, passed=True),
            "adp-1": BaselineScenario(version=1, tool="adp.get", critical=True, passed=True),
        },
    )


def test_without_allow_missing_the_unserved_tools_fail_the_gate() -> None:
    log = _log([_record("odb-1", "odb.get", tags=["critical"]), _record("sp-1", "source.passages")])
    report = evaluate(log, load_config_default(), _baseline())
    assert any("adp-1: in the baseline but missing" in f.message for f in report.failures)


def test_allow_missing_judges_the_served_tools_and_names_the_rest() -> None:
    log = _log([_record("odb-1", "odb.get", tags=["critical"]), _record("sp-1", "source.passages")])
    report = evaluate(log, load_config_default(), _baseline(), allow_missing=True)
    messages = [f.message for f in report.failures]
    assert not any("adp" in m or "schedule" in m for m in messages), messages
    assert any("not served by this backend" in n and "adp.get" in n for n in report.notes)
    # a served tool's own critical failure still fails
    bad = _log([_record("odb-1", "odb.get", passed=False, tags=["critical"])])
    failed = evaluate(bad, load_config_default(), _baseline(), allow_missing=True).failures
    assert any(f.name == "critical odb-1" for f in failed)


def test_ablation_rules_are_skipped_with_the_reason_when_no_tool_has_a_search_mode() -> None:
    log = _log([_record("odb-1", "odb.get"), _record("sp-1", "source.passages")])
    report = evaluate(log, load_config_default(), None, allow_missing=True)
    assert not [f for f in report.findings if f.kind == "ablation"]
    assert not [f for f in report.failures if "not measured (run with --ablation)" in f.message]
    assert any("no tool with a search_mode" in n for n in report.notes)


def test_a_backend_with_search_modes_that_was_not_ablated_still_fails_the_ablation_rules() -> None:
    surface = {
        name: {**spec, "inputSchema": {"properties": {"search_mode": {"enum": ["hybrid"]}}}}
        for name, spec in TOOLS.items()
    }
    log = _log([_record("odb-1", "odb.get")], surface=surface)
    report = evaluate(log, load_config_default(), None, allow_missing=True)
    assert any("not measured (run with --ablation)" in f.message for f in report.failures)


def load_config_default():  # type: ignore[no-untyped-def]
    from pathlib import Path

    return load_config(Path(__file__).resolve().parents[2] / "evals" / "gate.yaml")


def _team_baseline() -> Baseline:
    """A team's own baseline: its critical odb-1 passed, its critical odb-2 never did."""
    return Baseline(
        created_at=datetime.now(UTC).isoformat(),
        run="r",
        target="their-backend",
        scenarios={
            "odb-1": BaselineScenario(version=1, tool="odb.get", critical=True, passed=True),
            "odb-2": BaselineScenario(version=1, tool="odb.get", critical=True, passed=False),
            "odb-3": BaselineScenario(version=1, tool="odb.get", critical=False, passed=True),
        },
    )


def test_a_team_gates_its_own_backend_on_its_own_baseline() -> None:
    team = load_config(Path(__file__).parents[2] / "evals" / "gate.team.yaml")
    same = _log(
        [
            _record("odb-1", "odb.get", tags=["critical"]),
            _record("odb-2", "odb.get", passed=False, tags=["critical"]),
            _record("odb-3", "odb.get"),
        ]
    )
    report = evaluate(same, team, _team_baseline(), allow_missing=True)
    # our floors are not theirs; a critical miss they always had is listed, not failed
    assert report.exit_code == 0, [f.message for f in report.failures]
    assert any("failed in the baseline too" in f.message for f in report.findings)
    worse = _log(
        [
            _record("odb-1", "odb.get", passed=False, tags=["critical"]),
            _record("odb-2", "odb.get", passed=False, tags=["critical"]),
            _record("odb-3", "odb.get", passed=False),
        ]
    )
    failed = {f.name for f in evaluate(worse, team, _team_baseline(), allow_missing=True).failures}
    assert "critical odb-1" in failed and "critical odb-2" not in failed
    assert any("odb-3" in name for name in failed)
