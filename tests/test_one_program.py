"""One command-line program: `ocm` (ocm_cli). The only other runnable modules are the servers
MCP hosts launch and examples/' stand-ins for other teams' servers; every command that was a
module of its own is an `ocm` subcommand, its parser still built by the package that owns it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ocm_cli.program import MOUNTED, main

ROOT = Path(__file__).resolve().parent.parent
# Folders that hold no project module: tests, generated output, old worktrees (build/bench-base).
NOT_SOURCE = {"tests", "build", "reports", "node_modules", "__pycache__"}
GUARD = re.compile(r"""__name__\s*==\s*["']__main__["']""")
ALLOWED = {
    "ocm_cli/__main__.py",  # `python -m ocm_cli` is `ocm`
    "ocm_cli/program.py",  # the program (`[project.scripts] ocm`)
    "reference_server/__main__.py",  # the reference server, as MCP hosts launch it
    "tool_search/__main__.py",  # the tool-search MCP server, as hosts launch it
    "examples/alt_backend/__main__.py",  # other teams' servers: separate programs by design
    "examples/alt_opa/__main__.py",
}
# Each module that was runnable on its own -> the `ocm` command that replaced it.
REPLACED: dict[str, tuple[str, ...]] = {
    "evals/__main__.py": ("run",),
    "evals/sensitivity/__main__.py": ("sensitivity",),
    "evals/run/answer_snapshot.py": ("snapshot",),
    "evals/run/reproducibility.py": ("fixture",),
    "load/__main__.py": ("load", "run"),
    "load/distinct_mix.py": ("mix",),
    "load/profile_calls.py": ("profile-calls",),
    "load/transport_floor.py": ("transport-floor",),
    "load/stdio_proxy.py": ("stdio-proxy",),
    "reference_server/index/__main__.py": ("index",),
    "reference_server/index/chroma_load.py": ("chroma-load",),
    "reference_server/index/synthetic.py": ("synthetic-index",),
    "reference_server/ingest/__main__.py": ("ingest",),
    "reference_server/ingest/off_cli.py": ("ingest", "off"),
    "reference_server/ingest/opa_cep.py": ("ingest", "cep"),
    "reference_server/ingest/opa_pho.py": ("ingest", "pho"),
    "reference_server/scoring/fit.py": ("confidence",),
    "scale/bench.py": ("scale",),
    "scale/chroma_gate.py": ("gate-chroma",),
    "scale/query_audit.py": ("query-audit",),
    "scale/rehearsal.py": ("rehearsal",),
}
INTERNAL = ("stdio-proxy", "transport-floor")


def _source_files() -> list[Path]:
    return [
        p
        for p in ROOT.rglob("*.py")
        if not any(part in NOT_SOURCE or part.startswith(".") for part in p.relative_to(ROOT).parts)
    ]


def runnable_modules() -> set[str]:
    """Every module that runs on its own: a `__main__.py`, or a file with a `__main__` guard."""
    return {
        p.relative_to(ROOT).as_posix()
        for p in _source_files()
        if p.name == "__main__.py" or GUARD.search(p.read_text(encoding="utf-8"))
    }


def test_the_only_runnable_modules_are_the_program_and_the_servers() -> None:
    found = runnable_modules()
    extra, missing = sorted(found - ALLOWED), sorted(ALLOWED - found)
    assert not extra, (
        f"runnable modules besides `ocm` and the servers: {extra}; make each an `ocm` subcommand "
        "(its package's build_parser, mounted in ocm_cli/program.py) and drop its __main__"
    )
    assert not missing, f"entry points that are gone: {missing}"


def test_no_replaced_module_runs_on_its_own() -> None:
    assert not set(REPLACED) & runnable_modules()


@pytest.mark.parametrize("command", list(REPLACED.values()), ids=" ".join)
def test_each_replacing_command_answers_help(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*command, "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: ocm {' '.join(command)}")


def test_the_programs_help_lists_every_replacing_command() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "ocm_cli", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    listed = set(re.findall(r"^ {4}(\S+)", shown.stdout, re.M))
    missing = sorted({c[0] for c in REPLACED.values()} - listed)
    assert not missing, f"`ocm --help` does not list {missing}"


def test_internal_commands_say_so() -> None:
    """The stdio proxy and the transport floor are started by the load code, not by people."""
    helps = {spec.name: spec.help for spec in MOUNTED}
    for name in INTERNAL:
        assert helps[name].startswith("internal:"), helps[name]


def test_child_processes_start_the_programs_internal_commands() -> None:
    """The load runs start the stdio proxy and the transport floor through `ocm` itself."""
    from load.bench import FLOOR_COMMAND
    from load.stdio_proxy import PROXY_COMMAND

    for command, name in ((PROXY_COMMAND, "stdio-proxy"), (FLOOR_COMMAND, "transport-floor")):
        assert tuple(command) == (sys.executable, "-m", "ocm_cli", name)


def test_starting_one_command_imports_only_its_package() -> None:
    """Building `ocm mix`'s tree mounts load's parser alone: not the harness, the scale benches,
    the tool-search server or the index builder."""
    code = (
        "import sys; from ocm_cli.program import build_parser; build_parser('mix'); "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert "load" in imported
    assert not imported & {"evals", "scale", "tool_search"}, imported
