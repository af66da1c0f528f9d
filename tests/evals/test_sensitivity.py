"""The seeded defects stay applicable to the code they break, and the runner judges outcomes
as described (no command runs here: `make sensitivity` takes an hour or more)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals.sensitivity.defects import Defect, load_defects
from evals.sensitivity.runner import (
    APPLIED_ENV,
    COMMANDS,
    Command,
    DefectResult,
    Outcome,
    SensitivityRun,
    evidence,
    link_venv,
    printed_lines,
    table,
)

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"pipeline", "retrieval", "scoring", "error wrapper", "transport"}


def test_every_defect_applies_to_the_code_once() -> None:
    defects = load_defects()
    assert len(defects) >= 12
    assert {d.layer for d in defects} >= LAYERS, "a layer the issue names has no defect"
    applied = os.environ.get(APPLIED_ENV)  # inside `make sensitivity`, that defect is in the code
    problems = {d.id: d.problem(ROOT) for d in defects if d.id != applied}
    assert not {k: v for k, v in problems.items() if v}, problems


def test_a_defect_is_applied_as_written_and_refused_when_stale(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = a + b\ny = a + b\nz = c\n")
    once = Defect(id="d", layer="scoring", what="w", file="m.py", find="z = c", replace="z = -c")
    once.apply(tmp_path)
    assert (tmp_path / "m.py").read_text() == "x = a + b\ny = a + b\nz = -c\n"
    twice = once.model_copy(update={"find": "a + b"})
    assert "occurs 2 times" in (twice.problem(tmp_path) or "")
    with pytest.raises(ValueError, match="occurs 0 times"):
        once.apply(tmp_path)  # already applied: its text is gone


def _run(*outcomes_per_defect: list[Outcome]) -> SensitivityRun:
    clean = [Outcome(c.name, 0, 1.0) for c in COMMANDS]
    defects = [
        DefectResult(f"d{i}", "pipeline", "w", list(o)) for i, o in enumerate(outcomes_per_defect)
    ]
    return SensitivityRun("0123456789abcdef", [c.name for c in COMMANDS], clean, defects)


def test_a_missed_defect_fails_the_run_and_a_caught_one_names_its_command() -> None:
    caught = [Outcome("gate", 0, 1.0), Outcome("derived-sample", 1, 1.0, "FAIL odb.din")]
    missed = [Outcome(c.name, 0, 1.0) for c in COMMANDS]
    timed_out = [Outcome("gate", None, 9.0, "timed out after 9 s")]
    run = _run(caught, missed, timed_out)
    assert [d.caught_by for d in run.defects] == ["derived-sample", None, "gate"]
    assert run.exit_code == 1
    text = table(run, {"gate", "derived-sample", "pytest"})
    assert "| d0 | pipeline | derived-sample | yes | FAIL odb.din |" in text
    assert "| d1 | pipeline | MISSED | - |" in text
    assert "2 of 3 defects caught; 2 by a command `make test` runs" in text
    assert _run(caught).exit_code == 0


def test_a_red_clean_head_judges_nothing() -> None:
    run = _run()
    run.clean[0] = Outcome("gate", 1, 1.0, "FAIL")
    assert run.exit_code == 2 and not run.clean_green


def test_evidence_is_the_line_that_says_why() -> None:
    log = "collecting\n.....\nFAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed\n"
    assert evidence(log) == "FAILED tests/test_x.py::test_y - assert 1 == 2"
    assert evidence("all good\nbye\n") == "bye"


def test_evidence_passes_over_what_the_clean_commit_printed_too(tmp_path: Path) -> None:
    # the golden set's known misses fail on the clean commit as well: the defect's evidence is
    # the failure the clean run did not print
    clean = "FAIL known-miss: same_section at policies[0]\n177/179 passed in 12.7s\ngate passed\n"
    (tmp_path / "gate.log").write_text(clean)
    known = printed_lines(tmp_path, [Command("gate", ("make", "gate"), True, 60)])
    red = (
        "FAIL known-miss: same_section at policies[0]\n"
        "FAIL fee-x090: contains_record at items[0].fee_components\n"
        "gate FAILED: 2 rule(s)\n"
    )
    assert (
        evidence(red, known["gate"]) == "FAIL fee-x090: contains_record at items[0].fee_components"
    )
    assert evidence(red) == "FAIL known-miss: same_section at policies[0]"


def test_a_venv_link_left_by_an_earlier_run_from_elsewhere_is_replaced(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    link = tmp_path / "worktree" / ".venv"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "gone" / ".venv")  # another checkout's venv, removed since
    link_venv(link, venv)
    assert link.is_symlink() and link.resolve() == venv.resolve()
    link_venv(link, venv)  # already right: left alone
    assert link.resolve() == venv.resolve()
