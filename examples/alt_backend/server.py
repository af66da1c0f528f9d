"""The MCP layer: four FastMCP tools whose published schemas are copied from the contract
(``schemas.json``) and whose calls are checked against the input schema here."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import jsonschema
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from mcp.types import ToolAnnotations
from pydantic import Field, JsonValue
from pydantic.json_schema import SkipJsonSchema

from examples.alt_backend.backend import Backend, NotFound
from examples.alt_backend.payloads import ToolAnswer

SCHEMAS_FILE = Path(__file__).with_name("schemas.json")
log = logging.getLogger(__name__)

DESCRIPTIONS = {
    "odb.get": (
        "Ontario Drug Benefit formulary look-up from the official data extract: whether a "
        "product is a benefit, its Limited Use codes and criteria, its interchangeable group "
        "with unit prices, the lowest-cost interchangeable product and covered alternatives."
    ),
    "schedule.get": (
        "OHIP Schedule of Benefits look-up: fee codes named or found by keywords, with the "
        "amount of the main listing, component columns, every differing listing, limits and "
        "conditions from the extracted tables."
    ),
    "adp.get": (
        "Assistive Devices Program look-up in the ADP policy manuals: device category, "
        "funding shares, exclusions, social-assistance co-payment, the income check for the "
        "client share, and who-does-what rules, each cited by manual and section."
    ),
    "source.passages": (
        "Show the passages behind citations: give chunk ids from any citation of this "
        "server, get the text, its source and section, with requested terms highlighted."
    ),
}


class ToolSchemas(TypedDict):
    """One tool's entry in schemas.json: its published JSON Schemas."""

    inputSchema: dict[str, JsonValue]
    outputSchema: dict[str, JsonValue]


def load_schemas() -> dict[str, ToolSchemas]:
    data: dict[str, ToolSchemas] = json.loads(SCHEMAS_FILE.read_text(encoding="utf-8"))
    return data


def _where(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "arguments"


def validate_arguments(schema: dict[str, JsonValue], args: dict[str, JsonValue]) -> None:
    """Raise ToolError naming the offending field and what is allowed."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    problems = []
    for error in errors[:3]:
        if error.validator == "anyOf" and not error.absolute_path:
            any_of = schema.get("anyOf", [])
            options = [
                "/".join(_names(sub.get("required", [])))
                for sub in (any_of if isinstance(any_of, list) else [])
                if isinstance(sub, dict) and sub
            ]
            problems.append(f"arguments: give at least one of {', '.join(options)}")
        else:
            problems.append(f"{_where(error)}: {error.message}")
    raise ToolError("Invalid arguments - " + "; ".join(problems))


def _names(required: JsonValue) -> list[str]:
    """An `anyOf` branch's `required` names."""
    return [str(n) for n in required] if isinstance(required, list) else []


class SchemaTool(Tool):
    """A tool published with a fixed input and output schema; the handler returns its answer."""

    handler: SkipJsonSchema[Callable[[dict[str, JsonValue]], ToolAnswer]] = Field(exclude=True)

    async def run(self, arguments: dict[str, JsonValue]) -> ToolResult:
        validate_arguments(self.parameters, arguments)
        try:
            result = await asyncio.to_thread(self.handler, arguments)
        except NotFound as exc:
            raise ToolError(str(exc)) from None
        except ToolError:
            raise
        except Exception:
            log.exception("tool %s failed", self.name)
            raise ToolError(f"{self.name} could not answer this request (internal error)") from None
        return ToolResult(content=json.dumps(result, ensure_ascii=False), structured_content=result)


def build_server(backend: Backend) -> FastMCP[Any]:
    schemas = load_schemas()
    handlers: dict[str, Callable[[dict[str, JsonValue]], ToolAnswer]] = {
        "odb.get": backend.odb_get,
        "schedule.get": backend.schedule_get,
        "adp.get": backend.adp_get,
        "source.passages": backend.source_passages,
    }
    server: FastMCP[Any] = FastMCP(
        "alt-ontario-lookups",
        instructions=(
            "An independent backend for four Ontario coverage look-ups (ODB drugs, OHIP fee "
            "codes, ADP devices) read straight from the official data files, with keyword "
            "retrieval. Citations carry chunk ids that source.passages resolves."
        ),
        mask_error_details=True,
    )
    for name, handler in handlers.items():
        server.add_tool(
            SchemaTool(
                name=name,
                description=DESCRIPTIONS[name],
                parameters=schemas[name]["inputSchema"],
                output_schema=schemas[name]["outputSchema"],
                annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
                handler=handler,
            )
        )
    return server
