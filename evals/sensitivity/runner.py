"""Which verdict command catches which seeded defect.

A scratch worktree of HEAD (build/sensitivity/worktree, sharing this checkout's venv and a copy
of its index) -> the verdict commands on clean HEAD, which must all be green -> each defect
applied alone, the commands run cheapest first until one goes red -> a table (defect -> the
command that caught it, or MISSED), sensitivity.json and sensitivity.md. The commands run as a
user runs them (make targets, pytest), in the worktree, with no OCM_* variable inherited.

Exit 0: clean HEAD green and every defect caught; 1: a defect missed; 2: the run could not judge
(clean HEAD red, a defect that no longer applies, the worktree could not be made).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from evals.sensitivity.defects import Defect

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WORKTREE = PROJECT_ROOT / "build" / "sensitivity" / "worktree"


@dataclass(frozen=True)
class Command:
    """One verdict command; `{base}` in its arguments is the clean commit (for BASE=)."""

    name: str
    argv: tuple[str, ...]
    in_make_test: bool
    timeout_s: float

    def resolved(self, base: str) -> list[str]:
        return [a.replace("{base}", base) for a in self.argv]


MAKE = ("make", "--no-print-directory")
# Cheapest first, by what each takes on a 2-core machine: the golden gate and the derived sample
# (2-3 min each), the routing evaluation (2 min), the test suite (6-8 min), the bench against the
# clean commit (10-12 min with its concurrency conditions), the contract fuzzer.
COMMANDS: tuple[Command, ...] = (
    Command("gate", (*MAKE, "gate"), True, 1800),
    Command("derived-sample", (*MAKE, "derived-sample"), True, 1800),
    Command("routing", (*MAKE, "routing"), False, 1800),
    Command(
        "pytest",
        (".venv/bin/python", "-m", "pytest", "-q", "-x", "-n", "auto", "--dist", "loadgroup"),
        True,
        3600,
    ),
    Command("bench-base", (*MAKE, "bench", "BASE={base}"), False, 2400),
    Command("fuzz", (*MAKE, "fuzz", "FUZZ_PROFILE=default"), False, 2400),
)


class OutcomeJson(TypedDict):
    command: str
    exit_code: int | None
    seconds: float
    evidence: str


@dataclass
class Outcome:
    command: str
    exit_code: int | None  # None: timed out
    seconds: float
    evidence: str = ""

    @property
    def red(self) -> bool:
        return self.exit_code != 0

    def to_json(self) -> OutcomeJson:
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "seconds": self.seconds,
            "evidence": self.evidence,
        }


class DefectJson(TypedDict):
    id: str
    layer: str
    what: str
    outcomes: list[OutcomeJson]
    problem: str | None
    caught_by: str | None


@dataclass
class DefectResult:
    id: str
    layer: str
    what: str
    outcomes: list[Outcome] = field(default_factory=list)
    problem: str | None = None

    @property
    def caught_by(self) -> str | None:
        return next((o.command for o in self.outcomes if o.red), None)

    def to_json(self) -> DefectJson:
        return {
            "id": self.id,
            "layer": self.layer,
            "what": self.what,
            "outcomes": [o.to_json() for o in self.outcomes],
            "problem": self.problem,
            "caught_by": self.caught_by,
        }


def log_lines(log: str) -> list[str]:
    return [line.strip() for line in log.splitlines() if line.strip()]


def evidence(log: str, known: frozenset[str] = frozenset()) -> str:
    """The line of a red command's output that says why, or its last line. Lines the clean
    commit's run of the same command printed too (`known`: its known failures, such as the
    golden set's known misses) are not the defect's doing, so they are passed over."""
    lines = [line for line in log_lines(log) if line not in known]
    for marker in ("FAILED ", "SLOWER", "FAIL", "MISS", "Error", "error"):
        hit = next((line for line in lines if marker in line), None)
        if hit:
            return hit[:200]
    return lines[-1][:200] if lines else ""


# Names the defect applied, for the one test that checks every defect still applies to the code.
APPLIED_ENV = "SENSITIVITY_APPLIED_DEFECT"


def clean_env(applied: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCM_") and k != APPLIED_ENV}
    return {**env, APPLIED_ENV: applied} if applied else env


def run_command(
    command: Command,
    cwd: Path,
    base: str,
    log_dir: Path,
    applied: str | None = None,
    known: frozenset[str] = frozenset(),
) -> Outcome:
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{command.name}.log"
    started = time.perf_counter()
    with log.open("wb") as out:
        try:
            code: int | None = subprocess.run(
                command.resolved(base),
                cwd=cwd,
                env=clean_env(applied),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=command.timeout_s,
                check=False,
                start_new_session=True,
            ).returncode
        except subprocess.TimeoutExpired:
            code = None
    text = log.read_text(encoding="utf-8", errors="replace")
    seconds = time.perf_counter() - started
    shown = f"timed out after {command.timeout_s:.0f} s" if code is None else evidence(text, known)
    return Outcome(command.name, code, round(seconds, 1), shown if code != 0 else "")


def _git(*args: str, cwd: Path = PROJECT_ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def prepare_worktree(rev: str = "HEAD", path: Path = WORKTREE) -> str:
    """A clean worktree of `rev` with this checkout's venv and a copy of its built index (which
    `make index` there rebuilds if that commit's corpus differs); returns the commit."""
    sha = _git("rev-parse", f"{rev}^{{commit}}")
    if not (path / ".git").exists():
        shutil.rmtree(path, ignore_errors=True)
        _git("worktree", "prune")
        _git("worktree", "add", "--detach", str(path), sha)
    _git("checkout", "--detach", "--force", sha, cwd=path)
    reset(path)
    link_venv(path / ".venv", PROJECT_ROOT / ".venv")
    # A fresh checkout's pyproject.toml is newer than the shared venv's install stamp, and make
    # would reinstall that venv from the worktree: date it back (its content is the same).
    os.utime(path / "pyproject.toml", (0, 0))
    for name in ("index", "models"):
        src, dst = PROJECT_ROOT / "build" / name, path / "build" / name
        if src.is_dir() and not dst.exists():
            shutil.copytree(src, dst)
    return sha


def link_venv(link: Path, venv: Path) -> None:
    """`link` pointing at `venv`: a link an earlier run left pointing elsewhere (another
    checkout's venv, perhaps gone since) is replaced, a real directory there is kept."""
    if link.is_symlink():
        if link.resolve() == venv.resolve():
            return
        link.unlink()
    elif link.exists():
        return
    link.symlink_to(venv)


def reset(path: Path) -> None:
    """Undo a defect: tracked files back to the commit (build/ and reports/ are ignored)."""
    _git("checkout", "--", ".", cwd=path)


def run_sequence(
    commands: Sequence[Command],
    cwd: Path,
    base: str,
    log_dir: Path,
    *,
    stop_at_red: bool,
    progress: Callable[[str], None],
    applied: str | None = None,
    known: Mapping[str, frozenset[str]] | None = None,
) -> list[Outcome]:
    outcomes = []
    for command in commands:
        outcome = run_command(
            command, cwd, base, log_dir, applied, (known or {}).get(command.name, frozenset())
        )
        outcomes.append(outcome)
        progress(
            f"  {command.name}: "
            + ("green" if not outcome.red else f"RED ({outcome.evidence})")
            + f" [{outcome.seconds:.0f} s]"
        )
        if outcome.red and stop_at_red:
            break
    return outcomes


class SensitivityJson(TypedDict):
    """sensitivity.json."""

    commit: str
    commands: list[str]
    clean: list[OutcomeJson]
    defects: list[DefectJson]
    seconds: float
    exit_code: int


@dataclass
class SensitivityRun:
    commit: str
    commands: list[str]
    clean: list[Outcome]
    defects: list[DefectResult]
    seconds: float = 0.0

    @property
    def clean_green(self) -> bool:
        return bool(self.clean) and not any(o.red for o in self.clean)

    @property
    def exit_code(self) -> int:
        if not self.clean_green or any(d.problem for d in self.defects):
            return 2
        return 1 if any(d.caught_by is None for d in self.defects) else 0

    def to_json(self) -> SensitivityJson:
        return {
            "commit": self.commit,
            "commands": self.commands,
            "clean": [o.to_json() for o in self.clean],
            "defects": [d.to_json() for d in self.defects],
            "seconds": round(self.seconds, 1),
            "exit_code": self.exit_code,
        }


def table(run: SensitivityRun, make_test: set[str]) -> str:
    """defect -> the command that caught it (and whether `make test` runs it), or MISSED."""
    lines = [
        "| defect | layer | caught by | in make test | evidence |",
        "|---|---|---|---|---|",
    ]
    for d in run.defects:
        if d.problem:
            lines.append(f"| {d.id} | {d.layer} | NOT APPLIED | | {d.problem} |")
            continue
        caught = d.caught_by
        red = next((o for o in d.outcomes if o.red), None)
        lines.append(
            f"| {d.id} | {d.layer} | {caught or 'MISSED'} | "
            f"{'yes' if caught in make_test else ('-' if caught is None else 'no')} | "
            f"{(red.evidence if red else '').replace('|', '/')} |"
        )
    n_caught = sum(d.caught_by is not None for d in run.defects)
    by_make_test = sum(d.caught_by in make_test for d in run.defects)
    lines.append("")
    lines.append(
        f"{n_caught} of {len(run.defects)} defects caught; {by_make_test} by a command `make test` "
        f"runs. Clean HEAD ({run.commit[:12]}): "
        + ", ".join(f"{o.command} {'green' if not o.red else 'RED'}" for o in run.clean)
        + "."
    )
    return "\n".join(lines)


def printed_lines(log_dir: Path, commands: Sequence[Command]) -> dict[str, frozenset[str]]:
    """Each command's output lines in `log_dir` (the clean commit's run): what a defect's run
    printing the same is not evidence of."""
    out = {}
    for command in commands:
        log = log_dir / f"{command.name}.log"
        if log.exists():
            out[command.name] = frozenset(
                log_lines(log.read_text(encoding="utf-8", errors="replace"))
            )
    return out


def run_sensitivity(
    defects: Sequence[Defect],
    commands: Sequence[Command],
    out: Path,
    *,
    rev: str = "HEAD",
    stop_at_red: bool = True,
    progress: Callable[[str], None] = print,
) -> SensitivityRun:
    started = time.perf_counter()
    sha = prepare_worktree(rev)
    progress(f"clean HEAD {sha[:12]} in {WORKTREE}")
    clean_logs = out / "logs" / "clean"
    clean = run_sequence(commands, WORKTREE, sha, clean_logs, stop_at_red=True, progress=progress)
    known = printed_lines(clean_logs, commands)
    run = SensitivityRun(sha, [c.name for c in commands], clean, [])
    if not run.clean_green:
        progress("clean HEAD is red: no defect can be judged")
    else:
        for defect in defects:
            result = DefectResult(defect.id, defect.layer, defect.what)
            run.defects.append(result)
            progress(f"{defect.id} ({defect.layer}): {defect.what}")
            result.problem = defect.problem(WORKTREE)
            if result.problem:
                progress(f"  not applied: {result.problem}")
                continue
            defect.apply(WORKTREE)
            try:
                result.outcomes = run_sequence(
                    commands,
                    WORKTREE,
                    sha,
                    out / "logs" / defect.id,
                    stop_at_red=stop_at_red,
                    progress=progress,
                    applied=defect.id,
                    known=known,
                )
            finally:
                reset(WORKTREE)
            save(run, out, started)  # a long run's results so far survive an interruption
    save(run, out, started)
    return run


def save(run: SensitivityRun, out: Path, started: float) -> None:
    run.seconds = time.perf_counter() - started
    out.mkdir(parents=True, exist_ok=True)
    (out / "sensitivity.json").write_text(json.dumps(run.to_json(), indent=2) + "\n")
