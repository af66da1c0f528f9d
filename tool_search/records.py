"""One tool as every catalogue source becomes it: the record the index, the ranking and the
responses read, whatever format or server it came from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TypedDict

from ocm_common.json_types import Arguments, JsonObject, JsonValue

TOOL_TYPES = ("system", "custom", "third_party")


@dataclass(frozen=True)
class Parameter:
    """One argument of a tool, read from its JSON Schema."""

    name: str
    type: str
    description: str
    required: bool
    default: JsonValue = None
    enum: tuple[JsonValue, ...] = ()


class ToolCallExample(TypedDict):
    """One example call shown with a tool: its arguments (for the tool's own schema) and where
    the example comes from (a golden scenario, a catalogue file)."""

    arguments: Arguments
    source: str


def catalogue_example(entry: JsonObject, source: str) -> ToolCallExample:
    """An example as a tool-definition file gives it: bare arguments, or already an example
    (`{arguments, source}`; KeyError when it has no source, TypeError when its arguments are
    not an object or its source not a string)."""
    if "arguments" in entry:
        arguments, given = entry["arguments"], entry["source"]
        if not isinstance(arguments, dict) or not isinstance(given, str):
            raise TypeError("an example's arguments must be an object and its source a string")
        return {"arguments": arguments, "source": given}
    return {"arguments": entry, "source": f"catalogue {source}"}


@dataclass
class ToolRecord:
    """A tool in the catalogue; `tool_id` (`server/tool`) is unique across every source."""

    server: str
    name: str
    description: str
    input_schema: JsonObject
    title: str | None = None
    source: str = ""
    category: str = "general"
    tool_type: str = "custom"
    annotations: JsonObject = field(default_factory=dict)
    examples: list[ToolCallExample] = field(default_factory=list)
    output_schema: JsonObject | None = None

    @property
    def tool_id(self) -> str:
        return f"{self.server}/{self.name}"

    @property
    def parameters(self) -> list[Parameter]:
        return parameters_of(self.input_schema)

    @property
    def required(self) -> list[str]:
        return [p.name for p in self.parameters if p.required]

    @property
    def schema_size(self) -> int:
        """How much a caller must read to call the tool: its inlined schema's length."""
        return len(json.dumps(self.input_schema, sort_keys=True))

    @property
    def complexity(self) -> str:
        """simple / moderate / complex from the argument count, required count and schema size."""
        n, req, size = len(self.parameters), len(self.required), self.schema_size
        if n <= 2 and req <= 1 and size <= 600:
            return "simple"
        if n <= 6 and req <= 3 and size <= 2000:
            return "moderate"
        return "complex"


def _items(node: JsonObject) -> JsonObject:
    """An array node's `items` schema ({} when it gives none as an object)."""
    items = node.get("items")
    return items if isinstance(items, dict) else {}


def _values(values: JsonValue | tuple[()]) -> tuple[JsonValue, ...]:
    """A list keyword's values as `tuple()` reads them (a TypeError for a number)."""
    if isinstance(values, list | dict | str | tuple):
        return tuple(values)
    raise TypeError(f"'{type(values).__name__}' object is not iterable")


def _type_of(node: JsonObject) -> str:
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind if k != "null") or "null"
    if kind == "array":
        items = _items(node)
        return f"{_type_of(items)}[]" if items else "array"
    if kind:
        return str(kind)
    options = node.get("anyOf") or node.get("oneOf")
    if isinstance(options, list):
        kinds = [_type_of(o) for o in options if isinstance(o, dict) and o.get("type") != "null"]
        return " | ".join(kinds) or "any"
    if "enum" in node:
        return "enum"
    return "any"


def parameters_of(schema: JsonObject) -> list[Parameter]:
    """The top-level arguments of a JSON Schema object, in the schema's order."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return []
    required = set(_values(schema.get("required") or ()))
    out = []
    for name, node in props.items():
        node = node if isinstance(node, dict) else {}
        items = _items(node)
        enum = node.get("enum") or items.get("enum") or ()
        out.append(
            Parameter(
                name=str(name),
                type=_type_of(node),
                description=str(node.get("description") or node.get("title") or ""),
                required=name in required,
                default=node.get("default"),
                enum=_values(enum),
            )
        )
    return out
