"""What every tool module provides, and how it becomes an MCP tool.

A tool module defines a pydantic `Request` and `Response` (field by field from the spec)
and an async `run(rt, request) -> ToolOutput`; its `SPEC` ties them to the tool name.
`McpTool` turns a spec into a FastMCP tool that publishes `inputSchema`/`outputSchema`,
validates arguments into a typed error naming the field and allowed values, enforces the
whole-tool timeout, and returns `structuredContent` plus `_meta.timings_ms`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from mcp.types import TextContent
from pydantic import BaseModel, ConfigDict, ValidationError

from reference_server.errors import ToolInputError
from reference_server.retrieval.dual_path import DualResult
from reference_server.runtime import Runtime

log = logging.getLogger(__name__)


class StrictModel(BaseModel):
    """Request models reject unknown fields, so a typo is an error rather than silently ignored."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolOutput:
    response: BaseModel
    dual: DualResult[Any, Any] | None = None
    extra_meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    request: type[BaseModel]
    response: type[BaseModel]
    run: Callable[[Runtime, Any], Awaitable[ToolOutput]]


def _allowed_from_schema(schema: dict[str, Any], loc: tuple[Any, ...]) -> list[Any] | None:
    """Walk the request schema along an error location to find an enum of allowed values."""
    node: dict[str, Any] | None = schema
    defs = schema.get("$defs", {})
    for part in loc:
        if node is None:
            return None
        if "$ref" in node:
            node = defs.get(node["$ref"].split("/")[-1])
        if node is None:
            return None
        for option in node.get("anyOf", []):
            if "$ref" in option or "properties" in option or "items" in option or "enum" in option:
                node = defs.get(option["$ref"].split("/")[-1]) if "$ref" in option else option
                break
        if isinstance(part, int):
            node = node.get("items") if node else None
        else:
            node = (node.get("properties") or {}).get(part) if node else None
    if node is None:
        return None
    if "$ref" in node:
        node = defs.get(node["$ref"].split("/")[-1]) or {}
    for option in [node, *node.get("anyOf", []), *(node.get("items", {}) and [node["items"]])]:
        if isinstance(option, dict) and "enum" in option:
            return list(option["enum"])
    return None


def input_error(exc: ValidationError, schema: dict[str, Any]) -> ToolInputError:
    """The first validation problem, as a tool error naming the field and what is allowed."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err.get("loc", ()))
    field_name = ".".join(str(p) for p in loc) or "arguments"
    if err["type"] == "extra_forbidden":
        return ToolInputError(
            field_name, "unknown argument", sorted((schema.get("properties") or {}).keys())
        )
    if err["type"] == "missing":
        return ToolInputError(field_name, "this argument is required")
    allowed: list[Any] | None = _allowed_from_schema(schema, loc)
    message = err["msg"].rstrip(".")
    if allowed and all(repr(a) in message for a in allowed):
        allowed = None  # pydantic's message already lists them
    return ToolInputError(field_name, message, allowed)


class McpTool(Tool):
    """A FastMCP tool backed by a ToolSpec and the shared runtime."""

    spec: Any = None
    runtime: Any = None

    @classmethod
    def create(cls, spec: ToolSpec, runtime: Runtime) -> McpTool:
        return cls(
            name=spec.name,
            description=spec.description,
            parameters=spec.request.model_json_schema(),
            output_schema=spec.response.model_json_schema(),
            spec=spec,
            runtime=runtime,
        )

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        spec: ToolSpec = self.spec
        rt: Runtime = self.runtime
        try:
            request = spec.request.model_validate(arguments or {})
        except ValidationError as exc:
            raise input_error(exc, self.parameters) from None
        start = time.perf_counter()
        try:
            output = await asyncio.wait_for(
                spec.run(rt, request), timeout=rt.settings.tool_timeout_ms / 1000
            )
        except TimeoutError:
            raise ToolError(
                f"{spec.name} did not finish within {rt.settings.tool_timeout_ms:.0f} ms; try again or narrow the request."
            ) from None
        total_ms = (time.perf_counter() - start) * 1000
        structured = output.response.model_dump(mode="json")
        timings: dict[str, float | None] = (
            output.dual.timings() if output.dual else {"sql": None, "vector": None}
        )
        timings["total"] = round(total_ms, 2)
        meta: dict[str, Any] = {
            "timings_ms": timings,
            "cache": rt.cache_stats(),
            **output.extra_meta,
        }
        if output.dual and output.dual.errors:
            meta["path_errors"] = output.dual.errors
        text = json.dumps(structured, ensure_ascii=False)
        return ToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured, meta=meta
        )
