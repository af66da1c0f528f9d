"""The CLI end to end over stdio: run -> report -> baseline -> gate, and every --help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evals_testkit import STDIO_SPEC
from fake_server import build_server
from rich.console import Console

from evals.read.report import build_tables, print_report, to_markdown
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from ocm_cli.program import main


@pytest.mark.parametrize("command", ["run", "gate", "report", "baseline"])
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: ocm " + command in capsys.readouterr().out


def test_run_report_baseline_gate_over_stdio(tmp_path: Path, golden_fake: Path) -> None:
    run_dir = tmp_path / "run"
    code = main(
        [
            "run",
            "--target",
            STDIO_SPEC,
            "--golden",
            str(golden_fake),
            "--out",
            str(run_dir),
            "--ablation",
            "--concurrency",
            "2",
            "--no-llm",
        ]
    )
    assert code == 0
    summary = json.loads((run_dir / "run.record.json").read_text())["body"]
    assert summary["target"] == STDIO_SPEC and summary["counts"]["passed"] == 5

    assert main(["report", "--run", str(run_dir)]) == 0
    report = (run_dir / "report.md").read_text()
    assert "## Search-mode ablation" in report
    assert "| hybrid | 2 | 1.000 |" in report
    assert "hybrid nDCG@10 minus best single mode: +0.102" in report
    assert "| opa.search_sections | 2/2 | 2 |" in report

    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "--run", str(run_dir), "--out", str(baseline)]) == 0
    stored = json.loads(baseline.read_text())
    assert stored["scenarios"]["fake-odb-jardiance"]["scores"]["nDCG@10"] == 1.0

    config = tmp_path / "gate.yaml"
    config.write_text("floors:\n  overall: {pass_rate: 1.0, nDCG@10: 0.9}\n")
    assert (
        main(["gate", "--run", str(run_dir), "--config", str(config), "--baseline", str(baseline)])
        == 0
    )
    assert (run_dir / "junit.xml").is_file() and (run_dir / "gate.record.json").is_file()


def test_run_harness_errors_exit_2(tmp_path: Path, golden_fake: Path) -> None:
    assert (
        main(
            [
                "run",
                "--target",
                "ftp://x",
                "--golden",
                str(golden_fake),
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "run",
                "--target",
                STDIO_SPEC,
                "--golden",
                str(tmp_path / "none"),
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 2
    )
    assert main(["report", "--run", str(tmp_path / "none")]) == 2
    assert main(["baseline", "--run", str(tmp_path / "none")]) == 2


async def test_report_without_ablation_says_so(tmp_path: Path, golden_fake: Path) -> None:
    log = await execute(
        server_target(build_server(broken="value")),
        load_scenarios(golden_fake),
        tmp_path / "run",
        options=RunOptions(ragas=False),
    )
    sections = {s.title: s for s in build_tables(log)}
    assert sections["Search-mode ablation"].rows == []
    assert "use --ablation" in sections["Search-mode ablation"].note
    console = Console(record=True, width=200)
    print_report(log, console)
    assert "Per tool" in console.export_text()
    markdown = to_markdown(log)
    assert (
        "| fake-odb-jardiance | odb.get | failed (critical) | equals at coverage.covered"
        in markdown
    )
