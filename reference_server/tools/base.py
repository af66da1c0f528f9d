"""What every tool is, and how it becomes an MCP tool.

A tool is one `Tool` subclass: its name, title, description, annotations, timeout, steps,
pydantic `Request` and `Response` (field by field from the spec) and an async
`run(rt, request) -> ToolOutput`, all declared on the class. `McpTool.register` serves it
through FastMCP as declared: it publishes `inputSchema`/`outputSchema`
(the input schema states every constraint the request model enforces, so a schema-valid call
is never refused), validates arguments as JSON types into one error listing every problem
(field + allowed values), passes the whole-tool timeout down to retrieval as a deadline, and
returns `structuredContent` plus `_meta.timings_ms` (per path, the whole call, and the
exclusive time of each stage: `stage_timer`). What request models share is `request_model`;
the published input schema and the input errors are `input_schema`'s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Generic, NotRequired, TypedDict, TypeVar

import pydantic_core
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool as FastMcpTool
from fastmcp.tools.base import ToolResult
from mcp.types import TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from ocm_common.json_types import Arguments, JsonObject
from reference_server.errors import InternalError
from reference_server.retrieval.dual_path import DualResult, PathName, tool_deadline
from reference_server.retrieval.rerank import RerankMeta
from reference_server.runtime import Runtime
from reference_server.stage_timer import SERIALISE, VALIDATION, StageTimes, collecting, stage
from reference_server.tools.input_schema import input_error, published_input_schema

log = logging.getLogger(__name__)


R = TypeVar("R", bound=BaseModel)


class SubCallTiming(TypedDict):
    """One sub-call of a composed tool: its wall time and its own stages (ms)."""

    tool: str
    total: float
    stages: dict[str, float]


class ExtraMeta(TypedDict, total=False):
    """What a tool adds to its answer's `_meta`, besides the timings every tool reports."""

    rerank: RerankMeta  # what the optional reranker did (section-level tools)
    sub_call_timings_ms: list[SubCallTiming]  # a composed tool's sub-calls
    provenance: list[PathName]  # a tool publishing no evidence fields: the paths that answered
    conflicts: list[JsonObject]  # ... and the conflicts it found, as JSON


class Timings(TypedDict):
    """`_meta.timings_ms`: each path's time (None: not run), the tool's run, the whole
    handler (validation to serialised answer) and the exclusive time of each stage."""

    sql: float | None
    vector: float | None
    total: float
    handler: float
    stages: dict[str, float]


class ToolMeta(ExtraMeta):
    """An answer's `_meta`."""

    timings_ms: Timings
    cache: dict[str, int | str]
    path_errors: NotRequired[dict[str, str]]


@dataclass
class ToolOutput(Generic[R]):
    response: R
    dual: DualResult[Any, Any] | None = None
    extra_meta: ExtraMeta = field(default_factory=lambda: ExtraMeta())


Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)


class Tool(ABC, Generic[Req, Resp]):
    """One tool, declared once: what a host shows and may rely on (name, title, description,
    annotations, timeout), the request and response models, the steps it runs, and one
    ordinary request run at start-up (so what it builds once exists before a client calls).
    `McpTool.register` publishes it as it is; nothing else describes a tool."""

    name: ClassVar[str]
    title: ClassVar[str]  # as a host shows it in its tool picker (the name is for the model)
    description: ClassVar[str]
    request: type[Req]
    response: type[Resp]
    # Whether the tool may reach beyond the local, read-only index (a publisher's web page).
    open_world: ClassVar[bool] = False
    # The whole-tool timeout; None: the configured one (`Settings.tool_timeout_ms`).
    timeout_ms: ClassVar[float | None] = None
    # The steps `OCM_FAULT_RAISE_STEP` can name in this tool, in the order they run.
    steps: ClassVar[tuple[str, ...]]

    @abstractmethod
    def warm_up(self) -> Req: ...

    @abstractmethod
    async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
        """The typed response with its timings and meta."""

    def warm_up_arguments(self) -> Arguments:
        """The warm-up request as a client would send it."""
        return self.warm_up().model_dump(mode="json", exclude_unset=True)

    async def warm_up_call(self, rt: Runtime) -> None:
        await self.run(rt, self.warm_up())

    def budget_ms(self, rt: Runtime) -> float:
        return self.timeout_ms if self.timeout_ms is not None else rt.settings.tool_timeout_ms

    def annotations(self) -> ToolAnnotations:
        """What a host may rely on: every tool only reads, and the same call gives the same
        answer; only an open-world tool reaches past the index."""
        return ToolAnnotations(
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=self.open_world,
        )

    def validate(self, arguments: Mapping[str, Any] | BaseModel) -> Req:
        """Arguments checked as strictly as they are on the wire (JSON types, no coercion:
        "5" is not an integer), so the published schema and the check agree; a typed request
        (another tool composing this one) is re-checked the same way."""
        raw = (
            arguments.model_dump(mode="json", exclude_unset=True)
            if isinstance(arguments, BaseModel)
            else dict(arguments)
        )
        try:
            return self.request.model_validate_json(json.dumps(raw), strict=True)
        except ValidationError as exc:
            raise input_error(
                exc, published_input_schema(self.request), self.request, raw
            ) from None


class McpTool(FastMcpTool):
    """A `Tool` as FastMCP serves it: its declarations published as they are, its run wrapped
    in the whole-tool deadline and the error masking every tool shares."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: Annotated[SkipJsonSchema[Tool[Any, Any]], Field(exclude=True)]
    runtime: Annotated[SkipJsonSchema[Runtime], Field(exclude=True)]

    @classmethod
    def register(cls, tool: Tool[Any, Any], runtime: Runtime) -> McpTool:
        return cls(
            name=tool.name,
            title=tool.title,
            annotations=tool.annotations(),
            description=tool.description,
            parameters=published_input_schema(tool.request),
            output_schema=tool.response.model_json_schema(),
            tool=tool,
            runtime=runtime,
        )

    async def run(self, arguments: Arguments) -> ToolResult:
        """The tool's answer; a client-facing error as it is; anything unexpected masked (a
        generic message and an error id for the client, the detail in the log)."""
        try:
            return await self._answer(arguments)
        except ToolError:
            raise
        except Exception as exc:
            raise InternalError(self.name, exc) from None

    async def _answer(self, arguments: Arguments) -> ToolResult:
        with collecting() as stages:
            result = await self._timed_answer(arguments, stages)
        return result

    async def _timed_answer(self, arguments: Arguments, stages: StageTimes) -> ToolResult:
        tool, rt = self.tool, self.runtime
        received = time.perf_counter()
        with stage(VALIDATION):
            request = tool.validate(arguments or {})
        start = time.perf_counter()
        budget_ms = tool.budget_ms(rt)
        budget_s = budget_ms / 1000
        try:
            # Retrieval paths stop at the deadline (minus a reserve for merging), so a tool whose
            # slow path is cut still answers from the path that finished; the hard limit below
            # only fires when the tool's own work overruns.
            with tool_deadline(budget_s):
                output = await asyncio.wait_for(tool.run(rt, request), timeout=budget_s)
        except TimeoutError:
            raise ToolError(
                f"{tool.name} did not finish within {budget_ms:.0f} ms; try again or narrow the request."
            ) from None
        total_ms = (time.perf_counter() - start) * 1000
        with stage(SERIALISE):
            structured = output.response.model_dump(mode="json")
            # pydantic's own encoder: a third of json.dumps' time on a 100 KB answer
            text = pydantic_core.to_json(structured).decode()
        paths = output.dual.timings() if output.dual else {"sql": None, "vector": None}
        timings: Timings = {
            "sql": paths["sql"],
            "vector": paths["vector"],
            "total": round(total_ms, 2),
            # The whole handler (validation to serialised answer): a client's latency less this
            # is the MCP + HTTP layer.
            "handler": round((time.perf_counter() - received) * 1000, 2),
            "stages": stages.as_ms(),
        }
        meta: ToolMeta = {
            "timings_ms": timings,
            "cache": rt.cache_stats(),
            **output.extra_meta,
        }
        if output.dual and output.dual.errors:
            meta["path_errors"] = output.dual.errors
        return ToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=structured,
            meta=dict(meta),
        )
