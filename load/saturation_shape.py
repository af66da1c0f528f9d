"""The saturation profile's load shape: the user count stepped up until a step is not
sustained, each step's calls/s and worst per-tool p95 read from locust's statistics; and which of
those statistics' entries are not tool calls (the session's setup requests, locust's total row)."""

from __future__ import annotations

import logging
import time
from typing import NamedTuple

from locust import LoadTestShape

from ocm_common.latency_records import LatencyRecord
from ocm_common.profile_results import SaturationStep

log = logging.getLogger("load")

NON_TOOL_NAMES = {"initialize", "notifications/initialized", "tools/list", "Aggregated"}


class StatsSnapshot(NamedTuple):
    """Locust's statistics at one moment: per tool (response-time histogram, calls, failures)."""

    t: float
    tools: dict[str, tuple[dict[int, int], int, int]]


class SaturationShape(LoadTestShape):
    """Steps the user count up; stops after a step where a tool's p95 passes the step bar or an
    error appears. Each step's calls/s and per-tool p95 come from locust's stats histogram."""

    abstract = True  # only used when the runner selects it (saturation profile)

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[int] = [2, 4, 8, 12, 16, 24, 32]
        self.step_time = 8.0
        self.step_p95_ms = 250.0
        self.index = 0
        self.results: list[SaturationStep] = []
        self._snapshot: StatsSnapshot | None = None
        self._step_started = 0.0
        self._stopped = False

    def _take_snapshot(self) -> StatsSnapshot:
        stats = self.runner.stats  # type: ignore[union-attr]
        return StatsSnapshot(
            time.monotonic(),
            {
                name: (dict(entry.response_times), entry.num_requests, entry.num_failures)
                for (name, _method), entry in stats.entries.items()
                if name not in NON_TOOL_NAMES
            },
        )

    def _close_step(self) -> bool:
        """Record the step that just ended; True if it was sustained."""
        now = self._take_snapshot()
        before = self._snapshot or StatsSnapshot(now.t, {})
        elapsed = max(now.t - before.t, 1e-6)
        calls = errors = 0
        worst_p95 = 0.0
        worst_tool = ""
        for name, (hist, n, fails) in now.tools.items():
            old_hist, old_n, old_fails = before.tools.get(name, ({}, 0, 0))
            delta = {
                k: v - old_hist.get(k, 0) for k, v in hist.items() if v - old_hist.get(k, 0) > 0
            }
            calls += n - old_n
            errors += fails - old_fails
            record = LatencyRecord.from_histogram("saturation", name, delta)
            if record.n and record.p95_ms > worst_p95:
                worst_p95, worst_tool = record.p95_ms, name
        rps = round(calls / elapsed, 2)
        sustained = errors == 0 and worst_p95 <= self.step_p95_ms and calls > 0
        self.results.append(
            SaturationStep(
                users=self.steps[self.index],
                rps=rps,
                errors=errors,
                worst_p95_ms=worst_p95,
                worst_tool=worst_tool,
                sustained=sustained,
            )
        )
        log.warning(
            "saturation step %d users: %.1f calls/s, worst p95 %.0f ms (%s), %d errors%s",
            self.steps[self.index],
            rps,
            worst_p95,
            worst_tool,
            errors,
            "" if sustained else "  <- not sustained, stopping",
        )
        self._snapshot = now
        return sustained

    def tick(self) -> tuple[int, float] | None:
        if self._stopped:
            return None
        run_time = self.get_run_time()
        if self._snapshot is None:
            self._snapshot = self._take_snapshot()
            self._step_started = run_time
        if run_time - self._step_started >= self.step_time:
            sustained = self._close_step()
            self.index += 1
            self._step_started = run_time
            if not sustained or self.index >= len(self.steps):
                self._stopped = True
                return None
        users = self.steps[self.index]
        return users, float(users)


def saturation_rps(results: list[SaturationStep]) -> float:
    """The highest calls/s over the sustained steps (0 if none was)."""
    return max((r.rps for r in results if r.sustained), default=0.0)
