"""CPU time per stage of an in-process tool call, measured from outside the tools.

Every stage is timed exclusively (a stage's time excludes the stages it calls) with the
process CPU clock, so the stages of one call add up to its CPU time. Coroutines are timed
per resume, never while suspended, so concurrent sub-tools (coverage.answer) are counted
each where it runs. For the split to be exact the blocking path work runs in the calling
thread while instrumented (`instrument`): the retrieval pool and the vector fan-out are
replaced by inline calls. The CPU a call spends is the same; its wall time is not (the two
paths no longer overlap), so this is for CPU accounting only, never for latency.

Stages (the issue's split, with the pipeline's own share named apart):

- `query embedding`   the embedder (cache look-up and the model)
- `SQL`               the SQL path step and every SqlClient read, wherever it is made
- `vector search`     the vector path step (its query embedding excluded)
- `parse`             the tool's parse step
- `merge/score/respond`  merge, score and respond (coverage.answer: plan and synthesis)
- `pipeline`          the dual-path runner, the composed tool's sub-calls, judging
- `validation`        the request checked against its model (McpTool.parse)
- `response dump + JSON`  the typed response to JSON (McpTool._answer's own work)
- `MCP layer`         the rest: FastMCP's dispatch and the in-memory client
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

STAGES = (
    "query embedding",
    "SQL",
    "vector search",
    "parse",
    "merge/score/respond",
    "pipeline",
    "validation",
    "response dump + JSON",
    "MCP layer",
)
STEP_STAGES = {
    "parse": "parse",
    "sql": "SQL",
    "vector": "vector search",
    "merge": "merge/score/respond",
    "score": "merge/score/respond",
    "respond": "merge/score/respond",
}


class StageClock:
    """A stack of running stages; each one's exclusive CPU seconds summed by name."""

    def __init__(self, now: Callable[[], float] = time.process_time) -> None:
        self.now = now
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []  # [stage, started, time in nested stages]
        self.model_texts = 0  # texts the embedding model embedded (cache misses)
        self.looked_up = 0  # texts asked of the query embedder (cache hits + misses)

    def reset(self) -> None:
        self.seconds.clear()
        self.model_texts = 0
        self.looked_up = 0

    def enter(self, stage: str) -> None:
        self._stack.append([stage, self.now(), 0.0])

    def leave(self) -> None:
        stage, started, nested = self._stack.pop()
        spent = self.now() - started
        self.seconds[stage] += spent - nested
        if self._stack:
            self._stack[-1][2] += spent

    def sync(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter(stage)
            try:
                return fn(*args, **kwargs)
            finally:
                self.leave()

        return timed

    def coroutine(self, stage: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        clock = self

        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            return await _Resumes(clock, stage, fn(*args, **kwargs))

        return timed


class _Resumes:
    """Awaits a coroutine, timing each of its resumes as `stage` (suspensions excluded)."""

    def __init__(self, clock: StageClock, stage: str, coro: Any):
        self.clock, self.stage, self.coro = clock, stage, coro

    def __await__(self) -> Generator[Any, Any, Any]:
        value: Any = None
        error: BaseException | None = None
        while True:
            self.clock.enter(self.stage)
            try:
                yielded = self.coro.throw(error) if error else self.coro.send(value)
            except StopIteration as done:
                return done.value
            finally:
                self.clock.leave()
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # cancellation and the like go into the coroutine
                value, error = None, exc


class _Inline:
    """An executor stand-in that runs `map` in the calling thread."""

    def map(self, fn: Callable[..., Any], *iterables: Any) -> Iterator[Any]:
        return iter([fn(*args) for args in zip(*iterables, strict=False)])


def _tool_modules() -> list[Any]:
    import reference_server.tools as tools

    return [
        importlib.import_module(m.name)
        for m in pkgutil.walk_packages(tools.__path__, "reference_server.tools.")
    ]


@contextmanager
def instrument(clock: StageClock) -> Iterator[None]:
    """Time every stage of the reference tools in `clock` while inside (before any server is
    built inside it: the tools' classes are patched in place); undone on exit."""
    from reference_server.retrieval import dual_path, vector
    from reference_server.retrieval.sql import SqlClient
    from reference_server.tools import base, pipeline
    from reference_server.tools.coverage import routing as coverage_routing

    undo: list[Callable[[], None]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        old = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        if isinstance(owner, type) or not hasattr(owner, "__dataclass_fields__"):
            setattr(owner, name, value)
            undo.append(lambda: setattr(owner, name, old))
        else:  # a frozen dataclass
            object.__setattr__(owner, name, value)
            undo.append(lambda: object.__setattr__(owner, name, old))

    async def inline(fn: Callable[[], Any]) -> Any:
        return fn()

    patch(dual_path, "run_blocking", inline)
    patch(coverage_routing, "run_blocking", inline)
    patch(vector, "_FANOUT", _Inline())
    for method in ("query", "one"):
        patch(SqlClient, method, clock.sync("SQL", SqlClient.__dict__[method]))
    step_call = pipeline.StepFaults.__call__

    def step(self: Any, name: str, fn: Callable[[], Any] | None = None) -> Any:
        if fn is None:
            return step_call(self, name)
        return clock.sync(STEP_STAGES.get(name, "merge/score/respond"), step_call)(self, name, fn)

    patch(pipeline.StepFaults, "__call__", step)
    patch(pipeline, "call_tool", clock.coroutine("pipeline", pipeline.call_tool))
    patch(base.Tool, "validate", clock.sync("validation", base.Tool.validate))
    answer = base.McpTool.__dict__["_answer"]
    patch(base.McpTool, "_answer", clock.coroutine("response dump + JSON", answer))
    for module in _tool_modules():
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == module.__name__:
                if "merge" in value.__dict__ and issubclass(value, pipeline.DualPathTool):
                    patch(value, "merge", clock.coroutine("merge/score/respond", value.merge))
                if "parse" in value.__dict__ and issubclass(value, pipeline.ComposedTool):
                    patch(value, "parse", clock.coroutine("parse", value.parse))
                if "run" in value.__dict__ and issubclass(value, base.Tool):
                    patch(value, "run", clock.coroutine("pipeline", value.run))
    for shared in (pipeline.DualPathTool, pipeline.ComposedTool):
        patch(shared, "run", clock.coroutine("pipeline", shared.run))
    try:
        yield
    finally:
        for fn in reversed(undo):
            fn()


def instrument_embedder(clock: StageClock, runtime: Any) -> None:
    """Time the runtime's query embedders (each family's model, made now), and count the texts
    their models embed."""
    embedders = runtime.embedder
    for_collection = getattr(embedders, "for_collection", None)
    if for_collection is None:
        _instrument(clock, embedders)
        return
    from reference_server.catalog import ALL_COLLECTIONS

    seen: set[int] = set()
    for name in ALL_COLLECTIONS:
        embedder = for_collection(name)
        if id(embedder) not in seen:
            seen.add(id(embedder))
            _instrument(clock, embedder)


def _instrument(clock: StageClock, embedder: Any) -> None:
    timed = clock.sync("query embedding", embedder.embed)

    def looked_up(texts: list[str]) -> Any:
        clock.looked_up += len(texts)
        return timed(texts)

    embedder.embed = looked_up
    inner = getattr(embedder, "inner", None)
    if inner is not None:
        model_embed = inner.embed

        def counted(texts: list[str]) -> Any:
            clock.model_texts += len(texts)
            return model_embed(texts)

        inner.embed = counted
