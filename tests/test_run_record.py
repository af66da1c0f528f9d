"""The run record's envelope: it round-trips, refuses a schema version it does not read with a
clear error, names every kind of command, and every command that runs something writes one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ocm_common import run_record
from ocm_common.run_record import (
    KINDS,
    SCHEMA_VERSION,
    RunRecord,
    RunRecordError,
    find_records,
    locate,
    read_record,
    status_for,
    write_record,
)
from tests.run_records import COMMIT, record_header

ROOT = Path(__file__).resolve().parents[1]
# Every command that runs something, and the record BASE= writes.
COMMANDS = {
    "run",
    "gate",
    "derived",
    "fuzz",
    "security",
    "contract",
    "bench",
    "load",
    "scale",
    "routing",
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_round_trips(kind: str, tmp_path: Path) -> None:
    body = {"tools": {"odb.get": {"p95_ms": 9.5}}, "misses": ["a miss"], "ok": False}
    head = record_header(kind, {"cpu_model": "AMD EPYC 7B12", "cores": 2}, exit_code=1)  # type: ignore[arg-type]
    path = write_record(tmp_path, head, body, files=["z.md", "a.jsonl"])
    assert path == tmp_path / f"{kind}.record.json"
    back = read_record(path)
    assert back == RunRecord(header=head, body=body, files=["a.jsonl", "z.md"])
    assert back.header.commit == COMMIT and back.header.status == "failed"
    assert back.header.schema_version == SCHEMA_VERSION


def test_every_command_has_a_kind_and_each_kind_is_written_somewhere() -> None:
    assert COMMANDS | {"regression"} == set(KINDS)
    sources = "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("evals", "load", "scale")
        for p in (ROOT / folder).rglob("*.py")
    )
    # header("<kind>", ...) in the commands; the run log builds its header with kind="run"
    written = set(re.findall(r'header\(\s*"([a-z]+)"', sources))
    written |= set(re.findall(r'kind="([a-z]+)"', sources)) & set(KINDS)
    assert written == set(KINDS)


def test_another_schema_version_is_refused_by_name(tmp_path: Path) -> None:
    path = write_record(tmp_path, record_header("fuzz"), {"ok": True})
    data = json.loads(path.read_text())
    data["header"]["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    with pytest.raises(RunRecordError) as caught:
        read_record(path)
    message = str(caught.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert f"reads version {SCHEMA_VERSION} only" in message and str(path) in message


def test_a_file_without_a_header_is_not_a_record(tmp_path: Path) -> None:
    legacy = tmp_path / "bench.record.json"
    legacy.write_text(json.dumps({"timestamp": "t", "slo_pass": True}))
    with pytest.raises(RunRecordError, match="not a run record"):
        read_record(legacy)


def test_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    path = write_record(tmp_path, record_header("load"), {})
    data = json.loads(path.read_text())
    data["header"]["kind"] = "telemetry"
    path.write_text(json.dumps(data))
    with pytest.raises(RunRecordError, match="unknown record kind 'telemetry'"):
        read_record(path)


def test_a_folder_with_a_run_and_its_gate_gives_the_run_first(tmp_path: Path) -> None:
    write_record(tmp_path, record_header("gate"), {})
    write_record(tmp_path, record_header("run"), {})
    assert list(find_records(tmp_path)) == ["run", "gate"]
    assert locate(tmp_path).name == "run.record.json"
    assert locate(tmp_path, "gate").name == "gate.record.json"
    with pytest.raises(RunRecordError, match="no fuzz record"):
        locate(tmp_path, "fuzz")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RunRecordError, match="no run record"):
        locate(empty)


@pytest.mark.parametrize(
    ("code", "status"), [(0, "complete"), (1, "failed"), (2, "error"), (130, "interrupted")]
)
def test_the_exit_code_names_the_status(code: int, status: str) -> None:
    assert status_for(code) == status


def test_the_header_reads_commit_and_machine_when_not_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_record, "git_state", lambda cwd=None: ("abc123", True))
    monkeypatch.setattr(run_record, "describe", lambda: {"cpu_model": "described", "cores": 8})
    head = run_record.header("scale", run_record.Clock(), 2, target="t", settings={"out": tmp_path})
    assert (head.commit, head.dirty, head.machine["cores"]) == ("abc123", True, 8)
    assert head.status == "error" and head.settings == {"out": str(tmp_path)}
