"""The gate: exit codes 0 / 1 / 2 from run logs alone, readable reasons, JUnit/JSON/Markdown."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from evals_testkit import record
from fake_server import build_server

from evals.read import baseline
from evals.read.gate import (
    DEFAULT_CONFIG,
    EXIT_FAIL,
    EXIT_HARNESS,
    EXIT_PASS,
    run_gate,
)
from evals.read.gate_config import load_config
from evals.run.runlog import RunLog
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from ocm_cli.program import main

GATE_YAML = """\
floors:
  overall: {pass_rate: 1.0, nDCG@10: 0.5}
  per_tool:
    "*": {MRR@10: 0.5}
tolerance:
  overall: {default: 0.02}
  per_scenario: {default: 0.05}
"""

GOOD = {"nDCG@10": 1.0, "RR@10": 1.0}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "gate.yaml"
    path.write_text(GATE_YAML, encoding="utf-8")
    return path


def gate(run_dir: Path, config: Path, base: Path | None = None) -> int:
    args = ["gate", "--run", str(run_dir), "--config", str(config)]
    args += ["--baseline", str(base)] if base else ["--no-baseline"]
    return main(args)


def write_baseline(run_dir: Path, path: Path) -> Path:
    return baseline.write(baseline.from_run(RunLog.read(run_dir), run_dir), path)


def gate_json(run_dir: Path) -> dict[str, object]:
    record = json.loads((run_dir / "gate.record.json").read_text())
    assert record["header"]["kind"] == "gate"
    assert (
        record["header"]["exit_code"]
        == {"pass": 0, "fail": 1, "error": 2}[record["body"]["result"]]
    )
    data: dict[str, object] = record["body"]
    return data


def test_committed_gate_config_is_valid() -> None:
    config = load_config(DEFAULT_CONFIG)
    # Floors protect the measured reference level; they are never looser than these.
    assert config.floors.overall["nDCG@10"] >= 0.80
    assert config.floors.overall["RR@10"] >= 0.85
    assert config.floors.per_mode["hybrid"]["nDCG@10"] >= 0.80
    assert config.ablation[0].min_margin == 0.03
    assert config.critical_tag == "critical" and config.fail_on_new_failures


def test_passing_run_and_its_own_baseline(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    run = make_log([record("q1", metrics=GOOD, tags=["critical"]), record("q2", metrics=GOOD)])
    base = write_baseline(run, tmp_path / "baseline.json")
    assert gate(run, config, base) == EXIT_PASS
    result = gate_json(run)
    assert result["result"] == "pass" and result["failures"] == []
    assert "# Eval gate: PASS" in (run / "gate.md").read_text()


def test_lowered_score_beyond_tolerance_fails_with_reason(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    before = make_log([record("q1", metrics=GOOD), record("q2", metrics=GOOD)])
    base = write_baseline(before, tmp_path / "baseline.json")
    after = make_log(
        [record("q1", metrics={"nDCG@10": 0.9, "RR@10": 1.0}), record("q2", metrics=GOOD)]
    )
    assert gate(after, config, base) == EXIT_FAIL
    md = (after / "gate.md").read_text()
    assert "q1 nDCG@10: 1.0000 -> 0.9000 (change -0.1000; exceeds tolerance 0.0500 by 0.0500)" in md
    assert "overall nDCG@10 vs baseline: 1.0000 -> 0.9500" in md
    # A drop within tolerance is fine.
    within = make_log(
        [record("q1", metrics={"nDCG@10": 0.97, "RR@10": 1.0}), record("q2", metrics=GOOD)]
    )
    config.write_text(GATE_YAML.replace("overall: {default: 0.02}", "overall: {default: 0.05}"))
    assert gate(within, config, base) == EXIT_PASS


MODEL_A = {"embedding_model": "model-a", "index_fingerprint": "f" * 64}


@pytest.mark.parametrize(
    ("run_env", "refused"),
    [
        ({**MODEL_A, "embedding_model": "model-b"}, "embedding_model: baseline 'model-a'"),
        ({**MODEL_A, "index_fingerprint": "0" * 64}, "index_fingerprint: baseline 'fff"),
    ],
)
def test_the_gate_refuses_a_baseline_made_with_another_model_or_index(
    make_log: Callable[..., Path],
    config: Path,
    tmp_path: Path,
    run_env: dict[str, str],
    refused: str,
) -> None:
    before = make_log([record("q1", metrics=GOOD)], environment=MODEL_A)
    base = write_baseline(before, tmp_path / "baseline.json")
    # Identical scores: only the model or index differs, and that alone is refused.
    after = make_log([record("q1", metrics=GOOD)], environment=run_env)
    assert gate(after, config, base) == EXIT_HARNESS
    result = gate_json(after)
    assert result["result"] == "error"
    message = str(result["error"])
    assert refused in message and "Re-baseline deliberately" in message
    # The same model and index on another machine compare as usual.
    elsewhere = make_log(
        [record("q1", metrics=GOOD)], environment={**MODEL_A, "machine": {"cpu_model": "ARM"}}
    )
    assert gate(elsewhere, config, base) == EXIT_PASS


def test_a_run_that_cannot_name_its_model_is_compared_with_a_note(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    base = write_baseline(
        make_log([record("q1", metrics=GOOD)], environment=MODEL_A), tmp_path / "b.json"
    )
    run = make_log([record("q1", metrics=GOOD)], environment={"machine": {}})
    assert gate(run, config, base) == EXIT_PASS
    assert "does not say which model and index" in (run / "gate.md").read_text()


def test_new_failure_of_critical_scenario_fails(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    before = make_log([record("crit", metrics=GOOD, tags=["critical"])])
    base = write_baseline(before, tmp_path / "baseline.json")
    config.write_text(
        GATE_YAML.replace("pass_rate: 1.0", "pass_rate: 0.0")
    )  # only the critical rule bites
    after = make_log([record("crit", metrics=GOOD, tags=["critical"], status="failed")])
    assert gate(after, config, base) == EXIT_FAIL
    failures = gate_json(after)["failures"]
    assert isinstance(failures, list)
    kinds = {f["kind"] for f in failures}
    assert kinds == {"critical", "new_failure"}
    assert any("expected True, got False" in f["message"] for f in failures)


def test_critical_scenario_missing_from_run_fails(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    before = make_log([record("crit", metrics=GOOD, tags=["critical"]), record("q2", metrics=GOOD)])
    base = write_baseline(before, tmp_path / "baseline.json")
    after = make_log([record("q2", metrics=GOOD)])
    assert gate(after, config, base) == EXIT_FAIL
    assert "in the baseline but missing from this run" in (after / "gate.md").read_text()


def test_floor_miss_says_by_how_much(make_log: Callable[..., Path], config: Path) -> None:
    run = make_log([record("q1", metrics={"nDCG@10": 0.3, "RR@10": 0.25})])
    assert gate(run, config) == EXIT_FAIL
    md = (run / "gate.md").read_text()
    assert "overall nDCG@10: nDCG@10 = 0.3000, needs >= 0.5000 (missed by 0.2000)" in md
    assert "opa.search_sections MRR@10: MRR@10 = 0.2500, needs >= 0.5000 (missed by 0.2500)" in md


def test_ablation_rule_needs_an_ablation(make_log: Callable[..., Path], config: Path) -> None:
    config.write_text(
        GATE_YAML + "ablation:\n  - {mode: hybrid, metric: nDCG@10, min_margin: 0.03}\n"
    )
    plain = make_log([record("q1", metrics=GOOD)])
    assert gate(plain, config) == EXIT_FAIL
    assert "not measured (run with --ablation)" in (plain / "gate.md").read_text()
    ablated = make_log(
        [
            record("q1", metrics=GOOD),
            record("q1", mode="hybrid", metrics={"nDCG@10": 0.90}),
            record("q1", mode="vector", metrics={"nDCG@10": 0.88}),
            record("q1", mode="keyword", metrics={"nDCG@10": 0.70}),
        ]
    )
    assert gate(ablated, config) == EXIT_FAIL
    assert "margin +0.0200, needs >= +0.0300 (short by 0.0100)" in (ablated / "gate.md").read_text()


async def _run(tmp_path: Path, golden: Path, broken: str | None) -> Path:
    out = tmp_path / f"run-{broken or 'ok'}"
    await execute(
        server_target(build_server(broken=broken)),
        load_scenarios(golden),
        out,
        options=RunOptions(ablation=True, ragas=False),
    )
    return out


@pytest.mark.parametrize(
    ("broken", "reason"),
    [
        ("schema", "schema_valid at $.provenance"),  # schema-invalid response
        (
            "error",
            "no_tool_error at $: expected a result",
        ),  # tool error where a result was expected
        (
            "value",
            "equals at coverage.covered: expected True, got False",
        ),  # an expected value made wrong
        ("rank", "fake-search-virtual-care nDCG@10"),  # a lowered score beyond tolerance
    ],
)
async def test_broken_backend_fails_the_gate(
    tmp_path: Path, golden_fake: Path, config: Path, broken: str, reason: str
) -> None:
    good = await _run(tmp_path, golden_fake, None)
    base = write_baseline(good, tmp_path / "baseline.json")
    assert gate(good, config, base) == EXIT_PASS
    bad = await _run(tmp_path, golden_fake, broken)
    assert gate(bad, config, base) == EXIT_FAIL
    assert reason in (bad / "gate.md").read_text()


def test_junit_has_one_testcase_per_scenario_and_rule(
    make_log: Callable[..., Path], config: Path
) -> None:
    run = make_log([record("q1", metrics=GOOD), record("q2", metrics=GOOD, status="failed")])
    assert gate(run, config) == EXIT_FAIL
    root = ET.parse(run / "junit.xml").getroot()
    suites = {suite.get("name"): suite for suite in root}
    scenarios = suites["evals.scenarios"]
    assert [case.get("name") for case in scenarios] == ["q1", "q2"]
    assert scenarios.get("failures") == "1"
    assert scenarios.find("testcase[@name='q2']/failure") is not None
    rules = suites["evals.gate"]
    # overall pass_rate + overall nDCG@10 + one MRR@10 floor for the one tool
    # + that tool's spec p50/p95 latency ceilings (load/slo.yaml)
    assert int(rules.get("tests", "0")) == 5
    assert rules.find("testcase[@name='overall pass_rate']/failure") is not None


def test_harness_errors_exit_2(make_log: Callable[..., Path], config: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-run"
    assert gate(missing, config) == EXIT_HARNESS
    assert "run.record.json: missing" in (missing / "gate.md").read_text()
    assert (missing / "junit.xml").is_file()
    aborted = make_log([record("q1", metrics=GOOD)], status="aborted", error="TargetError: boom")
    assert gate(aborted, config) == EXIT_HARNESS
    assert "run log is aborted: TargetError: boom" in (aborted / "gate.md").read_text()
    empty = make_log([])
    assert gate(empty, config) == EXIT_HARNESS
    ok = make_log([record("q1", metrics=GOOD)])
    bad_config = tmp_path / "bad.yaml"
    bad_config.write_text("floors: {overall: {nDCG@10: high}}\n")
    assert gate(ok, bad_config) == EXIT_HARNESS
    broken_baseline = tmp_path / "broken.json"
    broken_baseline.write_text("{not json")
    assert gate(ok, config, broken_baseline) == EXIT_HARNESS
    report = run_gate(
        ok, config_path=config, baseline_path=tmp_path / "missing.json", require_baseline=True
    )
    assert report.exit_code == EXIT_HARNESS and "not found" in (report.error or "")
    (ok / "scenarios.jsonl").write_text('{"id": 1}\n')
    assert gate(ok, config) == EXIT_HARNESS


def test_changed_scenario_version_is_not_compared(
    make_log: Callable[..., Path], config: Path, tmp_path: Path
) -> None:
    before = make_log([record("q1", metrics=GOOD)])
    base = write_baseline(before, tmp_path / "baseline.json")
    after = make_log([record("q1", metrics={"nDCG@10": 0.6, "RR@10": 1.0}, version=2)])
    assert gate(after, config, base) == EXIT_PASS
    assert "version 1 -> 2, not compared" in (after / "gate.md").read_text()
