"""The run log: the single record of a run that gate, report and compare read.

A run directory holds ``run.record.json`` (the run record: the header every command writes,
ocm_common/run_record.py, with the :class:`RunSummary` as its body: configuration, environment,
counts, aggregates),
``scenarios.jsonl`` (one :class:`ScenarioRecord` per scenario and search mode), ``tools.json``
(the tool surface the backend published: names with input and output schemas) and the TREC
files (``qrels.trec``, ``run.<mode>.trec``) so any trec_eval-style tool can re-score the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from evals.run.public_keys import public_judgments, public_ranking
from ocm_common.json_types import Arguments, JsonObject
from ocm_common.latency_records import LatencyRecord
from ocm_common.latency_records import read_records as read_latency
from ocm_common.run_record import (
    RecordBodyError,
    RecordHeader,
    RunRecordError,
    read_record,
    record_body,
    record_path,
    write_record,
)

SCHEMA_VERSION = 1
DEFAULT_MODE = "default"
SCENARIOS_FILE = "scenarios.jsonl"
QRELS_FILE = "qrels.trec"
TOOLS_FILE = "tools.json"
# Latency records (one JSON object a line: profile, tool, n, p50_ms, p95_ms, ...), written next
# to the run log by benchmarks and load runs; read, never written, by the harness.
LATENCY_FILE = "latency.jsonl"

Status = Literal["passed", "failed", "error"]


class GitInfo(TypedDict, total=False):
    """The commit a run measured (None outside a repository): ocm_common.run_record.git_state."""

    commit: str | None
    dirty: bool | None


class CheckOutcome(BaseModel):
    """One check on one scenario: passed, or the typed failure and its message."""

    model_config = ConfigDict(frozen=True)

    check: str
    path: str = "$"
    passed: bool
    implicit: bool = False
    # False: the check found nothing to judge (it did not fail, and it did not pass either)
    checked: bool = True
    failure: str | None = None
    message: str | None = None


class ScenarioRecord(BaseModel):
    """Everything a run learned about one scenario in one mode.

    ``mode`` is ``default`` for the main pass (the target as given) and ``hybrid`` /
    ``vector`` / ``keyword`` for the search-mode ablation passes. ``relevant`` is copied from
    the scenario so metrics can be recomputed from the log alone.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    tool: str
    version: int
    tags: list[str] = Field(default_factory=list)
    mode: str = DEFAULT_MODE
    org: str = "other"
    args: Arguments = Field(default_factory=dict)
    status: Status
    latency_ms: float | None = None
    timings_ms: dict[str, float | None] = Field(default_factory=dict)
    is_error: bool = False
    error_text: str | None = None
    harness_error: str | None = None
    checks: list[CheckOutcome] = Field(default_factory=list)
    retrieved_ids: list[str] = Field(default_factory=list)
    # False: the tool's descriptor names no ids (evals/run/tool_descriptors.py), so retrieval
    # metrics are not measured for this scenario (absent, not 0)
    ids_measured: bool = True
    relevant: dict[str, int] = Field(default_factory=dict)
    result: JsonObject | None = None
    citations: JsonObject | None = None  # show-source evidence (evals.run.citations)
    metrics: dict[str, float] = Field(default_factory=dict)
    ragas: dict[str, float | None] = Field(default_factory=dict)
    ragas_errors: dict[str, str] = Field(default_factory=dict)

    @property
    def critical(self) -> bool:
        return "critical" in self.tags

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def failures(self) -> list[CheckOutcome]:
        return [c for c in self.checks if not c.passed]

    def reason(self) -> str:
        """Why the scenario did not pass, in one line (empty when it passed)."""
        if self.passed:
            return ""
        if self.harness_error:
            return self.harness_error
        failed = self.failures()
        if not failed:
            return self.error_text or self.status
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        return (failed[0].message or failed[0].check) + more


@record_body("run")
class RunSummary(BaseModel):
    """Run-level facts and aggregates. ``status`` is ``complete`` only when every scenario ran;
    ``aborted`` means the harness itself failed (the gate then exits 2)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA_VERSION
    status: Literal["complete", "aborted"]
    error: str | None = None
    target: str
    started_at: str
    finished_at: str
    duration_s: float
    git: GitInfo = Field(default_factory=lambda: GitInfo())
    # embedding_model and index_fingerprint (in-process targets) and machine (every run):
    # what a gate must match before it compares scores (evals/run/environment.py)
    environment: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    tools: list[str] = Field(default_factory=list)
    missing_tools: list[str] = Field(default_factory=list)
    modes: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    aggregates: dict[str, Any] = Field(default_factory=dict)


class RunLogError(RuntimeError):
    """A run directory that is missing, incomplete or unreadable (a harness error)."""


class RunLog(BaseModel):
    """A whole run: the summary and every scenario record."""

    model_config = ConfigDict(frozen=True)

    summary: RunSummary
    records: list[ScenarioRecord]
    # tools/list as published: {name: {"inputSchema": ..., "outputSchema": ...}}; None when the
    # log predates tools.json or the backend could not be listed.
    surface: dict[str, dict[str, Any]] | None = None
    latency_records: list[LatencyRecord] | None = None

    def by_mode(self, mode: str = DEFAULT_MODE) -> list[ScenarioRecord]:
        return [r for r in self.records if r.mode == mode]

    def write(self, directory: Path) -> Path:
        """Write summary, per-scenario JSONL and TREC files into ``directory``, first removing
        artifacts of an earlier run there (so a reused ``--out`` never mixes two runs)."""
        directory.mkdir(parents=True, exist_ok=True)
        clear_artifacts(directory)
        with (directory / SCENARIOS_FILE).open("w", encoding="utf-8") as handle:
            for record in self.records:
                handle.write(record.model_dump_json() + "\n")
        write_trec(directory, self.records)
        files = [SCENARIOS_FILE, QRELS_FILE, *(f"run.{m}.trec" for m in self.summary.modes)]
        if self.surface is not None:
            (directory / TOOLS_FILE).write_text(dumps(self.surface), encoding="utf-8")
            files.append(TOOLS_FILE)
        write_record(directory, run_header(self.summary), self.summary, files)
        return directory

    @classmethod
    def read(cls, directory: Path | str) -> RunLog:
        """Read a run directory; raises :class:`RunLogError` naming what is wrong."""
        directory = Path(directory)
        summary_path = record_path(directory, "run")
        records_path = directory / SCENARIOS_FILE
        if not summary_path.is_file():
            raise RunLogError(f"{summary_path}: missing (is {directory} a run directory?)")
        try:
            summary = read_record(summary_path, RunSummary).body
        except RecordBodyError as exc:
            raise RunLogError(f"{summary_path}: invalid summary: {exc.cause}") from None
        except RunRecordError as exc:
            raise RunLogError(str(exc)) from None
        if not records_path.is_file():
            raise RunLogError(f"{records_path}: missing (is {directory} a run directory?)")
        records: list[ScenarioRecord] = []
        for number, line in enumerate(records_path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(ScenarioRecord.model_validate_json(line))
            except ValidationError as exc:
                raise RunLogError(f"{records_path}:{number}: invalid record: {exc}") from None
        surface = None
        tools_path = directory / TOOLS_FILE
        if tools_path.is_file():
            try:
                surface = json.loads(tools_path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise RunLogError(f"{tools_path}: invalid JSON: {exc}") from None
        latency = None
        latency_path = directory / LATENCY_FILE
        if latency_path.is_file():
            try:
                latency = read_latency(latency_path)
            except ValueError as exc:
                raise RunLogError(f"{latency_path}: invalid latency record: {exc}") from None
        return cls(summary=summary, records=records, surface=surface, latency_records=latency)


DERIVED_FILES = (
    "gate.md",
    "gate.html",
    "junit.xml",
    "report.md",
    "report.html",
    "report.json",
)
DERIVED_DIRS = ("gate_figures", "report_figures")


def run_header(summary: RunSummary) -> RecordHeader:
    """The run's record header from its summary: a complete run exits 0 (failing scenarios are
    the gate's business), an aborted one 2."""
    return RecordHeader(
        kind="run",
        commit=summary.git.get("commit"),
        dirty=summary.git.get("dirty"),
        machine=dict(summary.environment.get("machine") or {}),
        target=summary.target,
        settings=summary.config,
        started=summary.started_at,
        duration_s=summary.duration_s,
        status="complete" if summary.status == "complete" else "error",
        exit_code=0 if summary.status == "complete" else 2,
    )


def clear_artifacts(directory: Path) -> None:
    """Delete only what a run, gate or report writes; anything else in the folder stays."""
    names = [SCENARIOS_FILE, QRELS_FILE, TOOLS_FILE, *DERIVED_FILES]
    names += [record_path(directory, kind).name for kind in ("run", "gate")]
    for path in [directory / name for name in names] + sorted(directory.glob("run.*.trec")):
        path.unlink(missing_ok=True)
    for name in DERIVED_DIRS:
        folder = directory / name
        if folder.is_dir():
            for figure in folder.glob("*.svg"):
                figure.unlink()
            if not any(folder.iterdir()):
                folder.rmdir()


def trec_id(text: str) -> str:
    """Ids as a single TREC token (whitespace -> ``_``), applied to qrels and runs alike."""
    return "_".join(str(text).split()) or "_"


def trec_run_lines(records: Iterable[ScenarioRecord], tag: str) -> list[str]:
    """TREC run lines ``qid Q0 doc rank score tag`` with strictly decreasing scores."""
    lines: list[str] = []
    for record in records:
        if not record.relevant:
            continue
        ranked = public_ranking(record.retrieved_ids)
        total = len(ranked)
        for rank, doc in enumerate(ranked, 1):
            lines.append(f"{trec_id(record.id)} Q0 {trec_id(doc)} {rank} {total - rank + 1} {tag}")
    return lines


def write_trec(directory: Path, records: list[ScenarioRecord]) -> None:
    """``qrels.trec`` from the default pass and one ``run.<mode>.trec`` per mode."""
    qrels: list[str] = []
    for record in records:
        if record.mode == DEFAULT_MODE:
            qrels.extend(
                f"{trec_id(record.id)} 0 {trec_id(doc)} {grade}"
                for doc, grade in public_judgments(record.relevant).items()
            )
    (directory / QRELS_FILE).write_text(
        "\n".join(qrels) + ("\n" if qrels else ""), encoding="utf-8"
    )
    modes = sorted({r.mode for r in records})
    for mode in modes:
        lines = trec_run_lines((r for r in records if r.mode == mode), f"evals-{mode}")
        (directory / f"run.{mode}.trec").write_text(
            "\n".join(lines) + ("\n" if lines else ""), encoding="utf-8"
        )


def dumps(data: Any) -> str:
    """JSON for files other modules write next to the log (stable key order)."""
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"
