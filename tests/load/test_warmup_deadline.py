"""A load run has an overall deadline: a target whose tool is slower than the time left, or a
locust run longer than the deadline, is stopped at it, and the run comes back cut short
(exit 2) with the record written, status ``cut_short``, saying during what and what was not
done. The fake MCP server is test_warmup_blame's."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from load.profiles import LocustProfile
from load.run import default_deadline, run_profile, wall_clock_bound
from ocm_cli.program import main as ocm_main
from ocm_common.run_record import read_record
from tests.load.test_warmup_blame import Behaviour, serving


@pytest.fixture
def fake() -> Iterator[tuple[str, Behaviour]]:
    behaviour = Behaviour()
    with serving(behaviour) as url:
        yield url, behaviour


def _mix(tmp_path: Path, *tools: str) -> str:
    path = tmp_path / "mix.json"
    path.write_text(json.dumps({tool: [{}] for tool in tools}))
    return f"examples:{path}"


def test_the_default_deadline_adds_every_parts_own_bound() -> None:
    profile = LocustProfile(users=1, time_s=20, warmup_s=5)
    assert default_deadline(profile, 30.0, 120.0) == 120.0 + 25 + wall_clock_bound(30.0)


def test_a_run_cut_short_in_its_warm_up_never_starts_locust(
    fake: tuple[str, Behaviour], tmp_path: Path
) -> None:
    url, behaviour = fake
    behaviour.slow_s = 6.0
    started = time.monotonic()
    run = run_profile(
        "latency",
        url,
        tmp_path,
        LocustProfile(users=1, time_s=60),
        quiet=True,
        mix=_mix(tmp_path, "echo", "slow"),
        call_deadline_s=5.0,
        deadline_s=0.8,
    )
    assert time.monotonic() - started < 5.0  # stopped at the deadline, not the 6 s call
    assert run.cut_short and run.exit_code == 2
    cut = run.summary["cut_short"]
    assert cut["during"] == "warm-up" and cut["deadline_s"] == 0.8
    assert cut["not_done"] == "the locust run (not started)"
    assert run.summary["warm_up"]["blamed"] == {}  # the deadline, not the slow tool
    assert not (tmp_path / "latency.json").exists()


def test_the_load_record_is_written_with_status_cut_short(
    fake: tuple[str, Behaviour], tmp_path: Path
) -> None:
    url, behaviour = fake
    behaviour.slow_s = 2.0
    out = tmp_path / "out"
    args = ["run", "--url", url, "--out", str(out), "--mix", _mix(tmp_path, "echo", "slow")]
    code = ocm_main(["load", *args, "--deadline", "0.8", "--time", "30s", "--call-timeout", "5"])
    assert code == 2
    record = read_record(out / "load.record.json")
    assert record.header.status == "cut_short" and record.header.exit_code == 2
    assert record.header.settings["deadline"] == 0.8
    assert record.body["cut_short"]["during"] == "warm-up"
    assert record.body["warm_up"]["not_warmed"] == ["slow"]


@pytest.mark.slow
def test_a_locust_run_longer_than_the_deadline_is_stopped_and_cut_short(
    fake: tuple[str, Behaviour], tmp_path: Path
) -> None:
    url, _ = fake
    deadline = 12.0
    started = time.monotonic()
    run = run_profile(
        "latency",
        url,
        tmp_path,
        LocustProfile(users=1, time_s=120, rate=2.0),
        quiet=True,
        mix=_mix(tmp_path, "echo"),
        call_deadline_s=2.0,
        deadline_s=deadline,
    )
    took = time.monotonic() - started
    assert took < deadline + 20, took  # the deadline, then stopping locust (15 s grace at most)
    assert run.cut_short and run.exit_code == 2
    cut = run.summary["cut_short"]
    assert cut["during"] == "locust run" and cut["bound"] == "overall"
    assert cut["deadline_s"] == deadline and cut["elapsed_s"] >= deadline
