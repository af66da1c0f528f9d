"""Wall-clock time per stage of one tool call, reported in `_meta.timings_ms.stages`.

A call opens an accumulator (`collecting`); code marks its stages with `stage(name)`. Each
stage's time is exclusive: a stage opened inside another in the same thread is not counted in
its parent. Nesting is tracked per thread, because the SQL and vector paths run at the same time
in two pool threads (the pool copies the caller's context, so both reach the call's accumulator):
a stage in one thread never subtracts from a stage open in another. Outside a call (an index
build, a test calling a step directly) a stage costs one context-variable read.

Only `time.perf_counter` is read, twice per stage: cheap enough to stay on in production.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

# Stage names, as they appear in `_meta.timings_ms.stages`.
VALIDATION = "validation"
PARSE = "parse"
SQL = "sql"
VECTOR = "vector"
EMBED = "embed"  # the query embedding model ran (for at least one text)
EMBED_STORED = "embed_stored"  # no model run; a vector the index stored answered (no free text)
EMBED_CACHED = "embed_cached"  # every text came from the query-vector cache
MERGE = "merge"
SCORE = "score"
RESPOND = "respond"
SERIALISE = "serialise"
SUB_CALLS = "sub_calls"  # a composed tool waiting on its concurrent sub-tools


@dataclass
class OpenStage:
    """One stage running in one thread: what nested stages in that thread took. The block may
    `rename` it when what it did decides the name (a query vector's source, say)."""

    name: str
    thread: int
    nested: float = 0.0

    def rename(self, name: str) -> None:
        self.name = name


@dataclass
class StageTimes:
    """One call's exclusive seconds per stage; shared by every thread working for the call."""

    clock: Callable[[], float] = time.perf_counter
    seconds: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, spent: float) -> None:
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + spent

    def as_ms(self) -> dict[str, float]:
        """Milliseconds, 2 decimals, in the order the stages first finished."""
        with self._lock:
            return {name: round(s * 1000, 2) for name, s in self.seconds.items()}


_TIMES: ContextVar[StageTimes | None] = ContextVar("stage_times", default=None)
_OPEN: ContextVar[OpenStage | None] = ContextVar("open_stage", default=None)


@contextmanager
def collecting(times: StageTimes | None = None) -> Iterator[StageTimes]:
    """Stages marked inside (in this context and contexts copied from it) go into one fresh
    accumulator, with no stage open: a sub-call gets its own, apart from its caller's."""
    times = times if times is not None else StageTimes()
    token, open_token = _TIMES.set(times), _OPEN.set(None)
    try:
        yield times
    finally:
        _OPEN.reset(open_token)
        _TIMES.reset(token)


@contextmanager
def stage(name: str) -> Iterator[OpenStage]:
    """Time the block as `name` (or the name it renames itself to), less the stages nested in it
    in the same thread."""
    times = _TIMES.get()
    if times is None:
        yield OpenStage(name, threading.get_ident())
        return
    thread = threading.get_ident()
    parent = _OPEN.get()
    if parent is not None and parent.thread != thread:
        parent = None  # opened in another thread: that thread's time is its own
    me = OpenStage(name, thread)
    token = _OPEN.set(me)
    started = times.clock()
    try:
        yield me
    finally:
        spent = times.clock() - started
        _OPEN.reset(token)
        times.add(me.name, spent - me.nested)
        if parent is not None:
            parent.nested += spent


T = TypeVar("T")


def timed(name: str, fn: Callable[[], T]) -> T:
    """`fn()`, timed as the stage `name` (for a step handed on as a callable)."""
    with stage(name):
        return fn()
