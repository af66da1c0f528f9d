"""The run record: one header and one versioned envelope for every command's result.

Every command that runs something (``evals run``, ``gate``, ``derive``, ``fuzz``, ``security``,
``contract``, ``load bench`` and its ``BASE=`` form, ``load run``, ``scale.bench``) writes
``<kind>.record.json`` into its output folder: a :class:`RecordHeader` (what ran, on which commit
and machine, against which target, with which settings, when, for how long, and how it ended)
and the kind's own body. Reports and comparisons read the header to know what they hold and
dispatch on ``kind``; the body is validated by the kind's model where one exists
(``RunSummary``, ``BenchSummary``). A record of another schema version is refused with the
version named, never half-read. (inspect_ai's ``EvalLog``; asv and pytest-benchmark keep commit
and machine on every saved result.)

A new kind of command is one more name in :data:`Kind`. An optional part added to a kind's body
later carries its own ``version`` (:func:`versioned_section`), so records written before it stay
readable under the same :data:`SCHEMA_VERSION` and a part of a version this code does not know is
refused, not half-read.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ocm_common.machine import describe

SCHEMA_VERSION = 1
SUFFIX = ".record.json"
# the `saturation` part of a regression body (load/saturation_pair.py)
REGRESSION_SATURATION_VERSION = 1

Kind = Literal[
    "run",
    "gate",
    "derived",
    "fuzz",
    "security",
    "contract",
    "bench",
    "regression",
    "load",
    "scale",
    "routing",
]
KINDS: tuple[str, ...] = get_args(Kind)

# complete: ran to the end, nothing missed (exit 0); failed: ran, a verdict missed (exit 1);
# error: the command could not run (exit 2); interrupted: stopped by the user (exit 130);
# cut_short: stopped at the command's overall deadline, its body naming what was not done
# (exit 2; given by the command, never inferred from the exit code).
Status = Literal["complete", "failed", "error", "interrupted", "cut_short"]
STATUS_BY_EXIT: dict[int, Status] = {0: "complete", 1: "failed", 130: "interrupted"}


class RunRecordError(RuntimeError):
    """A record that is missing, of another schema version, or not a record at all."""


class RecordHeader(BaseModel):
    """What every record says about its run, whatever the kind."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    schema_version: int = SCHEMA_VERSION
    commit: str | None
    dirty: bool | None
    machine: dict[str, Any]
    target: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    started: str
    duration_s: float
    status: Status
    exit_code: int


class RunRecord(BaseModel):
    """The envelope: the header, the kind's body, and the files written beside it."""

    model_config = ConfigDict(frozen=True)

    header: RecordHeader
    body: dict[str, Any] = Field(default_factory=dict)
    files: list[str] = Field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.header.kind


def status_for(exit_code: int) -> Status:
    """The status a command's exit code means (any other code: it could not run)."""
    return STATUS_BY_EXIT.get(exit_code, "error")


def git_state(cwd: Path | None = None) -> tuple[str | None, bool | None]:
    """(HEAD's commit, whether tracked files differ from it); None for either outside a
    repository or when git is not there."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return commit or None, (bool(status) if status is not None else None)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Clock:
    """When a command started (wall clock, for the header) and how long it has run (monotonic)."""

    def __init__(self) -> None:
        self.started = now_iso()
        self._start = time.monotonic()

    def elapsed_s(self) -> float:
        return round(time.monotonic() - self._start, 3)


def header(
    kind: Kind,
    clock: Clock,
    exit_code: int,
    *,
    target: str | None = None,
    settings: Mapping[str, Any] | None = None,
    machine: Mapping[str, Any] | None = None,
    status: Status | None = None,
    cwd: Path | None = None,
) -> RecordHeader:
    """The header of a run that ends now with ``exit_code``; commit and machine are read here
    unless given (``evals run`` already recorded its machine)."""
    commit, dirty = git_state(cwd)
    return RecordHeader(
        kind=kind,
        commit=commit,
        dirty=dirty,
        machine=dict(machine) if machine is not None else describe(),
        target=target,
        settings=json.loads(json.dumps(dict(settings or {}), default=str)),
        started=clock.started,
        duration_s=clock.elapsed_s(),
        status=status or status_for(exit_code),
        exit_code=exit_code,
    )


def record_path(directory: Path, kind: str) -> Path:
    return directory / f"{kind}{SUFFIX}"


def write_record(
    directory: Path,
    head: RecordHeader,
    body: BaseModel | Mapping[str, Any],
    files: Iterable[str] = (),
) -> Path:
    """``<directory>/<kind>.record.json``; the body as JSON (a model by its own dump)."""
    data = (
        body.model_dump(mode="json")
        if isinstance(body, BaseModel)
        else json.loads(json.dumps(dict(body), default=str))
    )
    record = RunRecord(header=head, body=data, files=sorted(files))
    directory.mkdir(parents=True, exist_ok=True)
    path = record_path(directory, head.kind)
    path.write_text(record.model_dump_json(indent=2, exclude_none=False) + "\n", encoding="utf-8")
    return path


def read_record(path: Path | str) -> RunRecord:
    """One record file; raises :class:`RunRecordError` naming what is wrong (a schema version
    this code does not read is refused before anything else is trusted)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunRecordError(f"{path}: missing") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise RunRecordError(f"{path}: unreadable: {exc}") from None
    head = data.get("header") if isinstance(data, dict) else None
    if not isinstance(head, dict) or "kind" not in head:
        raise RunRecordError(f"{path}: not a run record (no header with a kind)")
    version = head.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RunRecordError(
            f"{path}: run record schema version {version!r}; this code reads version "
            f"{SCHEMA_VERSION} only (re-run the command, or read it with the commit that wrote it)"
        )
    if head["kind"] not in KINDS:
        raise RunRecordError(
            f"{path}: unknown record kind {head['kind']!r} (known: {', '.join(KINDS)})"
        )
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        raise RunRecordError(f"{path}: invalid run record: {exc}") from None


def versioned_section(body: Mapping[str, Any], name: str, version: int) -> dict[str, Any] | None:
    """``body[name]`` when present and of ``version``; None when absent (an older record)."""
    section = body.get(name)
    if section is None:
        return None
    found = section.get("version") if isinstance(section, Mapping) else None
    if found != version:
        raise RunRecordError(
            f"the record's {name!r} part is version {found!r}; this code reads version {version}"
        )
    return dict(section)


def find_records(directory: Path | str) -> dict[str, Path]:
    """{kind: path} of the records in one folder (not below it), in :data:`KINDS` order."""
    directory = Path(directory)
    found = {p.name.removesuffix(SUFFIX): p for p in directory.glob(f"*{SUFFIX}")}
    return {kind: found[kind] for kind in KINDS if kind in found}


def locate(path: Path | str, kind: str | None = None) -> Path:
    """A record file from a file or a folder: the folder's record of ``kind``, or its only
    record, or its first in :data:`KINDS` order (``run`` before ``gate``)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise RunRecordError(f"{path}: no such file or folder")
    found = find_records(path)
    if kind is not None:
        if kind not in found:
            have = ", ".join(found) or "none"
            raise RunRecordError(f"{path}: no {kind} record (records here: {have})")
        return found[kind]
    if not found:
        raise RunRecordError(f"{path}: no run record (*{SUFFIX}) in this folder")
    return next(iter(found.values()))
