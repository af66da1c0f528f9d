"""The dual-path runner: SQL and vector retrieval concurrently, each under its own timeout.

Both paths are always attempted (unless the configured mode switches one off), in parallel
with `asyncio.gather`; blocking work runs in a thread pool so the event loop keeps serving.
A path that fails or times out yields `None` and an error string; the tool then answers with
what the other path found, a lower confidence, and a `provenance` naming only the paths that
answered. Fault injection (config only) delays or fails a path here, in one place; so do the
seeded defects a bench must catch (paths run serially, extra CPU per path).

The whole-tool timeout reaches in here as a deadline (`tool_deadline`, set by the tool
wrapper): no path waits past it, minus a reserve for merging and scoring. So when one path
has answered and the other is still running as the deadline nears, the slow one is cut and
the tool answers from the one that finished (partial, lower confidence) instead of failing.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from reference_server.config import Settings
from reference_server.errors import ClientFacingError, masked

log = logging.getLogger(__name__)

S = TypeVar("S")
PathName = Literal["sql", "vector"]
V = TypeVar("V")

# Dedicated pool: a path cut at its timeout keeps its thread until the blocking call returns,
# so the pool is larger than the default executor's share of a 2-core machine.
_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="retrieval")


# Monotonic time by which retrieval must have finished for the current tool call (None: no limit).
_DEADLINE: ContextVar[float | None] = ContextVar("retrieval_deadline", default=None)
# Share of the whole-tool budget kept for merging, scoring and the event loop's own latency after
# retrieval (at least 100 ms): on a starved machine a smaller reserve let a tool that had its
# retrieval results overrun the whole-tool limit and answer a timeout error instead.
MERGE_RESERVE = 0.25


@contextmanager
def tool_deadline(budget_s: float) -> Iterator[None]:
    """Retrieval started inside this block stops in time for the tool to answer within budget_s."""
    reserve = max(0.1, budget_s * MERGE_RESERVE)
    token = _DEADLINE.set(time.monotonic() + max(0.0, budget_s - reserve))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _time_left() -> float | None:
    deadline = _DEADLINE.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class InjectedFault(RuntimeError):
    """Raised by fault injection to simulate a failing path."""


@dataclass
class PathOutcome(Generic[S]):
    name: PathName
    value: S | None = None
    error: str | None = None
    elapsed_ms: float | None = None
    attempted: bool = True

    @property
    def ok(self) -> bool:
        return self.attempted and self.error is None and self.value is not None


@dataclass
class DualResult(Generic[S, V]):
    sql: PathOutcome[S]
    vector: PathOutcome[V]
    total_ms: float

    @property
    def provenance(self) -> list[PathName]:
        return [p.name for p in (self.sql, self.vector) if p.ok]

    @property
    def errors(self) -> dict[str, str]:
        return {p.name: p.error for p in (self.sql, self.vector) if p.error}

    def timings(self) -> dict[str, float | None]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 2)

        return {
            "sql": r(self.sql.elapsed_ms),
            "vector": r(self.vector.elapsed_ms),
            "total": r(self.total_ms),
        }


async def run_blocking(fn: Callable[[], Any]) -> Any:
    """Run a blocking call in the retrieval pool, in a copy of the caller's context (so the
    deadline and the call's stage timer reach the thread)."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_POOL, context.run, fn)


def _with_extra_cpu(fn: Callable[[], Any], share: float) -> Callable[[], Any]:
    """Seeded defect (`OCM_FAULT_CPU_EXTRA`): after the path's work, busy-loop in the same
    thread (holding the GIL, as Python work does) for `share` x the CPU time that work took."""

    def run() -> Any:
        start = time.thread_time()
        value = fn()
        until = time.thread_time() + (time.thread_time() - start) * share
        while time.thread_time() < until:
            pass
        return value

    return run


async def _one_path(
    name: PathName, fn: Callable[[], Any] | None, settings: Settings
) -> PathOutcome[Any]:
    if fn is None:
        return PathOutcome(name, attempted=False)
    if settings.faults.cpu_extra:
        fn = _with_extra_cpu(fn, settings.faults.cpu_extra)
    timeout_s = (settings.sql_timeout_ms if name == "sql" else settings.vector_timeout_ms) / 1000
    delay_ms = settings.faults.sql_delay_ms if name == "sql" else settings.faults.vector_delay_ms
    fail = settings.faults.sql_fail if name == "sql" else settings.faults.vector_fail

    async def attempt() -> Any:
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        if fail:
            raise InjectedFault(f"{name} path failure injected by configuration")
        return await run_blocking(fn)

    left = _time_left()
    cut_by_deadline = left is not None and left < timeout_s
    if left is not None:
        timeout_s = min(timeout_s, left)
    start = time.perf_counter()
    try:
        value = await asyncio.wait_for(attempt(), timeout=timeout_s)
        return PathOutcome(name, value=value, elapsed_ms=(time.perf_counter() - start) * 1000)
    except TimeoutError:
        reason = " (whole-tool deadline)" if cut_by_deadline else ""
        log.warning("%s path timed out after %.0f ms%s", name, timeout_s * 1000, reason)
        return PathOutcome(
            name,
            error=f"timeout after {timeout_s * 1000:.0f} ms{reason}",
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )
    except (InjectedFault, ClientFacingError) as exc:  # written to be read: an index missing
        log.warning("%s path failed: %s", name, exc)
        return PathOutcome(name, error=str(exc), elapsed_ms=(time.perf_counter() - start) * 1000)
    except Exception as exc:  # a failed path degrades the answer; it never fails the tool
        # `_meta.path_errors` reaches the client: the exception itself goes to the log only.
        return PathOutcome(
            name,
            error=masked(f"the {name} path", exc),
            elapsed_ms=(time.perf_counter() - start) * 1000,
        )


async def run_dual(
    settings: Settings,
    sql: Callable[[], S] | None,
    vector: Callable[[], V] | None,
) -> DualResult[S, V]:
    """Run both paths concurrently; `settings.mode` may switch one off (keyword/vector ablation)."""
    if settings.mode == "keyword":
        vector = None
    elif settings.mode == "vector":
        sql = None
    start = time.perf_counter()
    if settings.faults.serial_paths:  # seeded defect (`OCM_FAULT_SERIAL_PATHS`): SQL, then vector
        sql_out = await _one_path("sql", sql, settings)
        vec_out = await _one_path("vector", vector, settings)
    else:
        sql_out, vec_out = await asyncio.gather(
            _one_path("sql", sql, settings), _one_path("vector", vector, settings)
        )
    return DualResult(sql_out, vec_out, (time.perf_counter() - start) * 1000)
