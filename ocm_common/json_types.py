"""Types for the JSON other servers send, in the shapes their specifications publish: a JSON value
(RFC 8259), a tool's JSON Schema (the 2020-12 vocabulary MCP names for `inputSchema` and
`outputSchema`), and a `tools/list` entry (the MCP specification's `Tool`). Keys a server adds
beyond these stay in the data; the types only make what is read from it checked, so code that
reads a foreign listing or result narrows each value before it trusts it."""

from __future__ import annotations

import datetime
from typing import TypedDict

from pydantic import JsonValue

__all__ = [
    "Arguments",
    "JsonObject",
    "JsonSchema",
    "JsonValue",
    "ToolEntry",
    "ToolsListResult",
    "as_json",
]

# A JSON object: a tool's result, `structuredContent`, `_meta`, a file just parsed.
JsonObject = dict[str, JsonValue]

# The arguments of one tools/call, as sent (a JSON object by the MCP specification).
Arguments = dict[str, JsonValue]

# A JSON Schema: the keywords the harness reads. All optional; a schema may also be `true`.
JsonSchema = TypedDict(
    "JsonSchema",
    {
        "$schema": str,
        "$id": str,
        "$ref": str,
        "$defs": dict[str, "JsonSchema"],
        "definitions": dict[str, "JsonSchema"],
        "type": str | list[str],
        "title": str,
        "description": str,
        "default": JsonValue,
        "examples": list[JsonValue],
        "enum": list[JsonValue],
        "const": JsonValue,
        "properties": dict[str, "JsonSchema"],
        "required": list[str],
        "additionalProperties": "bool | JsonSchema",
        "patternProperties": dict[str, "JsonSchema"],
        "propertyNames": "JsonSchema",
        "minProperties": int,
        "maxProperties": int,
        "dependentRequired": dict[str, list[str]],
        "items": "JsonSchema | list[JsonSchema]",
        "prefixItems": list["JsonSchema"],
        "minItems": int,
        "maxItems": int,
        "uniqueItems": bool,
        "contains": "JsonSchema",
        "minLength": int,
        "maxLength": int,
        "pattern": str,
        "format": str,
        "minimum": int | float,
        "maximum": int | float,
        "exclusiveMinimum": int | float | bool,
        "exclusiveMaximum": int | float | bool,
        "multipleOf": int | float,
        "anyOf": list["JsonSchema"],
        "oneOf": list["JsonSchema"],
        "allOf": list["JsonSchema"],
        "not": "JsonSchema",
        "if": "JsonSchema",
        "then": "JsonSchema",
        "else": "JsonSchema",
        "nullable": bool,
    },
    total=False,
)


class ToolEntry(TypedDict, total=False):
    """One tool of a `tools/list` result (MCP `Tool`): `name` and `inputSchema` are required by
    the specification, but a server under test may omit them, so reading code checks."""

    name: str
    title: str
    description: str
    inputSchema: JsonSchema
    outputSchema: JsonSchema
    annotations: JsonObject
    _meta: JsonObject


class ToolsListResult(TypedDict, total=False):
    """A `tools/list` result (MCP `ListToolsResult`)."""

    tools: list[ToolEntry]
    nextCursor: str
    _meta: JsonObject


def as_json(value: object) -> object:
    """YAML's scalars that JSON lacks (an unquoted date or time) as the ISO text a JSON client
    sends for them; everything else as it is. Applied before validation, so a hand-written file
    with `date: 2025-04-01` still means the string."""
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_json(item) for item in value]
    return value
