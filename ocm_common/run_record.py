"""The run record: one header and one versioned envelope for every command's result.

Every command that runs something (``evals run``, ``gate``, ``derive``, ``fuzz``, ``security``,
``contract``, ``load bench`` and its ``BASE=`` form, ``load run``, ``scale.bench``) writes
``<kind>.record.json`` into its output folder: a :class:`RecordHeader` (what ran, on which commit
and machine, against which target, with which settings, when, for how long, and how it ended)
and the kind's own body. Reports and comparisons read the header to know what they hold and
dispatch on ``kind``. :class:`RunRecord` is generic in its body: ``read_record(path, Body)``
gives a ``RunRecord[Body]`` whose body was validated by the kind's own type (a pydantic model
such as ``RunSummary`` or ``BenchSummary``, or a ``TypedDict``), registered for its kind with
:func:`record_body`; ``read_record(path)`` gives the body as the JSON it is, for readers of any
kind (the record report shows every figure of any body). (inspect_ai's ``EvalLog``; asv and
pytest-benchmark keep commit and machine on every saved result.)

A record of an older schema version is migrated when read, one version at a time, by the
functions registered in :data:`MIGRATIONS` (``n -> n + 1`` over the raw JSON, each with its test);
a record of a newer version than this code knows is refused with the version named, never
half-read.

A new kind of command is one more name in :data:`Kind`. An optional part added to a kind's body
later carries its own ``version`` (:func:`versioned_section`), so records written before it stay
readable under the same :data:`SCHEMA_VERSION` and a part of a version this code does not know is
refused, not half-read.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, get_args, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ocm_common.bench_summary import BenchSummary
from ocm_common.machine import describe

# 1: the first envelope. 2: the same layout, with the body read as its kind's registered type
# (a record written before the body types existed is migrated by `_v1_to_v2`).
SCHEMA_VERSION = 2
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


class RecordBodyError(RunRecordError):
    """A record whose body is not of the type its reader asked for (``cause``: why)."""

    def __init__(self, message: str, cause: ValidationError) -> None:
        super().__init__(message)
        self.cause = cause


class RecordHeader(BaseModel):
    """What every record says about its run, whatever the kind."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    schema_version: int = SCHEMA_VERSION
    commit: str | None
    dirty: bool | None
    # ocm_common.machine.describe() as written (a MachineDescription); kept untyped because
    # callers build headers from run logs' stored environments
    machine: dict[str, Any]
    target: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    started: str
    duration_s: float
    status: Status
    exit_code: int


BodyT = TypeVar("BodyT")


class RunRecord(BaseModel, Generic[BodyT]):
    """The envelope: the header, the kind's body, and the files written beside it."""

    model_config = ConfigDict(frozen=True)

    header: RecordHeader
    body: BodyT
    files: list[str] = Field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.header.kind


# The body as stored: JSON not yet read as its kind's type (the reader of any kind's record).
JSONRecord = RunRecord[dict[str, Any]]

# {body type: the kinds whose body it is}; filled by `record_body` where each type is defined.
BODY_KINDS: dict[type, frozenset[str]] = {}


def record_body(*kinds: Kind) -> Callable[[type[BodyT]], type[BodyT]]:
    """Register a type as the body of records of ``kinds`` (a reader asking for it gets only
    records of those kinds)."""

    def register(body: type[BodyT]) -> type[BodyT]:
        BODY_KINDS[body] = BODY_KINDS.get(body, frozenset()) | frozenset(kinds)
        return body

    return register


record_body("bench")(BenchSummary)


# Migrations over the raw JSON of a whole record: MIGRATIONS[n] turns a version-n record into a
# version-(n + 1) one. A new schema version is one more function here and its test.
Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}


def migration(version: int) -> Callable[[Migration], Migration]:
    """Register the step from ``version`` to ``version + 1``."""

    def register(step: Migration) -> Migration:
        MIGRATIONS[version] = step
        return step

    return register


@migration(1)
def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 keeps version 1's layout and every body as it was; only the number changes."""
    return {**data, "header": {**data["header"], "schema_version": 2}}


def migrate(data: dict[str, Any], where: Path | str = "record") -> dict[str, Any]:
    """A record's raw JSON brought to :data:`SCHEMA_VERSION` by the registered steps; raises
    :class:`RunRecordError` for a version this code has no way to read."""
    version = data["header"].get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
        raise RunRecordError(
            f"{where}: run record schema version {version!r}; this code reads version "
            f"{SCHEMA_VERSION} only (re-run the command, or read it with the commit that wrote it)"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise RunRecordError(
                f"{where}: run record schema version {version!r}; this code reads version "
                f"{SCHEMA_VERSION} and migrates none older than {min(MIGRATIONS, default=SCHEMA_VERSION)}"
            )
        data = step(data)
        if data["header"].get("schema_version") != version + 1:
            raise RunRecordError(
                f"{where}: the migration from version {version} did not reach {version + 1}"
            )
        version += 1
    return data


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
        machine=dict(machine if machine is not None else describe()),
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
    record = JSONRecord(header=head, body=data, files=sorted(files))
    directory.mkdir(parents=True, exist_ok=True)
    path = record_path(directory, head.kind)
    path.write_text(record.model_dump_json(indent=2, exclude_none=False) + "\n", encoding="utf-8")
    return path


@overload
def read_record(path: Path | str) -> JSONRecord: ...


@overload
def read_record(path: Path | str, body: type[BodyT]) -> RunRecord[BodyT]: ...


def read_record(path: Path | str, body: type[Any] | None = None) -> RunRecord[Any]:
    """One record file, its body as JSON or, given ``body``, read as that type; raises
    :class:`RunRecordError` naming what is wrong (an older schema version is migrated, a newer
    one refused before anything else is trusted; a body not of ``body``'s type raises
    :class:`RecordBodyError`)."""
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
    data = migrate(data, path)
    kind = head["kind"]
    if kind not in KINDS:
        raise RunRecordError(f"{path}: unknown record kind {kind!r} (known: {', '.join(KINDS)})")
    try:
        record = JSONRecord.model_validate(data)
    except ValidationError as exc:
        raise RunRecordError(f"{path}: invalid run record: {exc}") from None
    if body is None:
        return record
    kinds = BODY_KINDS.get(body)
    if kinds is not None and kind not in kinds:
        raise RunRecordError(
            f"{path}: a {kind} record; a {body.__name__} is the body of {', '.join(sorted(kinds))}"
        )
    try:
        typed = TypeAdapter(body).validate_python(record.body)
    except ValidationError as exc:
        raise RecordBodyError(f"{path}: invalid {kind} body: {exc}", exc) from None
    return RunRecord[Any](header=record.header, body=typed, files=record.files)


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
