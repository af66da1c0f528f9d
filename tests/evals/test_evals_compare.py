"""compare: paired tests on per-query scores, Holm, verdicts, contract diff, exit codes 0/1/2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from evals_testkit import record
from fake_server import build_server
from scipy import stats as sps

from evals import contract
from evals.read import stats
from evals.read.compare import EXIT_HARNESS, EXIT_OK, EXIT_REGRESSION, compare_logs
from evals.run.runlog import RunLog
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from ocm_cli.program import main

# ----------------------------------------------------------------------------- statistics


def test_paired_tests_against_hand_computed_values() -> None:
    a = [0.2, 0.4, 0.6, 0.8, 0.5]
    b = [0.3, 0.6, 0.6, 0.9, 0.9]
    result = stats.paired(a, b)
    # d = [0.1, 0.2, 0, 0.1, 0.4]: mean 0.16, sd 0.151658 -> t = 0.16 / (0.151658 / sqrt 5)
    assert result.diff == pytest.approx(0.16)
    assert result.effect_size == pytest.approx(0.16 / 0.151658, rel=1e-4)
    t = 0.16 / (0.151658 / 5**0.5)
    assert result.p_t == pytest.approx(2 * sps.t.sf(t, df=4), rel=1e-3)
    # exact randomization over 2^5 sign flips: only the all-positive and all-negative patterns
    # of the four non-zero differences reach |mean| >= 0.16 -> 2 x 2 (zero flips either way) / 32
    assert result.p_perm == pytest.approx(4 / 32)
    assert result.ci_low is not None and result.ci_high is not None
    assert 0.0 <= result.ci_low < 0.16 < result.ci_high <= 0.4


def test_identical_scores_are_no_difference() -> None:
    result = stats.paired([0.1, 0.5, 1.0], [0.1, 0.5, 1.0])
    assert (result.diff, result.p_t, result.p_perm, result.effect_size) == (0.0, 1.0, 1.0, 0.0)


def test_holm_adjustment() -> None:
    # sorted 0.01 (x4), 0.03 (x3), 0.04 (x2, raised to the running max), 0.5 (x1)
    assert stats.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert stats.holm([]) == []


# ----------------------------------------------------------------------------- verdicts


def _scores(values: list[float], tool: str = "opa.search_sections") -> list[object]:
    return [
        record(f"q{i}", tool=tool, metrics={"nDCG@10": v, "RR@10": v}) for i, v in enumerate(values)
    ]


def test_significant_regression_exits_1_and_improvement_exits_0(
    make_log: Callable[..., Path],
) -> None:
    good = [0.9, 0.8, 1.0, 0.7, 0.95, 0.85, 0.9, 0.75, 1.0, 0.8] * 3
    bad = [max(0.0, v - 0.3 - 0.01 * (i % 5)) for i, v in enumerate(good)]
    run_good = RunLog.read(make_log(_scores(good)))
    run_bad = RunLog.read(make_log(_scores(bad)))

    regression = compare_logs(run_good, run_bad)
    assert regression.exit_code == EXIT_REGRESSION
    ndcg = regression.result("overall", "nDCG@10")
    assert ndcg is not None and ndcg.verdict == "worse" and ndcg.p_perm_holm < 0.05
    assert ndcg.test.ci_high is not None and ndcg.test.ci_high < 0
    assert regression.scope("opa.search_sections").verdict == "worse"  # type: ignore[union-attr]

    improvement = compare_logs(run_bad, run_good)
    assert improvement.exit_code == EXIT_OK
    assert improvement.scope("overall").verdict == "better"  # type: ignore[union-attr]


def test_small_noisy_change_is_no_significant_difference(make_log: Callable[..., Path]) -> None:
    a = [0.5, 0.6, 0.7, 0.8]
    b = [0.6, 0.5, 0.7, 0.75]
    result = compare_logs(RunLog.read(make_log(_scores(a))), RunLog.read(make_log(_scores(b))))
    assert result.exit_code == EXIT_OK
    assert {r.verdict for r in result.results} == {"no significant difference"}


def test_harness_errors(make_log: Callable[..., Path], tmp_path: Path) -> None:
    ok = RunLog.read(make_log(_scores([0.5, 0.6])))
    aborted = RunLog.read(make_log(_scores([0.5]), status="aborted", error="TargetError: boom"))
    assert compare_logs(ok, aborted).exit_code == EXIT_HARNESS
    other = RunLog.read(make_log([record("zzz", metrics={"nDCG@10": 1.0})]))
    assert "no scenario in common" in (compare_logs(ok, other).error or "")
    run = str(make_log(_scores([0.5, 0.6])))
    assert main(["compare", "--run-a", run, "--run-b", str(tmp_path / "none")]) == EXIT_HARNESS
    assert main(["compare", "--run-a", run]) == EXIT_HARNESS
    assert main(["compare", "--a", "nonsense-config", "--b", "hybrid"]) == EXIT_HARNESS


# ----------------------------------------------------------------------------- backends


async def _run(tmp_path: Path, golden: Path, name: str, broken: str | None = None) -> RunLog:
    return await execute(
        server_target(build_server(broken), spec=f"fake:{broken or 'ok'}"),
        load_scenarios(golden),
        tmp_path / name,
        options=RunOptions(ragas=False, concurrency=2),
    )


async def test_comparing_a_backend_with_itself_finds_no_difference(
    tmp_path: Path, golden_fake: Path
) -> None:
    a = await _run(tmp_path, golden_fake, "a")
    b = await _run(tmp_path, golden_fake, "b")
    result = compare_logs(a, b)
    assert result.exit_code == EXIT_OK and result.error is None
    assert result.results and all(r.verdict == "no significant difference" for r in result.results)
    assert all(r.test.diff == 0.0 for r in result.results)
    assert result.contract == []


async def test_contract_diff_names_missing_tools_and_schema_changes(
    tmp_path: Path, golden_fake: Path
) -> None:
    a = await _run(tmp_path, golden_fake, "a")
    missing = await _run(tmp_path, golden_fake, "missing", "missing")
    result = compare_logs(a, missing)
    assert result.missing_tools == ["odb.get"]
    assert result.exit_code == EXIT_REGRESSION  # a tool A publishes is gone

    changed = compare_logs(a, await _run(tmp_path, golden_fake, "contract", "contract"))
    found = {(c.pointer, c.kind, c.what): c for c in changed.contract or []}
    section = "/opa.search_sections/outputSchema/properties/sections/items/properties"
    score = found[(f"{section}/score/type", "changed", "type")]
    assert (score.before, score.after, score.breaking) == (["number"], ["string"], True)
    removed = ("/opa.search_sections/outputSchema/properties/total_matches", "removed", "property")
    assert found[removed].breaking
    relaxed = ("/opa.search_sections/outputSchema/required/confidence", "removed", "required")
    assert found[relaxed].breaking  # clients relied on it being there
    new_arg = ("/opa.search_sections/inputSchema/required/search_mode", "added", "required")
    assert found[new_arg].breaking
    assert not any(c.pointer.startswith("/odb.get") for c in changed.contract or [])


def test_contract_diff_resolves_refs_and_escapes_pointers() -> None:
    item = {"type": "object", "properties": {"a/b": {"type": "integer"}}}
    before = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": item},
    }
    after_item = {"type": "object", "properties": {"a/b": {"type": "integer", "enum": [1, 2]}}}
    after = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/Item"}},
        "$defs": {"Item": after_item},
    }
    changes = contract.diff_surfaces(
        {"t": {"inputSchema": before, "outputSchema": None}},
        {"t": {"inputSchema": after, "outputSchema": None}},
    )
    assert [(c.pointer, c.kind, c.what) for c in changes] == [
        ("/t/inputSchema/properties/x/properties/a~1b/enum", "changed", "enum")
    ]
    assert changes[0].breaking  # an input that accepted any integer now accepts two


async def test_cli_writes_markdown_html_json_and_latest(tmp_path: Path, golden_fake: Path) -> None:
    await _run(tmp_path, golden_fake, "a")
    await _run(tmp_path, golden_fake, "b", "rank")
    out = tmp_path / "compare" / "20260101T000000Z"
    code = main(
        [
            "compare",
            "--run-a",
            str(tmp_path / "a"),
            "--run-b",
            str(tmp_path / "b"),
            "--out",
            str(out),
        ]
    )
    # two judged queries cannot make a significant difference, whatever the ranking did; but
    # the critical scenario the broken ranking fails is a regression on its own, named
    assert code == EXIT_REGRESSION
    data = json.loads((out / "compare.json").read_text())
    assert data["exit_code"] == 1 and data["tests"]["family_size"] == len(data["metrics"])
    failing = data["flips"]["newly_failing"]
    assert [(f["scenario"], f["critical"]) for f in failing] == [("fake-search-virtual-care", True)]
    assert not [t for t in data["flips"]["tests"] if t["significant"]]
    ndcg = next(m for m in data["metrics"] if m["scope"] == "overall" and m["metric"] == "nDCG@10")
    assert ndcg["diff"] < 0 and ndcg["verdict"] == "no significant difference"
    assert {"p_t", "p_perm", "p_t_holm", "p_perm_holm", "ci_low", "effect_size"} <= set(ndcg)
    page = (out / "compare.html").read_text()
    assert page.count("<svg") >= 1 and "http://" not in page.replace("http://www.w3.org", "")
    assert "| overall |" in (out / "compare.md").read_text()
    latest = tmp_path / "compare" / "latest"
    assert (latest / "compare.html").read_text() == page


def test_latency_records_side_by_side_when_both_runs_have_them(
    make_log: Callable[..., Path], tmp_path: Path
) -> None:
    a_dir, b_dir = make_log(_scores([0.5, 0.6])), make_log(_scores([0.5, 0.6]))
    rec = {
        "profile": "latency",
        "tool": "opa.search_sections",
        "n": 50,
        "p50_ms": 5.0,
        "p95_ms": 9.0,
        "p99_ms": 12.0,
    }
    (a_dir / "latency.jsonl").write_text(json.dumps(rec) + "\n")
    (b_dir / "latency.jsonl").write_text(json.dumps({**rec, "p95_ms": 18.0}) + "\n")
    result = compare_logs(RunLog.read(a_dir), RunLog.read(b_dir))
    assert [(p, t, ra.p95_ms, rb.p95_ms) for p, t, ra, rb in result.latency_records] == [
        ("latency", "opa.search_sections", 9.0, 18.0)
    ]
    out = tmp_path / "out"
    assert main(["compare", "--run-a", str(a_dir), "--run-b", str(b_dir), "--out", str(out)]) == 0
    assert (
        "| latency | opa.search_sections | 5.0 | 5.0 | 9.0 | 18.0 | 2.00x |"
        in (out / "compare.md").read_text()
    )
    # without records on one side, only the client-measured eval latencies are shown
    (b_dir / "latency.jsonl").unlink()
    assert compare_logs(RunLog.read(a_dir), RunLog.read(b_dir)).latency_records == []


def test_cli_runs_both_targets_then_compares(tmp_path: Path, golden_fake: Path) -> None:
    from evals_testkit import STDIO_SPEC

    out = tmp_path / "compare" / "now"
    args = ["compare", "--a", STDIO_SPEC, "--b", STDIO_SPEC, "--golden", str(golden_fake)]
    assert main([*args, "--out", str(out), "--no-ragas", "--concurrency", "2"]) == EXIT_OK
    assert RunLog.read(out / "run-a").summary.target == STDIO_SPEC
    assert RunLog.read(out / "run-b").surface is not None
    data = json.loads((out / "compare.json").read_text())
    assert data["contract"] == [] and data["a"]["label"] == STDIO_SPEC
    assert (tmp_path / "compare" / "latest" / "compare.md").is_file()
