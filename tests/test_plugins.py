"""A team adds a check, a derived case family or a metric from its own installed package, through
an entry point, without editing this repository; a plug-in that fails to import is named."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def install(site: Path, group: str, module: str, source: str) -> None:
    """A package with one entry point, installed as pip would (a dist-info beside it)."""
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{module} = {module}\n")


def run(site: Path, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        env={"PYTHONPATH": f"{ROOT}:{site}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_installed_check_is_found_and_usable_in_golden_files(tmp_path: Path) -> None:
    install(
        tmp_path,
        "ocm.checks",
        "team_checks",
        """
        from evals.run.checks import check

        @check("team_positive", needs=("path",))
        def team_positive(ctx, spec):
            "The value at path is a positive number."
        """,
    )
    done = run(
        tmp_path,
        """
        from evals.run.checks import CHECKS, CheckSpec, validate_spec
        assert "team_positive" in CHECKS, CHECKS.names()
        validate_spec(CheckSpec(check="team_positive", path="$.x"))
        print("found", CHECKS["team_positive"].doc)
        """,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "found The value at path is a positive number." in done.stdout


def test_without_the_package_the_check_is_unknown(tmp_path: Path) -> None:
    done = run(tmp_path, "from evals.run.checks import CHECKS\nprint('team_positive' in CHECKS)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_a_broken_plugin_is_named(tmp_path: Path) -> None:
    install(tmp_path, "ocm.case_families", "team_families", "raise ImportError('no such thing')")
    done = run(tmp_path, "from evals.derive.registry import FAMILIES\nFAMILIES.names()")
    assert done.returncode != 0
    assert "case family plug-in 'team_families'" in done.stderr
    assert "no such thing" in done.stderr
