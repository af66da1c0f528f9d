"""The seeded defects a bench run can switch on by environment variable: +N ms on the SQL
path (`OCM_FAULT_SQL_DELAY_MS`), the two paths one after the other (`OCM_FAULT_SERIAL_PATHS`),
and extra CPU per path in proportion to its own (`OCM_FAULT_CPU_EXTRA`).

Order and CPU time are asserted, never wall-clock speed.
"""

from __future__ import annotations

import threading
import time

from reference_server.config import Settings
from reference_server.retrieval.dual_path import _with_extra_cpu, run_dual


def test_the_three_defects_come_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "OCM_FAULT_SQL_DELAY_MS": "60",
            "OCM_FAULT_SERIAL_PATHS": "1",
            "OCM_FAULT_CPU_EXTRA": "0.25",
        }
    )
    assert settings.faults.sql_delay_ms == 60
    assert settings.faults.serial_paths is True
    assert settings.faults.cpu_extra == 0.25
    assert settings.faults.active
    assert not Settings.from_env({}).faults.active


# generous path timeouts: the serial case waits out the barrier (1 s) on its first path
TIMEOUTS = {"OCM_SQL_TIMEOUT_MS": "5000", "OCM_VECTOR_TIMEOUT_MS": "5000"}


def _paths(events: list[str]):  # type: ignore[no-untyped-def]
    both_running = threading.Barrier(2, timeout=1)

    def path(name: str):  # type: ignore[no-untyped-def]
        def run() -> str:
            events.append(f"{name} start")
            try:
                both_running.wait()  # returns only when the other path runs at the same time
                events.append("together")
            except threading.BrokenBarrierError:
                pass
            events.append(f"{name} end")
            return name

        return run

    return path("sql"), path("vector")


async def test_paths_run_together_by_default() -> None:
    events: list[str] = []
    sql, vector = _paths(events)
    result = await run_dual(Settings.from_env(TIMEOUTS), sql=sql, vector=vector)
    assert result.provenance == ["sql", "vector"] and "together" in events


async def test_serial_paths_run_sql_then_vector() -> None:
    events: list[str] = []
    sql, vector = _paths(events)
    settings = Settings.from_env({**TIMEOUTS, "OCM_FAULT_SERIAL_PATHS": "1"})
    result = await run_dual(settings, sql=sql, vector=vector)
    assert result.provenance == ["sql", "vector"]
    assert events == ["sql start", "sql end", "vector start", "vector end"]


def test_extra_cpu_is_proportional_to_the_paths_own_cpu() -> None:
    def work() -> int:
        until = time.thread_time() + 0.02
        while time.thread_time() < until:
            pass
        return 7

    start = time.thread_time()
    assert work() == 7
    alone = time.thread_time() - start
    start = time.thread_time()
    assert _with_extra_cpu(work, 0.5)() == 7
    with_extra = time.thread_time() - start
    assert with_extra >= 1.5 * 0.02  # the work's 20 ms, then at least half of it again
    assert alone >= 0.02
