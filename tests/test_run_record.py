"""The run record's envelope: it round-trips, migrates an older schema version and refuses a newer
one with a clear error, reads a body as its kind's type, names every kind of command, and every
command that runs something writes one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typing_extensions import TypedDict

from ocm_common import run_record
from ocm_common.bench_summary import BenchSummary
from ocm_common.run_record import (
    KINDS,
    SCHEMA_VERSION,
    RecordBodyError,
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


# A record as the schema-version-1 code wrote it (commit 92380ee), byte for byte.
V1_RECORD = """{
  "header": {
    "kind": "derived",
    "schema_version": 1,
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "dirty": false,
    "machine": {},
    "target": "http://127.0.0.1:8000/mcp",
    "settings": {
      "profile": "latency"
    },
    "started": "2026-11-27T12:00:00+00:00",
    "duration_s": 61.5,
    "status": "complete",
    "exit_code": 0
  },
  "body": {
    "cases": {
      "schedule.code_fee": 3
    },
    "skipped": {
      "schedule.code_fee": {}
    },
    "ratio": 0.00001
  },
  "files": [
    "cases.yaml"
  ]
}
"""


def test_every_older_version_has_a_migration_step() -> None:
    assert sorted(run_record.MIGRATIONS) == list(range(1, SCHEMA_VERSION))


def test_migration_1_to_2_changes_only_the_version() -> None:
    data = json.loads(V1_RECORD)
    migrated = run_record.MIGRATIONS[1](data)
    assert migrated["header"]["schema_version"] == 2
    assert data["header"]["schema_version"] == 1  # the raw JSON it was given is left as it was
    migrated["header"]["schema_version"] = 1
    assert migrated == data


def test_a_version_1_record_is_read_migrated(tmp_path: Path) -> None:
    path = tmp_path / "derived.record.json"
    path.write_text(V1_RECORD)
    record = read_record(path)
    assert record.header.schema_version == SCHEMA_VERSION
    assert record.body == json.loads(V1_RECORD)["body"] and record.files == ["cases.yaml"]


def test_a_record_written_now_is_the_version_1_bytes_but_its_version(tmp_path: Path) -> None:
    old = json.loads(V1_RECORD)
    path = write_record(tmp_path, record_header("derived"), old["body"], old["files"])
    assert path.read_text() == V1_RECORD.replace(
        '"schema_version": 1', f'"schema_version": {SCHEMA_VERSION}'
    )


def test_a_version_with_no_way_to_it_is_refused(tmp_path: Path) -> None:
    data = json.loads(V1_RECORD)
    data["header"]["schema_version"] = 0
    path = tmp_path / "derived.record.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RunRecordError, match=r"schema version 0.*migrates none older than 1"):
        read_record(path)


class _Derived(TypedDict):
    cases: dict[str, int]
    skipped: dict[str, dict[str, int]]


def test_the_typed_reader_gives_the_body_as_its_type(tmp_path: Path) -> None:
    path = write_record(tmp_path, record_header("bench"), {"timestamp": "t", "elapsed_s": 3})
    record = read_record(path, BenchSummary)
    assert isinstance(record.body, BenchSummary) and record.body.elapsed_s == 3.0
    derived = write_record(tmp_path, record_header("derived"), {"cases": {"a": 2}, "skipped": {}})
    assert read_record(derived, _Derived).body == {"cases": {"a": 2}, "skipped": {}}


def test_the_typed_reader_refuses_another_kind_and_a_body_not_of_its_type(
    tmp_path: Path,
) -> None:
    path = write_record(tmp_path, record_header("fuzz"), {"timestamp": "t"})
    with pytest.raises(RunRecordError, match="a fuzz record; a BenchSummary is the body of bench"):
        read_record(path, BenchSummary)
    bad = write_record(tmp_path, record_header("derived"), {"cases": {"a": "two"}, "skipped": {}})
    with pytest.raises(RecordBodyError, match="invalid derived body") as caught:
        read_record(bad, _Derived)
    assert caught.value.cause.errors()[0]["loc"] == ("cases", "a")
