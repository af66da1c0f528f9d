"""The one pipeline every tool runs: parse -> SQL path | vector path -> merge -> score -> respond.

A tool is a subclass that supplies typed steps and nothing else:

    parse(rt, request)          -> Q   what the request asks, read once (names, codes, filters)
    sql(rt, q)                  -> S   the SQL path's typed rows        (blocking; in the pool)
    vector(rt, q)               -> V   the vector path's typed hits     (blocking; in the pool)
    check(q, found)                    unknown ids refused (optional)
    merge(rt, q, found)         -> M   both paths' rows into the tool's answer rows
    beyond_index(rt, q, merged) -> M   a look past the index, e.g. a web page (optional)
    score(q, merged, found)     -> Score   citations, conflicts, and the evidence counts
    respond(q, merged, evidence) -> Resp   the typed response: its own fields, and `evidence`
                                           (the evidence fields the base filled) as given

The base owns what must be the same for all twelve: both paths run concurrently, each under
its own timeout and the whole-tool deadline (`run_dual`); a failed or cut path leaves the other's
answer (partial: provenance names only the paths that answered); confidence, never computed by a
tool: the specs' evidence score (`calculate_confidence`) from the counts `score` gives, the
features a calibrated model reads (`scoring/features.py`: the tool's `Signals`, the paths that
answered, conflicts, that score) and the tool family's fitted probability of being right
(`scoring/calibrated.py`); `Settings.confidence_model` says which of the two is `confidence`,
and `confidence_basis` carries both with their inputs; the evidence fields (provenance,
confidence, citations, conflicts, confidence_basis) of the typed response, filled for whichever
of them the response declares; `_meta` timings and path errors. Input errors and unknown ids are raised as
`ToolInputError` / `NotFoundError` by the steps; the whole-tool timeout and masking of anything
else happen once, in `base.McpTool`.

A tool composed of other tools (coverage.answer) has no paths of its own: `ComposedTool` runs
its sub-tools (typed requests checked as strictly as a client's, typed responses, each under
its share of the budget, a failure kept as a value) and hands them to `synthesize`, which
decides from their published fields.
"""

from __future__ import annotations

import asyncio
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ocm_common.json_types import Arguments
from reference_server.errors import ClientFacingError, masked
from reference_server.retrieval.dual_path import DualResult, run_dual
from reference_server.runtime import Runtime
from reference_server.stage_timer import (
    MERGE,
    PARSE,
    RESPOND,
    SCORE,
    SQL,
    SUB_CALLS,
    VALIDATION,
    VECTOR,
    StageTimes,
    collecting,
    stage,
    timed,
)
from reference_server.tools.base import ExtraMeta, Req, Resp, SubCallTiming, Tool, ToolOutput
from reference_server.tools.score_step import EvidenceFields, Score, evidence_for, judge

Q = TypeVar("Q")
S = TypeVar("S")
V = TypeVar("V")
M = TypeVar("M")


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


class DualPathTool(Tool[Req, Resp], Generic[Req, Q, S, V, M, Resp]):
    """A tool answered from the SQL and vector paths (see the module docstring)."""

    steps = ("parse", "sql", "vector", "merge", "score", "respond")
    # The calibration family whose fitted model gives this tool's confidence
    # (scoring/calibration.yaml); None: the spec's score.
    confidence_family: ClassVar[str | None] = None

    @abstractmethod
    def parse(self, rt: Runtime, req: Req) -> Q: ...

    def paths(self, q: Q) -> tuple[bool, bool]:
        """Which paths this request uses (SQL, vector); a search mode may switch one off."""
        return True, True

    @abstractmethod
    def sql(self, rt: Runtime, q: Q) -> S: ...

    @abstractmethod
    def vector(self, rt: Runtime, q: Q) -> V: ...

    def check(self, q: Q, found: DualResult[S, V]) -> None:
        """Refuse the request from what the paths found, before anything is merged: an id
        neither path knows raises `NotFoundError`."""

    @abstractmethod
    async def merge(self, rt: Runtime, q: Q, found: DualResult[S, V]) -> M: ...

    async def beyond_index(self, rt: Runtime, q: Q, merged: M) -> M:
        """Work past the read-only index on the merged rows (an open-world tool's look at a
        publisher's page); nothing for the others."""
        return merged

    @abstractmethod
    def score(self, q: Q, merged: M, found: DualResult[S, V]) -> Score[Any]: ...

    @abstractmethod
    def respond(self, q: Q, merged: M, evidence: EvidenceFields[Any]) -> Resp:
        """The typed response: its own fields, and `evidence` (the evidence fields it declares,
        filled by the base) as given."""

    def meta(self, merged: M) -> ExtraMeta:
        """Anything the merge measured that belongs in `_meta` (e.g. a reranker's outcome)."""
        return {}

    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        step = StepFaults(rt, self.name)
        with stage(PARSE):
            q = step("parse", lambda: self.parse(rt, req))
        use_sql, use_vector = self.paths(q)
        sql: Callable[[], S] | None = (
            (lambda: step("sql", lambda: timed(SQL, lambda: self.sql(rt, q)))) if use_sql else None
        )
        vector: Callable[[], V] | None = (
            (lambda: step("vector", lambda: timed(VECTOR, lambda: self.vector(rt, q))))
            if use_vector
            else None
        )
        found = await run_dual(rt.settings, sql=sql, vector=vector)
        with stage(MERGE):
            step("merge")
            self.check(q, found)
            merged = await self.beyond_index(rt, q, await self.merge(rt, q, found))
        with stage(SCORE):
            judged = judge(
                step("score", lambda: self.score(q, merged, found)),
                found,
                family=self.confidence_family,
                calibration=rt.calibration,
                use=rt.settings.confidence_model,
            )
        with stage(RESPOND):
            evidence = evidence_for(self.response, judged)
            response = step("respond", lambda: self.respond(q, merged, evidence))
        return ToolOutput(response, found, self.meta(merged))


# ----------------------------------------------------------------------------- composed tools

SubReq = TypeVar("SubReq", bound=BaseModel)
SubResp = TypeVar("SubResp", bound=BaseModel)


@dataclass
class SubCall(Generic[SubReq, SubResp]):
    """One call of another tool inside a composed answer: the sub-tool's typed request (or why
    none could be built), then its typed response, or why not."""

    tool: Tool[SubReq, SubResp]
    request: SubReq | None
    response: SubResp | None = None
    error: str | None = None
    started_ms: float = 0.0
    duration_ms: float = 0.0
    stages: StageTimes = field(default_factory=StageTimes)  # the sub-tool's own stages

    @classmethod
    def planned(
        cls, tool: Tool[SubReq, SubResp], build: Callable[[], SubReq]
    ) -> SubCall[SubReq, SubResp]:
        """A call of `tool` with the request `build` makes; a request its model refuses is
        the call's error (the composed answer goes on without it)."""
        try:
            return cls(tool, build())
        except ValidationError as exc:
            return cls(tool, None, error=f"invalid arguments: {exc.errors()[0]['msg']}")

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def arguments(self) -> Arguments:
        """The request as a client would have sent it (the trace shows it)."""
        if self.request is None:
            return {}
        return self.request.model_dump(mode="json", exclude_unset=True, exclude_none=True)


async def call_tool(rt: Runtime, call: SubCall[Any, Any], t0: float, budget_ms: float) -> None:
    """Run one sub-tool in-process under its share of the whole-tool budget (less what ran
    before it), its request checked as strictly as a client's; its failure is recorded on the
    call, never raised."""
    call.started_ms = (time.perf_counter() - t0) * 1000
    if call.request is None:
        return
    budget_s = max(0.05, (budget_ms - call.started_ms) / 1000)
    try:
        with collecting(call.stages):
            with stage(VALIDATION):
                request = call.tool.validate(call.request)
            output = await asyncio.wait_for(call.tool.run(rt, request), timeout=budget_s)
        if not isinstance(output.response, call.tool.response):
            raise TypeError(f"{call.name} answered {type(output.response).__name__}")
        call.response = output.response
    except TimeoutError:
        call.error = f"timed out after {budget_s * 1000:.0f} ms"
    except ClientFacingError as exc:  # written for clients: an input problem, an unknown id
        call.error = str(exc)[:300]
    except Exception as exc:  # a failing sub-tool degrades the answer, it never fails it
        call.error = masked(call.name, exc)
    call.duration_ms = (time.perf_counter() - t0) * 1000 - call.started_ms


def sub_call_timings(calls: Sequence[SubCall[Any, Any]]) -> list[SubCallTiming]:
    """Each sub-call's wall time and its own stages (ms), for `_meta.sub_call_timings_ms`: the
    composed tool's `sub_calls` stage is the wait for all of them, which ran concurrently."""
    return [
        {"tool": c.name, "total": round(c.duration_ms, 2), "stages": c.stages.as_ms()}
        for c in calls
    ]


class ComposedTool(Tool[Req, Resp], Generic[Req, Q, Resp]):
    """A tool that answers by calling other tools concurrently: parse -> plan -> sub-tools ->
    synthesize."""

    steps = ("parse", "merge", "score", "respond")  # plan runs as `merge`, synthesis as `respond`
    budget_share: ClassVar[float] = 0.85  # of the whole-tool timeout, for the sub-tools

    @abstractmethod
    async def parse(self, rt: Runtime, req: Req) -> Q: ...

    @abstractmethod
    def plan(self, q: Q) -> list[SubCall[Any, Any]]: ...

    @abstractmethod
    def synthesize(self, q: Q, calls: list[SubCall[Any, Any]]) -> Resp: ...

    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        t0 = time.perf_counter()
        step = StepFaults(rt, self.name)
        with stage(PARSE):
            step("parse")
            q = await self.parse(rt, req)
        with stage(MERGE):
            calls = step("merge", lambda: self.plan(q))
        budget_ms = self.budget_ms(rt) * self.budget_share
        with stage(SUB_CALLS):
            await asyncio.gather(*(call_tool(rt, c, t0, budget_ms) for c in calls))
        step("score")
        with stage(RESPOND):
            response = step("respond", lambda: self.synthesize(q, calls))
        return ToolOutput(response, extra_meta={"sub_call_timings_ms": sub_call_timings(calls)})
