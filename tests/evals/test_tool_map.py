"""Clear verdicts when tools are missing: a golden run against a target lacking tools names
them and exits 3 unless --allow-missing; --tool-map runs the golden scenarios against a
server whose tool names differ, the run log keeping the golden names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evals_testkit import STDIO_SPEC
from renamed_server import PREFIX

from evals.run.scenario import load_scenarios
from evals.run.tool_map import ToolMapError, parse_tool_map
from ocm_cli.program import main
from ocm_common.run_record import read_record

RENAMED_SPEC = f"stdio:python {Path(__file__).with_name('renamed_server.py')}"


def _run(golden: Path, out: Path, target: str, *extra: str) -> int:
    args = ["run", "--target", target, "--golden", str(golden), "--out", str(out)]
    return main([*args, "--no-ragas", "--concurrency", "2", *extra])


def test_a_tool_map_is_pairs_or_a_file(tmp_path: Path) -> None:
    assert parse_tool_map(["a=x, b=y", "c=z"]) == {"a": "x", "b": "y", "c": "z"}
    mapping = tmp_path / "map.yaml"
    mapping.write_text("opa.search_sections: search\nodb.get: drug\n", encoding="utf-8")
    assert parse_tool_map([str(mapping)]) == {"opa.search_sections": "search", "odb.get": "drug"}
    for bad in (["nothing-here"], ["a=x", "a=y"], ["a=x,b=x"], ["=x"]):
        with pytest.raises(ToolMapError):
            parse_tool_map(bad)


def test_missing_tools_are_named_and_exit_3_unless_allowed(
    tmp_path: Path,
    golden_fake: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("FAKE_BREAK", "missing")  # the fake publishes no odb.get
    odb_scenarios = [s for s in load_scenarios(golden_fake) if s.tool == "odb.get"]
    assert odb_scenarios
    assert _run(golden_fake, tmp_path / "strict", STDIO_SPEC) == 3
    said = capfd.readouterr().err
    assert "lacks 1 of 3 golden tools: odb.get" in said and "--allow-missing" in said
    assert _run(golden_fake, tmp_path / "allowed", STDIO_SPEC, "--allow-missing") == 0
    summary = read_record(tmp_path / "allowed" / "run.record.json").body
    assert summary["missing_tools"] == ["odb.get"]
    assert summary["counts"]["not_run_missing_tool"] == len(odb_scenarios)
    assert summary["counts"]["errors"] == 0  # odb.get was not called, so no error records


def test_a_target_with_other_names_fails_until_mapped(
    tmp_path: Path, golden_fake: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    scenarios = load_scenarios(golden_fake)
    golden_tools = sorted({s.tool for s in scenarios})
    assert _run(golden_fake, tmp_path / "unmapped", RENAMED_SPEC, "--allow-missing") == 3
    said = capfd.readouterr().err
    assert f"lacks {len(golden_tools)} of {len(golden_tools)} golden tools" in said
    assert f"{PREFIX}{golden_tools[0]}" in said  # what it publishes instead

    mapping = ",".join(f"{tool}={PREFIX}{tool}" for tool in golden_tools)
    assert _run(golden_fake, tmp_path / "mapped", RENAMED_SPEC, "--tool-map", mapping) == 0
    summary = read_record(tmp_path / "mapped" / "run.record.json").body
    assert summary["missing_tools"] == [] and summary["counts"]["scenarios"] == len(scenarios)
    assert summary["counts"]["errors"] == 0
    assert summary["config"]["tool_map"] == {t: f"{PREFIX}{t}" for t in golden_tools}
    records = [
        json.loads(line)
        for line in (tmp_path / "mapped" / "scenarios.jsonl").read_text().splitlines()
    ]
    assert {r["tool"] for r in records} == set(golden_tools)
