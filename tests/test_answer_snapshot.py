"""The answer-snapshot comparison: wall-clock values never count as a change, answers do."""

from __future__ import annotations

import json
from pathlib import Path

from evals.run.answer_snapshot import changed_answers, read_snapshot, without_wall_clock
from ocm_cli.program import main


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_wall_clock_fields_are_dropped_and_corpus_dates_kept() -> None:
    answer = {
        "trace": [{"tool": "odb.get", "started_ms": 1.5, "duration_ms": 20}],
        "last_updated": "2026-11-27T13:01:02+00:00",
        "effective_date": "2024-05-01",
    }
    assert without_wall_clock(answer) == {
        "trace": [{"tool": "odb.get"}],
        "effective_date": "2024-05-01",
    }


def test_compare_reports_only_the_changed_call(tmp_path: Path) -> None:
    same = {"id": "a", "tool": "odb.get", "args": {"drug": "x"}, "answer": {"covered": True}}
    before = _write(
        tmp_path / "before.jsonl",
        [same, {"id": "b", "tool": "adp.get", "args": {}, "answer": {"share": 75}}],
    )
    after = _write(
        tmp_path / "after.jsonl",
        [same, {"id": "b", "tool": "adp.get", "args": {}, "answer": {"share": 100}}],
    )
    changes = changed_answers(read_snapshot(before), read_snapshot(after))
    assert [key.split()[0] for key, _ in changes] == ["b"]
    diff = "\n".join(changes[0][1])
    assert '-  "share": 75' in diff and '+  "share": 100' in diff
    assert main(["snapshot", "--compare", str(before), str(after)]) == 1
    assert main(["snapshot", "--compare", str(before), str(before)]) == 0


def test_a_call_on_one_side_only_is_a_change(tmp_path: Path) -> None:
    record = {"id": "a", "tool": "odb.get", "args": {"drug": "x"}, "text": "not found"}
    before = read_snapshot(_write(tmp_path / "before.jsonl", [record]))
    after = read_snapshot(_write(tmp_path / "after.jsonl", [{**record, "args": {"drug": "y"}}]))
    assert len(changed_answers(before, after)) == 2


def test_an_ignored_field_is_left_out_of_the_comparison(tmp_path: Path) -> None:
    old = {"id": "a", "tool": "adp.get", "args": {}, "answer": {"summary": "s"}}
    new = {**old, "answer": {"summary": "s", "lead": "device"}}
    before = _write(tmp_path / "before.jsonl", [old])
    after = _write(tmp_path / "after.jsonl", [new])
    assert main(["snapshot", "--compare", str(before), str(after)]) == 1
    assert main(["snapshot", "--compare", str(before), str(after), "--ignore-field", "lead"]) == 0


async def test_a_scenario_whose_ids_come_from_a_search_is_asked_with_them(
    tmp_path: Path,
) -> None:
    import shutil

    from evals.run.answer_snapshot import _record

    golden = tmp_path / "golden"
    golden.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "golden/opa/freshness_probe.yaml", golden)
    out = tmp_path / "snap.jsonl"
    await _record("", [golden], out)
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    one = records["opa-freshness-single-document"]
    assert "document_ids" not in one["args"]  # the key stays the scenario's own arguments
    assert one["asked"]["document_ids"] and one["answer"]["documents_checked"] == 1
    assert "asked" not in records["opa-freshness-pho-documents"]  # no lookup, nothing added
