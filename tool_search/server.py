"""The tool-search MCP server: four read-only tools over one catalogue.

Each tool publishes its request model as `inputSchema` and its response model as
`outputSchema`; arguments are validated as JSON types into one error listing every problem
(field + allowed values, `reference_server.tools.input_schema.input_error`), and anything
unexpected is masked with an error id (`reference_server.errors.InternalError`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from mcp.types import TextContent, ToolAnnotations
from pydantic import BaseModel, ValidationError

from ocm_common.json_types import Arguments
from reference_server.errors import InternalError, Problem, ToolInputError
from reference_server.tools.input_schema import input_error, published_input_schema
from tool_search import models as m
from tool_search.background import BackgroundService
from tool_search.requests import CapabilityRequest, CategoriesRequest, DetailsRequest, SearchRequest
from tool_search.service import ToolSearchService

INSTRUCTIONS = (
    "Find the right tool among many: search_mcp_tools with what you want to do, then "
    "get_tool_details on the best tool id for its schema, examples and related tools."
)

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class SearchTool(Tool):
    """One of the four tools: a request model, a response model and an answer function."""

    request: Any = None
    answer: Any = None
    extra_problems: Any = None

    def parse(self, arguments: Arguments | None) -> BaseModel:
        args = arguments or {}
        extra: list[Problem] = [
            p for p in (self.extra_problems(args) if self.extra_problems else []) if p
        ]
        try:
            request = self.request.model_validate_json(json.dumps(args), strict=True)
        except ValidationError as exc:
            error = input_error(exc, self.parameters, self.request, args)
            raise ToolInputError.from_problems([*error.problems, *extra]) from None
        if extra:
            raise ToolInputError.from_problems(extra)
        return request  # type: ignore[no-any-return]

    async def run(self, arguments: Arguments) -> ToolResult:
        try:
            structured = self.answer(self.parse(arguments)).model_dump(mode="json")
        except ToolError:
            raise
        except Exception as exc:
            raise InternalError(self.name, exc) from None
        text = json.dumps(structured, ensure_ascii=False)
        return ToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured
        )


def _tool(
    name: str,
    title: str,
    description: str,
    request: type[BaseModel],
    response: type[BaseModel],
    answer: Callable[[Any], BaseModel],
    extra_problems: Callable[[Arguments], list[Problem | None]] | None = None,
) -> SearchTool:
    return SearchTool(
        name=name,
        title=title,
        description=description,
        parameters=published_input_schema(request),
        output_schema=response.model_json_schema(),
        annotations=READ_ONLY,
        request=request,
        answer=answer,
        extra_problems=extra_problems,
    )


def build_server(service: ToolSearchService | BackgroundService) -> FastMCP:
    server = FastMCP("tool-search", instructions=INSTRUCTIONS, mask_error_details=True)

    def category(args: Arguments) -> list[Problem | None]:
        value = args.get("category")
        return [service.category_problem(value)] if isinstance(value, str) else []

    tools = [
        _tool(
            "search_mcp_tools",
            "Search tools by what they do",
            "Find tools in this server's catalogues (list_tool_categories counts them) by what "
            "you want to do, in words. Ranks by BM25 over tool names, "
            "descriptions and argument names and descriptions, and by meaning with a local "
            "embedding model, fused (search_mode=hybrid); filter by category or tool_type. Each "
            "result gives its tool_id (server/tool), a score and which fields matched.",
            SearchRequest,
            m.SearchResponse,
            service.search,
            category,
        ),
        _tool(
            "get_tool_details",
            "Read one tool's details",
            "Everything about one tool by tool_id: its parameters and JSON Schemas, example "
            "calls from known-good inputs, alternatives and complementary tools, and how to call "
            "it well.",
            DetailsRequest,
            m.ToolDetailsResponse,
            service.details,
        ),
        _tool(
            "list_tool_categories",
            "List tool categories",
            "The categories of the catalogue with their tool counts, tool types and "
            "representative tools, and how many tools each server contributes.",
            CategoriesRequest,
            m.CategoriesResponse,
            lambda _req: service.categories(),
        ),
        _tool(
            "search_tools_by_capability",
            "Search tools by capability and parameters",
            "Find tools for a capability that also take the named parameters (exact names, the "
            "same words, or close spellings) and have the preferred complexity (simple, "
            "moderate or complex by argument count and schema size).",
            CapabilityRequest,
            m.CapabilityResponse,
            service.capability,
        ),
    ]
    for tool in tools:
        server.add_tool(tool)
    return server
