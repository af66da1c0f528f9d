"""Run records for report tests, written as the commands write them (the header's commit, time
and machine described here, never read from this machine)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ocm_common.run_record import (
    Kind,
    RecordHeader,
    RunRecord,
    read_record,
    status_for,
    write_record,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def record_header(
    kind: Kind, machine: dict[str, Any] | None = None, exit_code: int = 0
) -> RecordHeader:
    return RecordHeader(
        kind=kind,
        commit=COMMIT,
        dirty=False,
        machine=machine or {},
        target="http://127.0.0.1:8000/mcp",
        settings={"profile": "latency"},
        started="2026-11-27T12:00:00+00:00",
        duration_s=61.5,
        status="complete" if exit_code == 0 else "failed",
        exit_code=exit_code,
    )


def write_bench(directory: Path, summary: dict[str, Any]) -> Path:
    """``bench.record.json`` (or ``regression.record.json`` for a summary of that kind)."""
    kind: Kind = "regression" if summary.get("kind") == "regression" else "bench"
    head = record_header(kind, summary.get("machine"), int(summary.get("exit_code", 0)))
    return write_record(directory, head, summary)


def assert_record(directory: Path, kind: Kind, exit_code: int) -> RunRecord:
    """The command's record is there, of its kind, with its exit code and a machine."""
    record = read_record(directory / f"{kind}.record.json")
    assert record.header.kind == kind
    assert record.header.exit_code == exit_code
    assert record.header.status == status_for(exit_code)
    assert record.header.machine and record.header.duration_s >= 0
    return record


def bench_markdown(summary: dict[str, Any]) -> str:
    """The bench (or regression) report's Markdown of a summary, as `evals report` renders it."""
    from evals.read import bench_report, regression_report
    from evals.render import to_markdown

    kind: Kind = "regression" if summary.get("kind") == "regression" else "bench"
    record = RunRecord(
        header=record_header(kind, summary.get("machine"), int(summary.get("exit_code", 0))),
        body=summary,
    )
    with tempfile.TemporaryDirectory() as folder:
        if kind == "regression":
            return to_markdown(regression_report.document(Path(folder), record))
        return to_markdown(bench_report.bench_document(Path(folder), record))
