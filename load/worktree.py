"""The base revision of `make bench BASE=<rev>`: a git worktree beside the working tree, its own
index, and the commands and environment that make the base's code (not the working tree's) run.

The worktree is `build/bench-base/<sha12>` (build/ is git-ignored), kept and reused while its
sha is asked for again: building an index takes minutes, checking that it is current seconds
(`ocm index` skips a build whose corpus and builder hashes match). A new
worktree starts from a copy of the working tree's index (`seed_build`), kept only if current.
`git worktree prune` forgets worktrees whose folder is gone (`make clean` removes build/).

The same virtual environment serves both sides (the base's dependencies are the working tree's;
a base that needs other packages fails to start, which is exit 2). The project is installed
editable, pointing at the working tree, so the base's processes get `PYTHONPATH=<worktree>` and
run with the worktree as their working directory; `check_imports` proves which code they load
before anything is measured. Injected faults (`OCM_FAULT_*`, `OCM_FAULTS_FILE`) and index or
model locations are the working tree's business and are removed from the base's environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reference_server.config import PROJECT_ROOT

BASE_DIR = PROJECT_ROOT / "build" / "bench-base"
# working-tree settings a base server must not inherit
DROPPED_ENV_PREFIXES = ("OCM_FAULT_",)
DROPPED_ENV = ("OCM_FAULTS_FILE", "OCM_INDEX_DIR", "OCM_MODEL_CACHE_DIR", "OCM_MODEL_DIR")


class WorktreeError(RuntimeError):
    """The base could not be checked out, indexed or imported (the bench exits 2)."""


@dataclass(frozen=True)
class BaseTree:
    rev: str
    sha: str
    path: Path

    def python_command(self, *args: str) -> list[str]:
        return [sys.executable, *args]

    def server_command(self) -> tuple[str, ...]:
        return (sys.executable, "-m", "reference_server")

    def index_command(self) -> list[str]:
        """The base's own index build: `python -m reference_server.index` in trees from before
        the one `ocm` program, `python -m ocm_cli index` after it."""
        if (self.path / "reference_server" / "index" / "__main__.py").exists():
            return [sys.executable, "-m", "reference_server.index"]
        return [sys.executable, "-m", "ocm_cli", "index"]

    def env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        return base_env(self.path, os.environ if environ is None else environ)


def base_env(path: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the working tree's faults and locations, the base's code first."""
    env = {
        k: v
        for k, v in environ.items()
        if k not in DROPPED_ENV and not k.startswith(DROPPED_ENV_PREFIXES)
    }
    env["PYTHONPATH"] = os.pathsep.join(
        [str(path), *[p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    return env


def worktree_path(sha: str, root: Path = BASE_DIR) -> Path:
    return root / sha[:12]


def resolve_command(rev: str, repo: Path = PROJECT_ROOT) -> list[str]:
    return ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"]


def add_command(sha: str, path: Path, repo: Path = PROJECT_ROOT) -> list[str]:
    return ["git", "-C", str(repo), "worktree", "add", "--detach", str(path), sha]


def prune_command(repo: Path = PROJECT_ROOT) -> list[str]:
    return ["git", "-C", str(repo), "worktree", "prune"]


def head_command(path: Path) -> list[str]:
    return ["git", "-C", str(path), "rev-parse", "HEAD"]


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload,no-any-return]


def resolve(rev: str, repo: Path = PROJECT_ROOT) -> str:
    done = _run(resolve_command(rev, repo))
    if done.returncode != 0 or not done.stdout.strip():
        raise WorktreeError(f"BASE={rev!r} is not a commit of {repo}")
    return done.stdout.strip()


def checkout(rev: str, repo: Path = PROJECT_ROOT, root: Path = BASE_DIR) -> BaseTree:
    """The worktree of `rev` (added, or reused when it is already at that commit)."""
    sha = resolve(rev, repo)
    path = worktree_path(sha, root)
    if path.is_dir() and _run(head_command(path)).stdout.strip() == sha:
        return BaseTree(rev, sha, path)
    _run(prune_command(repo))
    root.mkdir(parents=True, exist_ok=True)
    done = _run(add_command(sha, path, repo))
    if done.returncode != 0:
        raise WorktreeError(f"git worktree add {path} {sha[:12]} failed: {done.stderr.strip()}")
    return BaseTree(rev, sha, path)


def check_imports(base: BaseTree) -> None:
    """Fail unless the base's processes import the base's `reference_server`."""
    done = _run(
        base.python_command("-c", "import reference_server; print(reference_server.__file__)"),
        cwd=base.path,
        env=base.env(),
    )
    where = Path(done.stdout.strip() or ".").resolve()
    if done.returncode != 0 or base.path.resolve() not in where.parents:
        raise WorktreeError(
            f"the base's processes import reference_server from {where}, not {base.path}: "
            f"{done.stderr.strip()[-300:]}"
        )


def seed_build(base: BaseTree, source: Path = PROJECT_ROOT / "build") -> list[str]:
    """Copy the working tree's index and derived model into a base that has none, so the
    base's own build can skip: `reference_server.index` keeps an index only when its manifest's
    hash (corpus files, builder code, embedding model) is what the base would build, and
    rebuilds it otherwise; a derived model file is named by its source hash and onnxruntime
    version, so a base that derives another one gets its own. A change in tools/ or retrieval/
    then costs a copy (seconds), not an index build (minutes on this machine)."""
    copied = []
    for name in ("index", "models"):
        src, dst = source / name, base.path / "build" / name
        if src.is_dir() and not dst.exists():
            shutil.copytree(src, dst)
            copied.append(name)
    return copied


def build_index(base: BaseTree, log: Path) -> None:
    """`make index` for the base, in its worktree (a current index is left as it is)."""
    seed_build(base)
    with log.open("ab") as out:
        code = subprocess.call(
            base.index_command(),
            cwd=base.path,
            env=base.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    if code != 0:
        raise WorktreeError(f"building the base's index failed (exit {code}); see {log}")
