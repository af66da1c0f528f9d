"""Run records for report tests, written as the commands write them (the header's commit, time
and machine described here, never read from this machine)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ocm_common.run_record import Kind, RecordHeader, write_record

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
