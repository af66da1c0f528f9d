"""Load runs against real servers.

One short `latency` run against the reference server is in the default suite (0 errors, the
report files); the runs that need extra server configurations are marked `load`
(`make test-load`). None asserts a speed: they assert that a seeded slowness is caught.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from load.parallel import check_delay, check_fanout, run_parallel
from load.parallel_report import ParallelReport
from load.profiles import LocustProfile, ParallelProfile
from load.run import run_profile
from load.slo import load_slo
from load.taskmix import TaskMix
from ocm_cli.program import main
from ocm_common.launcher import running_server

pytestmark = pytest.mark.slow
DEFECTIVE = Path(__file__).with_name("defective_server.py")
LENIENT_SLO = """
spec_ceilings: [{tools: "*", p50_ms: 60000, p95_ms: 60000}]
profiles: {latency: {p50_ms: 60000, p95_ms: 60000}}
max_errors: 0
"""


@pytest.fixture(scope="module")
def reference_url() -> Iterator[str]:
    with running_server(workers=2) as url:
        yield url


def test_short_load_run_has_no_errors_and_writes_reports(
    reference_url: str, tmp_path: Path
) -> None:
    slo_file = tmp_path / "slo.yaml"
    slo_file.write_text(LENIENT_SLO)  # this test is about errors and files, not speed
    run = run_profile(
        "latency",
        reference_url,
        tmp_path,
        LocustProfile(users=2, time_s=6),
        quiet=True,
        slo_file=slo_file,
    )
    assert run.summary["errors"] == 0, run.summary["failures"]
    assert run.exit_code == 0, run.summary["misses"]
    assert run.summary["calls"] > 0 and set(run.summary["tools"]) <= set(
        TaskMix.from_golden().tools
    )
    for name in ("latency.jsonl", "latency.json", "latency.html", "latency_stats.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert run.summary["cache_hit_rate"] is not None


def _defective(defect: str):  # type: ignore[no-untyped-def]
    def factory(env: dict[str, str]) -> AbstractContextManager[str]:
        return running_server(workers=1, env=env, command=(sys.executable, str(DEFECTIVE), defect))

    return factory


@pytest.mark.load
def test_150ms_on_the_sql_path_fails_make_load_naming_the_tools(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OCM_FAULT_SQL_DELAY_MS", "150")
    code = main(
        [
            "load",
            "run",
            "--profile",
            "latency",
            "--time",
            "8",
            "--server-workers",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 1
    summary = json.loads((tmp_path / "latency.json").read_text())
    slow = {m.split()[1] for m in summary["misses"]}
    assert {"opa.search_sections", "schedule.get", "odb.get"} <= slow


@pytest.mark.load
def test_parallel_catches_paths_run_one_after_the_other() -> None:
    slo, mix, report = load_slo(), TaskMix.from_golden(seed=1), ParallelReport()
    factory = _defective("sequential-paths")
    delay = str(slo.parallel.delay_ms)
    with (
        factory({}) as healthy,
        factory({"OCM_FAULT_SQL_DELAY_MS": delay, "OCM_FAULT_VECTOR_DELAY_MS": delay}) as delayed,
    ):
        check_delay(healthy, delayed, mix, slo, ParallelProfile(calls_per_tool=3), report)
    missed = {f.subject for f in report.findings if not f.passed}
    assert {"opa.search_sections", "schedule.get", "adp.get"} <= missed, report.table()


@pytest.mark.load
def test_parallel_catches_a_sequential_fanout() -> None:
    slo, mix, report = load_slo(), TaskMix.from_golden(), ParallelReport()
    with _defective("sequential-fanout")({}) as url:
        check_fanout(url, mix, slo, report)
    assert not report.passed and "sum" in report.findings[0].detail, report.table()


@pytest.mark.load
def test_parallel_catches_blocking_work_on_the_event_loop() -> None:
    report = run_parallel(
        _defective("blocking-delay"),
        profile=ParallelProfile(calls_per_tool=2),
        checks="d",
        progress=lambda _: None,
    )
    assert [f.check for f in report.findings if not f.passed] == ["d"], report.table()
