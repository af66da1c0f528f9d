"""`ocm`: one parser tree reaches every command the project runs, each leaf calls its package's
function with the parsed options, and the Makefile's targets are thin aliases of it."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from ocm_cli.program import MOUNTED, build_parser, main

ROOT = Path(__file__).resolve().parent.parent
# What the program must reach (the list), by subcommand path.
REQUIRED = [
    ("serve",),
    ("index",),
    ("run",),
    ("gate",),
    ("report",),
    ("derive",),
    ("families",),
    ("compare",),
    ("fuzz",),
    ("security",),
    ("contract",),
    ("routing",),
    ("sensitivity",),
    ("bench",),
    ("load", "run"),
    ("load", "slo"),
    ("scale",),
    ("tool-search", "serve"),
    ("tool-search", "bench"),
    ("confidence", "fit"),
    ("ingest",),
]


def _children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), func: object = None):  # type: ignore[no-untyped-def]
    """(path, the `func` a parse ending there sets: its own default, or its nearest parent's)."""
    func = parser.get_default("func") or func
    children = _children(parser)
    if not children:
        yield path, func
    for name, child in children.items():
        yield from _leaves(child, (*path, name), func)


def test_one_tree_reaches_every_command_and_each_leaf_runs_something() -> None:
    tree = build_parser()
    leaves = dict(_leaves(tree))
    for path in REQUIRED:
        assert any(leaf[: len(path)] == path for leaf in leaves), f"ocm {' '.join(path)} missing"
    no_func = [" ".join(p) for p, func in leaves.items() if not callable(func)]
    assert not no_func, f"leaves that would run nothing: {no_func}"


def test_a_lightly_built_tree_lists_every_command() -> None:
    """Starting one command mounts only its package; the others are still named."""
    assert set(_children(build_parser(""))) == set(_children(build_parser()))
    assert {m.name for m in MOUNTED} <= set(_children(build_parser("")))


def test_a_refused_option_is_a_usage_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--transport", "http", "--host", "0.0.0.0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["no-such-command"])
    assert stop.value.code == 2


def test_help_of_a_nested_command_names_the_program(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["load", "run", "--help"])
    assert capsys.readouterr().out.startswith("usage: ocm load run")


def test_the_makefile_calls_the_program_not_the_packages() -> None:
    """Recipes reach the project's packages through `$(OCM)`, never `python -m <module>`."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    packages = {m.module.split(".")[0] for m in MOUNTED} | {"evals", "ocm_common"}
    direct = [
        line.strip()
        for line in text.splitlines()
        if (m := re.search(r"\$\(PY\) -m ([\w.]+)", line)) and m.group(1).split(".")[0] in packages
    ]
    assert not direct, f"recipes bypassing ocm: {direct}"
    assert "OCM := $(PY) -m ocm_cli" in text


def test_the_bench_gets_the_eval_harness_as_functions() -> None:
    """`ocm bench` hands load the eval steps as Python (ocm_cli/bench_steps.py); load's own
    parser alone has none, and its bench says to use `ocm bench` (exit 2)."""
    from load.bench import BenchSteps
    from load.cli import build_parser as load_parser
    from load.cli import dispatch

    args = build_parser("bench").parse_args(["bench"])
    steps = args.bench_steps()
    assert isinstance(steps, BenchSteps)
    assert steps.eval_and_gate.__module__ == "evals.steps"
    assert dispatch(load_parser().parse_args(["bench"])) == 2


def test_the_gate_target_is_written_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """evals/gate.yaml's `target` is what the Makefile's GATE_TARGET and `ocm bench` run;
    GATE_TARGET overrides it."""
    import subprocess

    import yaml

    from evals.steps import gate_target

    written = yaml.safe_load((ROOT / "evals" / "gate.yaml").read_text(encoding="utf-8"))["target"]
    assert written.startswith("inprocess:") and "as_of_date=" in written
    monkeypatch.delenv("GATE_TARGET", raising=False)
    assert gate_target() == written
    shown = subprocess.run(
        ["make", "-s", "--no-print-directory", "--eval", "show: ; @echo $(GATE_TARGET)", "show"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in __import__("os").environ.items() if k != "GATE_TARGET"},
    )
    assert shown.stdout.strip() == written
    monkeypatch.setenv("GATE_TARGET", "inprocess:mode=keyword")
    assert gate_target() == "inprocess:mode=keyword"
