"""The one pipeline every tool runs: parse -> SQL path | vector path -> merge -> score -> respond.

A tool is a subclass that supplies typed steps and nothing else:

    parse(rt, request)          -> Q   what the request asks, read once (names, codes, filters)
    sql(rt, q)                  -> S   the SQL path's typed rows        (blocking; in the pool)
    vector(rt, q)               -> V   the vector path's typed hits     (blocking; in the pool)
    merge(rt, q, found)         -> M   both paths' rows into the tool's answer rows
    score(q, merged, found)     -> Score   citations, conflicts, and the evidence counts
    respond(q, merged, judged)  -> Response

The base owns what must be the same for all twelve: both paths run concurrently, each under
its own timeout and the whole-tool deadline (`run_dual`); a failed or cut path leaves the other's
answer (partial: provenance names only the paths that answered); confidence is the specs'
formula (`calculate_confidence`) from the counts `score` gives, never computed by a tool;
`_meta` timings and path errors; the typed response. Input errors and unknown ids are raised as
`ToolInputError` / `NotFoundError` by the steps; the whole-tool timeout and masking of anything
else happen once, in `base.McpTool`.

A tool composed of other tools (coverage.answer) has no paths of its own: `ComposedTool` runs
its sub-tools (typed responses, each under its share of the budget, a failure kept as a value)
and hands them to `synthesize`, which decides from their fields.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from reference_server.errors import ClientFacingError, masked
from reference_server.retrieval.dual_path import DualResult, PathName, run_dual
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import Counts, confidence_from
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.base import ToolOutput, ToolSpec

Req = TypeVar("Req", bound=BaseModel)
Q = TypeVar("Q")
S = TypeVar("S")
V = TypeVar("V")
M = TypeVar("M")
Resp = TypeVar("Resp", bound=BaseModel)
C = TypeVar("C")  # a citation type (most tools: scoring.citations.Citation)


@dataclass(frozen=True)
class Score(Generic[C]):
    """A tool's scoring step: what it cites, where the sources disagree, and the evidence counts
    (None: the tool publishes no confidence, e.g. reading one record by id)."""

    citations: Sequence[C] = ()
    conflicts: Sequence[Conflict] = ()
    counts: Counts | None = None


@dataclass(frozen=True)
class Judged(Generic[C]):
    """What the base adds to a tool's score before `respond`: the paths that answered and the
    confidence the formula gives."""

    provenance: list[PathName]
    confidence: float
    citations: list[C]
    conflicts: list[Conflict]


def judge(score: Score[C], found: DualResult[Any, Any]) -> Judged[C]:
    return Judged(
        provenance=found.provenance,
        confidence=confidence_from(score.counts, len(score.conflicts)),
        citations=list(score.citations),
        conflicts=list(score.conflicts),
    )


class InjectedStepError(RuntimeError):
    """The unexpected exception `OCM_FAULT_RAISE_STEP` raises: its text looks like what must
    never reach a client (an exception class, SQL, a source path), so a leak is easy to see."""


T = TypeVar("T")


@dataclass(frozen=True)
class StepFaults:
    """Runs a tool's steps with the configured faults: `InjectedStepError` in the step named,
    and in the paths (which run in the retrieval pool) blocking work, so a path that blocked the
    event loop would hold every other call on it."""

    rt: Runtime
    tool: str

    def __call__(self, name: str, fn: Callable[[], T] | None = None) -> T:
        faults = self.rt.settings.faults
        if name in ("sql", "vector") and faults.path_work_ms:
            time.sleep(faults.path_work_s(self.tool))
        if faults.raises_in(self.tool, name):
            raise InjectedStepError(
                f'{self.tool} {name}: near "SELECT * FROM opa_sections WHERE rowid = ?" '
                f"in {__file__}"
            )
        return fn() if fn is not None else None  # type: ignore[return-value]


class Tool(ABC, Generic[Req, Resp]):
    """What every tool publishes: its name, description, request and response models, and one
    ordinary request run at start-up (so what it builds once exists before a client calls)."""

    name: ClassVar[str]
    description: ClassVar[str]
    request: type[Req]
    response: type[Resp]

    @abstractmethod
    def warm_up(self) -> Req: ...

    @abstractmethod
    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        """The typed response with its timings and meta."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            request=self.request,
            response=self.response,
            run=self.run,
            warm_up=self.warm_up().model_dump(mode="json", exclude_unset=True),
        )


class DualPathTool(Tool[Req, Resp], Generic[Req, Q, S, V, M, Resp]):
    """A tool answered from the SQL and vector paths (see the module docstring)."""

    @abstractmethod
    def parse(self, rt: Runtime, req: Req) -> Q: ...

    def paths(self, q: Q) -> tuple[bool, bool]:
        """Which paths this request uses (SQL, vector); a search mode may switch one off."""
        return True, True

    @abstractmethod
    def sql(self, rt: Runtime, q: Q) -> S: ...

    @abstractmethod
    def vector(self, rt: Runtime, q: Q) -> V: ...

    @abstractmethod
    async def merge(self, rt: Runtime, q: Q, found: DualResult[S, V]) -> M: ...

    @abstractmethod
    def score(self, q: Q, merged: M, found: DualResult[S, V]) -> Score[Any]: ...

    @abstractmethod
    def respond(self, q: Q, merged: M, judged: Judged[Any]) -> Resp: ...

    def meta(self, merged: M) -> dict[str, Any]:
        """Anything the merge measured that belongs in `_meta` (e.g. a reranker's outcome)."""
        return {}

    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        step = StepFaults(rt, self.name)
        q = step("parse", lambda: self.parse(rt, req))
        use_sql, use_vector = self.paths(q)
        sql: Callable[[], S] | None = (
            (lambda: step("sql", lambda: self.sql(rt, q))) if use_sql else None
        )
        vector: Callable[[], V] | None = (
            (lambda: step("vector", lambda: self.vector(rt, q))) if use_vector else None
        )
        found = await run_dual(rt.settings, sql=sql, vector=vector)
        step("merge")
        merged = await self.merge(rt, q, found)
        judged = judge(step("score", lambda: self.score(q, merged, found)), found)
        return ToolOutput(
            step("respond", lambda: self.respond(q, merged, judged)), found, self.meta(merged)
        )


# ----------------------------------------------------------------------------- composed tools

SubResp = TypeVar("SubResp", bound=BaseModel)


@dataclass
class SubCall(Generic[SubResp]):
    """One call of another tool inside a composed answer: its typed response, or why not."""

    spec: ToolSpec
    answers: type[SubResp]  # the sub-tool's response model: the response is checked against it
    args: dict[str, Any]
    response: SubResp | None = None
    error: str | None = None
    started_ms: float = 0.0
    duration_ms: float = 0.0

    @property
    def name(self) -> str:
        return self.spec.name


async def call_tool(rt: Runtime, call: SubCall[Any], t0: float, budget_share: float) -> None:
    """Run one sub-tool in-process under its share of the whole-tool budget (less what ran
    before it); its failure is recorded on the call, never raised."""
    call.started_ms = (time.perf_counter() - t0) * 1000
    budget_s = max(0.05, (rt.settings.tool_timeout_ms * budget_share - call.started_ms) / 1000)
    try:
        request = call.spec.request.model_validate(call.args)
        output = await asyncio.wait_for(call.spec.run(rt, request), timeout=budget_s)
        if not isinstance(output.response, call.answers):
            raise TypeError(f"{call.name} answered {type(output.response).__name__}")
        call.response = output.response
    except TimeoutError:
        call.error = f"timed out after {budget_s * 1000:.0f} ms"
    except ValidationError as exc:
        call.error = f"invalid arguments: {exc.errors()[0]['msg']}"
    except ClientFacingError as exc:  # written for clients: an input problem, an unknown id
        call.error = str(exc)[:300]
    except Exception as exc:  # a failing sub-tool degrades the answer, it never fails it
        call.error = masked(call.name, exc)
    call.duration_ms = (time.perf_counter() - t0) * 1000 - call.started_ms


class ComposedTool(Tool[Req, Resp], Generic[Req, Q, Resp]):
    """A tool that answers by calling other tools concurrently: parse -> plan -> sub-tools ->
    synthesize."""

    budget_share: ClassVar[float] = 0.85  # of the whole-tool timeout, for the sub-tools

    @abstractmethod
    async def parse(self, rt: Runtime, req: Req) -> Q: ...

    @abstractmethod
    def plan(self, q: Q) -> list[SubCall[Any]]: ...

    @abstractmethod
    def synthesize(self, q: Q, calls: list[SubCall[Any]]) -> Resp: ...

    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        t0 = time.perf_counter()
        step = StepFaults(rt, self.name)
        step("parse")
        q = await self.parse(rt, req)
        calls = step("merge", lambda: self.plan(q))
        await asyncio.gather(*(call_tool(rt, c, t0, self.budget_share) for c in calls))
        step("score")
        return ToolOutput(step("respond", lambda: self.synthesize(q, calls)))
