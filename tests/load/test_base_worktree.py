"""`make bench BASE=<rev>`: the commands and environment that make the base's code run.

Nothing here starts a server or builds an index; one test makes a real worktree of a
throwaway repository (git only, well under a second).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from load.worktree import (
    BaseTree,
    WorktreeError,
    add_command,
    base_env,
    checkout,
    resolve_command,
    seed_build,
    worktree_path,
)
from ocm_cli.program import main
from tests.run_records import assert_record

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_worktree_lives_under_build_keyed_by_sha(tmp_path: Path) -> None:
    path = worktree_path(SHA, tmp_path / "build" / "bench-base")
    assert path == tmp_path / "build" / "bench-base" / "0123456789ab"
    assert add_command(SHA, path, tmp_path) == [
        "git",
        "-C",
        str(tmp_path),
        "worktree",
        "add",
        "--detach",
        str(path),
        SHA,
    ]
    assert resolve_command("HEAD~1", tmp_path)[-1] == "HEAD~1^{commit}"


def test_base_environment_runs_base_code_without_the_working_trees_faults() -> None:
    env = base_env(
        Path("/w/build/bench-base/abc"),
        {
            "PATH": "/usr/bin",
            "PYTHONPATH": "/extra",
            "OCM_FAULT_SQL_DELAY_MS": "60",
            "OCM_FAULT_CPU_EXTRA": "0.25",
            "OCM_FAULTS_FILE": "/f.yaml",
            "OCM_INDEX_DIR": "/w/build/index",
            "OCM_EMBED_THREADS": "1",
        },
    )
    assert env["PYTHONPATH"].split(":") == ["/w/build/bench-base/abc", "/extra"]
    assert not any(k.startswith("OCM_FAULT") for k in env) and "OCM_INDEX_DIR" not in env
    assert env["OCM_EMBED_THREADS"] == "1" and env["PATH"] == "/usr/bin"


def test_base_commands_run_in_the_worktree() -> None:
    base = BaseTree("HEAD~1", SHA, Path("/w/build/bench-base/0123456789ab"))
    assert base.server_command() == (sys.executable, "-m", "reference_server")


def test_the_base_index_is_built_by_the_command_its_own_tree_has(tmp_path: Path) -> None:
    """A base from before the one `ocm` program has `python -m reference_server.index`; a later
    one only `python -m ocm_cli index`."""
    base = BaseTree("HEAD~1", SHA, tmp_path)
    package = tmp_path / "reference_server" / "index"
    package.mkdir(parents=True)
    (package / "cli.py").write_text("")
    assert base.index_command() == [sys.executable, "-m", "ocm_cli", "index"]
    (package / "__main__.py").write_text("from reference_server.index.cli import main\n")
    assert base.index_command() == [sys.executable, "-m", "reference_server.index"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_checkout_adds_then_reuses_a_worktree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    for n in (1, 2):
        (repo / "f.txt").write_text(str(n))
        _git(repo, "add", "f.txt")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
    root = tmp_path / "bench-base"
    base = checkout("HEAD~1", repo, root)
    assert base.sha == _git(repo, "rev-parse", "HEAD~1")
    assert (base.path / "f.txt").read_text() == "1"
    assert checkout(base.sha, repo, root) == BaseTree(base.sha, base.sha, base.path)  # reused
    with pytest.raises(WorktreeError, match="not a commit"):
        checkout("no-such-rev", repo, root)


def test_bench_with_an_unknown_base_exits_2(tmp_path: Path) -> None:
    code = main(["bench", "--base", "no-such-rev-xyz", "--out-root", str(tmp_path)])
    assert code == 2
    record = assert_record(tmp_path / "latest", "regression", 2)
    assert record.header.settings["base_rev"] == "no-such-rev-xyz"
    assert record.body["harness_errors"] and (tmp_path / "latest" / "bench.md").is_file()


def test_a_new_base_starts_from_a_copy_of_the_working_trees_index(tmp_path: Path) -> None:
    source = tmp_path / "work" / "build"
    (source / "index").mkdir(parents=True)
    (source / "index" / "manifest.json").write_text("{}")
    (source / "models").mkdir()
    base = BaseTree("HEAD~1", SHA, tmp_path / "base")
    assert seed_build(base, source) == ["index", "models"]
    assert (base.path / "build" / "index" / "manifest.json").read_text() == "{}"
    (base.path / "build" / "index" / "manifest.json").write_text('{"own": 1}')
    assert seed_build(base, source) == []  # an index of its own is never overwritten
    assert "own" in (base.path / "build" / "index" / "manifest.json").read_text()
