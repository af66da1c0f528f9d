"""`make report` reads any run record by its kind (a bench, a fuzz run, a run log), and
`make compare` puts two records of one kind side by side."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ocm_cli.program import main
from ocm_common.run_record import SCHEMA_VERSION, write_record
from tests.described_machines import AVX2_ONLY
from tests.evals.evals_testkit import record
from tests.run_records import record_header, write_bench

# A fuzz body in the shape fuzz.json has: per-grade counts, the failures, the printed table.
FUZZ_BODY = {
    "ok": False,
    "seed": 7,
    "findings_by_grade": {"security": 2, "warning": 0},
    "failures": [{"check": "no_secret_leak", "tool": "diagnostics", "grade": "security"}],
    "table": "| tool | cases |",
}


def _bench(p95: float) -> dict[str, object]:
    return {
        "timestamp": "20261127T120000Z",
        "machine": AVX2_ONLY,
        "slo_pass": True,
        "gate_pass": True,
        "exit_code": 0,
        "tools": {"odb.get": {"p50_ms": 5.0, "p95_ms": p95, "p99_ms": 30.0, "errors": 0}},
    }


def test_report_reads_a_bench_record(tmp_path: Path) -> None:
    write_bench(tmp_path, _bench(9.0))
    assert main(["report", "--run", str(tmp_path)]) == 0
    text = (tmp_path / "bench.md").read_text()
    assert "# Bench 20261127T120000Z" in text and "SLO PASS, gate PASS" in text
    assert "| odb.get | 5.0 | - | 9.0 |" in text


def test_report_reads_a_fuzz_record(tmp_path: Path) -> None:
    write_record(tmp_path, record_header("fuzz", AVX2_ONLY, exit_code=1), FUZZ_BODY)
    assert main(["report", "--run", str(tmp_path)]) == 0
    text = (tmp_path / "fuzz.report.md").read_text()
    assert "# Fuzz record" in text and "**failed; exit 1**" in text
    assert "| commit | 0123456789abcdef0123456789abcdef01234567 |" in text
    assert "| findings_by_grade.security | 2 |" in text
    assert "| failures[0].tool | diagnostics |" in text
    assert "AMD EPYC 7B12 (x86_64), 2 cores" in text


def test_report_reads_a_run_record(make_log: Callable[..., Path]) -> None:
    run = make_log([record("q1", metrics={"nDCG@10": 1.0})])
    assert (run / "run.record.json").is_file()
    assert main(["report", "--run", str(run)]) == 0
    assert "opa.search_sections" in (run / "report.md").read_text()


def test_report_refuses_a_record_of_another_schema_version(tmp_path: Path) -> None:
    path = write_record(tmp_path, record_header("fuzz"), FUZZ_BODY)
    data = json.loads(path.read_text())
    data["header"]["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    assert main(["report", "--run", str(tmp_path)]) == 2
    assert not (tmp_path / "fuzz.report.md").exists()


def test_compare_puts_two_bench_records_side_by_side(tmp_path: Path) -> None:
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    write_bench(a, _bench(9.0))
    write_bench(b, _bench(18.0))
    assert main(["compare", "--run-a", str(a), "--run-b", str(b), "--out", str(out)]) == 0
    text = (out / "compare.md").read_text()
    assert "| tools.odb.get.p95_ms | 9 | 18 | +9 | 2.000 |" in text
    assert "tools.odb.get.p50_ms" not in text  # the same in both: not a difference


def test_compare_refuses_records_of_two_kinds(tmp_path: Path) -> None:
    write_bench(tmp_path / "a", _bench(9.0))
    write_record(tmp_path / "b", record_header("fuzz"), FUZZ_BODY)
    args = ["compare", "--run-a", str(tmp_path / "a"), "--run-b", str(tmp_path / "b")]
    assert main([*args, "--out", str(tmp_path / "out")]) == 2
