"""The fuzz run's hold on the target under test: an event loop in a thread (hypothesis is
synchronous, the target async), the run's deadline, one call or one ``tools/list`` within its
limit, and a fresh session when the server has to be started again (counted against the caps).
Recording and shrinking the case that broke the server is fuzz_recovery.py's; the properties
are fuzz_engine.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import shlex
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from evals.conformance.canary import planted
from evals.run.fuzz_checks import Classified, classify
from evals.run.fuzz_models import (
    EDGE_FAMILY,
    KNOWN_FAMILY,
    VALID_FAMILY,
    Case,
    FuzzConfig,
    ToolStats,
)
from evals.run.fuzz_strategies import Mutations
from evals.run.fuzz_survival import FailureHow, StopRun, StopTool
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.target_contract import Target, TargetError
from ocm_common.findings import EventStream, Finding
from ocm_common.json_types import Arguments

T = TypeVar("T")
CONNECT_LIMIT_S = 300.0  # start and initialize (a restart too)
CLOSE_LIMIT_S = 20.0  # a session's close: the stdio transport's own waits are bounded below it
REPLAY = "replay_after_fuzzing"


class LoopThread:
    """An event loop in a thread, so hypothesis (synchronous) can drive an async target."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()  # timed out or interrupted: the coroutine is cancelled on its loop
            raise

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class FuzzSession:
    """One connected target and the run's state around it: the seed, the deadline, the
    findings so far, the restarts (per run and per tool) and the server process to watch."""

    def __init__(
        self,
        target: Target,
        runner: LoopThread,
        config: FuzzConfig,
        events: EventStream | None = None,
    ):
        self.target = target
        self.runner = runner
        self.config = config
        self.events = events or EventStream()
        self.seed = config.seed if config.seed is not None else random.randrange(2**32)
        self.failures: list[Finding] = []
        self._cases_run = 0
        self.deadline = time.monotonic() + config.deadline_s if config.deadline_s else None
        self.restarts = 0  # counted: the server died or stopped answering
        self.notes: list[str] = []
        self._restarts_by_tool: dict[str, int] = {}
        self._recorded: set[tuple[str, str, str]] = set()  # (tool, how, case kind)
        self._stats: dict[str, ToolStats] = {}
        self._validity: dict[str, Mutations] = {}
        self._previous: tuple[ToolInfo, Case] | None = None
        self._needs_restart = False
        self._unread_seen = 0

    def reproduce(self, tool: str, family: str) -> str:
        kind = "valid" if family in (VALID_FAMILY, EDGE_FAMILY, KNOWN_FAMILY, REPLAY) else "invalid"
        counts = (
            f"--valid {self.config.valid} --invalid 0"
            if kind == "valid"
            else (f"--valid 0 --invalid {self.config.invalid}")
        )
        return (
            f"ocm fuzz --target {shlex.quote(self.target.spec)} "
            f"--tool {tool} --family {family} --seed {self.seed} {counts}"
        )

    # ------------------------------------------------------------------ time

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def check_time(self) -> None:
        """Start nothing new once the deadline has passed."""
        if self.past_deadline():
            raise StopRun(f"the {self.config.deadline_s:g} s deadline (--deadline) was reached")

    def limit(self, limit: float) -> float:
        """``limit`` cut to the time left before the deadline plus the grace."""
        return self._limit(limit)[0]

    def _limit(self, limit: float) -> tuple[float, bool]:
        """A call's time limit, cut to the deadline plus the grace; whether it was cut."""
        if self.deadline is None:
            return limit, False
        left = self.deadline - time.monotonic() + self.config.grace_s
        return (max(0.5, left), True) if left < limit else (limit, False)

    # ------------------------------------------------------------------ calls

    def _call(
        self, tool: str, args: Arguments
    ) -> tuple[CallOutcome | None, Exception | None, float]:
        """One tools/call within its limit: (outcome, error, seconds taken). A call the
        deadline cut short ends the run instead of counting as a hang."""
        self.check_time()
        limit, cut = self._limit(self.config.call_timeout_s)
        out: CallOutcome | None = None
        error: Exception | None = None
        started = time.monotonic()
        try:
            out = self.runner.run(self.target.call_tool(tool, args, timeout_s=limit), limit + 10)
        except (TargetError, TimeoutError) as exc:
            error = exc
        if error is not None and cut and self.past_deadline():
            self.check_time()
        return out, error, time.monotonic() - started

    def _process(self) -> Any:
        """The stdio server process (pid, exit status, stderr), None for other targets."""
        return getattr(self.target, "process", None)

    def _answers_list(self) -> tuple[str | None, FailureHow | None]:
        """tools/list now: (None, None) when answered; else (the problem, how the server is:
        died, stopped answering, or None when it answered with an error)."""
        limit, cut = self._limit(min(self.config.probe_timeout_s, self.config.call_timeout_s))
        try:
            self.runner.run(asyncio.wait_for(self.target.list_tools(), limit), limit + 10)
            return None, None
        except Exception as exc:
            if cut and self.past_deadline():
                self.check_time()
            problem = f"tools/list failed after this case: {exc}"[:300]
            listed = classify(None, exc)
            if listed.kind != "no-answer":  # answered, with an error
                return problem, None
            process = self._process()
            exited = process is not None and process.exited
            return problem, "stopped answering" if listed.timed_out and not exited else "died"

    def _how_failed(self, call: Classified) -> FailureHow | None:
        """How a call that got no answer left the server (fuzz_survival.FailureHow), None
        when it answered (a result or an error)."""
        if call.kind != "no-answer":
            return None
        process = self._process()
        if not call.timed_out or (process is not None and process.exited):
            return "died"
        _, how = self._answers_list()
        return how or "hung"

    def _ended(self) -> str:
        """How the server process ended, with its last stderr line (read before a restart)."""
        process = self._process()
        if process is None:
            return ""
        if not process.exited:
            self.runner.run(process.wait_exit(0.5), 5)
        tail = process.stderr_tail(1)
        last = f"; last stderr line: {tail[-1][:200]!r}" if tail else ""
        return f"the server process {process.ended_text()}{last}"

    # ------------------------------------------------------------------ restarts

    def _reconnect(self) -> None:
        """A fresh process and a new session (for other targets: a new session)."""
        self.check_time()
        with contextlib.suppress(Exception):  # a session that will not close is left behind
            self.runner.run(self.target.__aexit__(None, None, None), CLOSE_LIMIT_S)
        limit, _ = self._limit(CONNECT_LIMIT_S)
        try:
            with planted(self.config.canary):
                self.runner.run(self.target.__aenter__(), limit)
        except (TargetError, TimeoutError) as exc:
            self.check_time()
            why = str(exc) or f"{type(exc).__name__} after {limit:g} s"
            raise StopRun(f"the server could not be started again: {why}"[:2000]) from exc
        self._needs_restart = False
        process = self._process()
        self._unread_seen = len(process.unreadable) if process is not None else 0

    def _count_restart(self, tool: str) -> None:
        """One more restart after a failure on ``tool``; the caps stop the tool or the run."""
        self.restarts += 1
        self._restarts_by_tool[tool] = self._restarts_by_tool.get(tool, 0) + 1
        self._stats[tool].restarts += 1
        if self.restarts > self.config.restarts_per_run:
            raise StopRun(
                f"restart cap: the server died or stopped answering {self.restarts} times in "
                f"this run (cap {self.config.restarts_per_run}, --restarts-per-run)"
            )
        if self._restarts_by_tool[tool] > self.config.restarts_per_tool:
            raise StopTool(
                f"restart cap: the server died or stopped answering {self._restarts_by_tool[tool]} "
                f"times on {tool} (cap {self.config.restarts_per_tool}, --restarts-per-tool); "
                "its remaining cases were not run"
            )

    def _add(self, finding: Finding) -> None:
        self.failures.append(finding)
        self.events.found("fuzz", finding)
