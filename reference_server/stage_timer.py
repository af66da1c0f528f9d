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

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

# Stage names, as they appear in `_meta.timings_ms.stages`.
VALIDATION = "validation"
PARSE = "parse"
SQL = "sql"
VECTOR = "vector"
EMBED = "embed"  # the query embedding model ran (at least one text missed the cache)
EMBED_CACHED = "embed_cached"  # every text came from the query-vector cache
MERGE = "merge"
SCORE = "score"
RESPOND = "respond"
SERIALISE = "serialise"
SUB_CALLS = "sub_calls"  # a composed tool waiting on its concurrent sub-tools

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class _Open:
    """One stage running in one thread: what nested stages in that thread took."""

    name: str
    thread: int
    nested: float = 0.0


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
_OPEN: ContextVar[_Open | None] = ContextVar("open_stage", default=None)


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
def stage(name: str) -> Iterator[None]:
    """Time the block as `name`, less the stages nested in it in the same thread."""
    times = _TIMES.get()
    if times is None:
        yield
        return
    thread = threading.get_ident()
    parent = _OPEN.get()
    if parent is not None and parent.thread != thread:
        parent = None  # opened in another thread: that thread's time is its own
    me = _Open(name, thread)
    token = _OPEN.set(me)
    started = times.clock()
    try:
        yield
    finally:
        spent = times.clock() - started
        _OPEN.reset(token)
        times.add(name, spent - me.nested)
        if parent is not None:
            parent.nested += spent


def timed_query_embedding(embed: F) -> F:
    """An embedder's `embed`, timed as `embed`, or `embed_cached` when every text is in its
    `_cache` (read without the lock: only which name the time goes to depends on it)."""

    @functools.wraps(embed)
    def timed(self: Any, texts: list[str]) -> Any:
        if _TIMES.get() is None:
            return embed(self, texts)
        cache = getattr(self, "_cache", None)
        hit = bool(texts) and cache is not None and all(t in cache for t in texts)
        with stage(EMBED_CACHED if hit else EMBED):
            return embed(self, texts)

    return timed  # type: ignore[return-value]


T = TypeVar("T")


def timed(name: str, fn: Callable[[], T]) -> T:
    """`fn()`, timed as the stage `name` (for a step handed on as a callable)."""
    with stage(name):
        return fn()
