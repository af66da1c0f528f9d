"""What every tool is, and how it becomes an MCP tool.

A tool is one `Tool` subclass: its name, title, description, annotations, timeout, steps,
pydantic `Request` and `Response` (field by field from the spec) and an async
`run(rt, request) -> ToolOutput`, all declared on the class. `McpTool.register` serves it
through FastMCP as declared: it publishes `inputSchema`/`outputSchema`
(the input schema states every constraint the request model enforces, so a schema-valid call
is never refused), validates arguments as JSON types into one error listing every problem
(field + allowed values), passes the whole-tool timeout down to retrieval as a deadline, and
returns `structuredContent` plus `_meta.timings_ms` (per path, the whole call, and the
exclusive time of each stage: `stage_timer`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Generic, Self, TypeVar

from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool as FastMcpTool
from fastmcp.tools.base import ToolResult
from fastmcp.utilities.json_schema import dereference_refs
from mcp.types import TextContent, ToolAnnotations
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from reference_server.errors import InternalError, Problem, ToolInputError
from reference_server.retrieval.dual_path import DualResult, tool_deadline
from reference_server.runtime import Runtime
from reference_server.stage_timer import SERIALISE, VALIDATION, StageTimes, collecting, stage

log = logging.getLogger(__name__)


# Free text: at least one visible character and no control characters (tab, newline and carriage
# return are fine). Written without look-arounds so JSON Schema clients, hypothesis and pydantic's
# regex engine read it alike.
_CONTROL = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
NON_BLANK = rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$"
NON_BLANK_PROBLEM = "must contain a visible character and no control characters"


# A free-text list item (topics, risk factors, ids): non-blank, bounded, no control characters.
TextItem = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=NON_BLANK)]


class StrictModel(BaseModel):
    """Request models reject unknown fields, so a typo is an error rather than silently ignored.

    `required_any_of` states a rule between fields (at least one of these sets must be given);
    it is enforced here and published in the schema as `anyOf` of `required` sets, so the
    schema says exactly what the tool accepts.
    """

    model_config = ConfigDict(extra="forbid", regex_engine="python-re")
    required_any_of: ClassVar[tuple[tuple[str, ...], ...]] = ()

    @model_validator(mode="after")
    def _required_any_of(self) -> Self:
        if not type(self).required_any_of:
            return self
        problem = missing_required_set(type(self), self.model_dump(exclude_none=True))
        if problem:
            raise ValueError(problem.problem)
        return self


R = TypeVar("R", bound=BaseModel)


@dataclass
class ToolOutput(Generic[R]):
    response: R
    dual: DualResult[Any, Any] | None = None
    extra_meta: dict[str, Any] = field(default_factory=dict)


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

    def warm_up_arguments(self) -> dict[str, Any]:
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


# ----------------------------------------------------------------------------- published schema


def _drop_null_option(node: Any) -> Any:
    """`anyOf: [X, null]` (an optional parameter) becomes X: clients that fill parameters by
    type (the MCP Inspector CLI parses array/object values only when `type` says so) can then
    send lists and objects. Omitting the parameter is how a client says 'not given'."""
    if isinstance(node, list):
        return [_drop_null_option(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _drop_null_option(v) for k, v in node.items()}
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            outer = {k: v for k, v in node.items() if k != "anyOf"}
            if outer.get("default", 0) is None:
                del outer["default"]
            node = {**rest[0], **outer}
    return node


def published_input_schema(request: type[BaseModel]) -> dict[str, Any]:
    """The `inputSchema` a tool publishes: self-contained (no `$ref`), optional parameters as
    their plain type, and rules between fields as `anyOf` of required sets."""
    raw = request.model_json_schema()
    schema: dict[str, Any] = _drop_null_option(dereference_refs(raw))
    sets = getattr(request, "required_any_of", ())
    if sets:
        schema["anyOf"] = [{"required": list(s)} for s in sets]
    return schema


def missing_required_set(request: type[BaseModel], arguments: dict[str, Any]) -> Problem | None:
    """The cross-field rule's problem when none of the required sets is fully given."""
    sets: tuple[tuple[str, ...], ...] = getattr(request, "required_any_of", ())
    if not sets or any(all(arguments.get(f) is not None for f in s) for s in sets):
        return None
    options = [" + ".join(s) for s in sets]
    return Problem(
        "arguments",
        "give at least one of these (none was given)",
        options,
    )


# ----------------------------------------------------------------------------- input errors


def _schema_at(schema: dict[str, Any], loc: tuple[Any, ...]) -> dict[str, Any] | None:
    """The published (inlined) schema node for an error location."""
    node: Any = schema
    for part in loc:
        if not isinstance(node, dict):
            return None
        node = (
            node.get("items") if isinstance(part, int) else (node.get("properties") or {}).get(part)
        )
    return node if isinstance(node, dict) else None


def _number(x: Any) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def allowed_values(node: dict[str, Any] | None) -> list[Any] | str | None:
    """What a schema node accepts, in words a client can act on."""
    if not node:
        return None
    if "x-allowed" in node:  # a field's own wording for what it accepts (e.g. an alias pattern)
        return str(node["x-allowed"])
    if "enum" in node:
        return list(node["enum"])
    if "const" in node:
        return [node["const"]]
    kind = node.get("type")
    if kind in ("integer", "number"):
        lo, hi = node.get("minimum"), node.get("maximum")
        noun = "an integer" if kind == "integer" else "a number"
        if lo is not None and hi is not None:
            return f"{noun} from {_number(lo)} to {_number(hi)}"
        if lo is not None:
            return f"{noun} >= {_number(lo)}"
        if hi is not None:
            return f"{noun} <= {_number(hi)}"
        return noun
    if kind == "string":
        if node.get("pattern") == NON_BLANK:
            lo, hi = node.get("minLength", 1), node.get("maxLength")
            size = f"{lo} to {hi}" if hi else f"at least {lo}"
            return f"text of {size} characters with a visible character and no control characters"
        if "pattern" in node:
            return f"text matching the pattern {node['pattern']}"
        if "maxLength" in node:
            return f"text of {node.get('minLength', 0)} to {node['maxLength']} characters"
        return "text"
    if kind == "array":
        items = allowed_values(node.get("items"))
        bounds = (
            f"{node.get('minItems', 0)} to {node['maxItems']}"
            if "maxItems" in node
            else "any number of"
        )
        what = f"a list of {bounds} items"
        if isinstance(items, list):
            return f"{what}, each one of {', '.join(repr(i) for i in items)}"
        return f"{what}, each {items}" if items else what
    if kind == "boolean":
        return "true or false"
    if kind == "object":
        names = sorted((node.get("properties") or {}).keys())
        return f"an object with fields {', '.join(names)}" if names else "an object"
    return None


def _field_name(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "arguments"


def _problem(err: dict[str, Any], schema: dict[str, Any]) -> Problem:
    loc = tuple(err.get("loc", ()))
    field_name = _field_name(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        parent = _schema_at(schema, loc[:-1]) or {}
        return Problem(
            field_name, "unknown argument", sorted((parent.get("properties") or {}).keys())
        )
    node = _schema_at(schema, loc)
    if kind == "missing":
        return Problem(field_name, "this argument is required", allowed_values(node))
    if kind == "string_pattern_mismatch" and node:
        problem = (
            NON_BLANK_PROBLEM if node.get("pattern") == NON_BLANK else "not in the accepted form"
        )
        return Problem(field_name, problem, allowed_values(node))
    message = str(err["msg"]).rstrip(".")
    allowed = allowed_values(node)
    if isinstance(allowed, list) and all(repr(a) in message for a in allowed):
        allowed = None  # pydantic's message already lists them
    return Problem(field_name, message, allowed)


def input_error(
    exc: ValidationError,
    schema: dict[str, Any],
    request: type[BaseModel] | None = None,
    arguments: dict[str, Any] | None = None,
) -> ToolInputError:
    """Every validation problem of the call, each naming its field and what is allowed."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for err in exc.errors():
        if err["type"] == "value_error" and not err.get("loc"):
            continue  # the cross-field rule, reported from the arguments below
        problem = _problem(dict(err), schema)
        if problem.field not in seen:
            seen.add(problem.field)
            problems.append(problem)
    if request is not None:
        rule = missing_required_set(request, arguments or {})
        if rule:
            problems.append(rule)
    if not problems:  # a model-level rule of a tool's own: name it as the call's problem
        problems.append(
            Problem("arguments", str(exc.errors()[0]["msg"]).removeprefix("Value error, "))
        )
    return ToolInputError.from_problems(problems)


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

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        """The tool's answer; a client-facing error as it is; anything unexpected masked (a
        generic message and an error id for the client, the detail in the log)."""
        try:
            return await self._answer(arguments)
        except ToolError:
            raise
        except Exception as exc:
            raise InternalError(self.name, exc) from None

    async def _answer(self, arguments: dict[str, Any]) -> ToolResult:
        with collecting() as stages:
            result = await self._timed_answer(arguments, stages)
        return result

    async def _timed_answer(self, arguments: dict[str, Any], stages: StageTimes) -> ToolResult:
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
            text = json.dumps(structured, ensure_ascii=False)
        timings: dict[str, Any] = (
            output.dual.timings() if output.dual else {"sql": None, "vector": None}
        )
        timings["total"] = round(total_ms, 2)
        # The whole handler (validation to serialised answer): a client's latency less this is
        # the MCP + HTTP layer.
        timings["handler"] = round((time.perf_counter() - received) * 1000, 2)
        timings["stages"] = stages.as_ms()
        meta: dict[str, Any] = {
            "timings_ms": timings,
            "cache": rt.cache_stats(),
            **output.extra_meta,
        }
        if output.dual and output.dual.errors:
            meta["path_errors"] = output.dual.errors
        return ToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured, meta=meta
        )
