"""The Makefile as make reads it: a rule's prerequisites are expanded when make reads the rule,
so a variable assigned further down is empty there and its target is silently never built."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = ROOT / "Makefile"
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\?|:|::|\+)?=")
RULE = re.compile(r"^([^\s#=:][^=:]*?)\s*:(?![=:])\s*(.*)$")
REFERENCE = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")


def late_prerequisites(text: str) -> list[str]:
    """Every `target: ... $(VAR) ...` line where VAR is assigned in this file only below it."""
    lines = text.splitlines()
    first_assigned: dict[str, int] = {}
    for number, line in enumerate(lines):
        match = ASSIGNMENT.match(line)
        if match:
            first_assigned.setdefault(match.group(1), number)
    problems = []
    for number, line in enumerate(lines):
        if line.startswith("\t") or ASSIGNMENT.match(line):
            continue
        rule = RULE.match(line)
        if not rule:
            continue
        for name in REFERENCE.findall(rule.group(1) + " " + rule.group(2)):
            if first_assigned.get(name, -1) > number:
                problems.append(
                    f"line {number + 1}: {name} is assigned on line {first_assigned[name] + 1}"
                )
    return problems


def test_late_prerequisite_is_found_in_a_described_makefile() -> None:
    text = "all: index $(MIX)\n\techo run\n\nMIX := build/mix.json\n"
    assert late_prerequisites(text) == ["line 1: MIX is assigned on line 4"]


def test_assignment_before_the_rule_is_fine() -> None:
    text = "MIX := build/mix.json\nall: index $(MIX)\n\techo $(LATER)\nLATER = x\n"
    assert late_prerequisites(text) == []


def test_no_rule_of_the_project_makefile_names_a_variable_assigned_below_it() -> None:
    assert late_prerequisites(MAKEFILE.read_text(encoding="utf-8")) == []


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_bench_builds_the_distinct_mix_when_it_is_missing(tmp_path: Path) -> None:
    """As make sees it (`-p`): the bench rule names the mix file, which has its own rule."""
    out = subprocess.run(
        ["make", "-pn", "-f", str(MAKEFILE), "bench"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    bench = next(
        line
        for line in out.splitlines()
        if line.startswith("bench:") and not line.startswith("bench: .")  # not a variable
    )
    assert "build/mix/distinct-" in bench, bench
