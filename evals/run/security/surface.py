"""A tool as ``tools/list`` published it, every field a check may read (names, title,
description, schemas, annotations), taken from the wire form so nothing a framework adds or
drops on the client side hides what the server sent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict

from evals.json_pointer import escape
from evals.run.schema_reading import is_schema, schema_of
from ocm_common.json_types import JsonObject, JsonSchema


class ContractEntry(TypedDict):
    """A tool as :func:`evals.contract.diff_surfaces` compares it."""

    title: str | None
    description: str | None
    annotations: JsonObject | None
    inputSchema: JsonSchema
    outputSchema: JsonSchema | None


@dataclass(frozen=True)
class ToolSurface:
    name: str
    title: str | None = None
    description: str | None = None
    input_schema: JsonSchema = field(default_factory=JsonSchema)
    output_schema: JsonSchema | None = None
    annotations: JsonObject = field(default_factory=dict)

    @classmethod
    def from_wire(cls, raw: JsonObject) -> ToolSurface:
        """From the camelCase JSON form of one ``tools/list`` entry (a member of another type
        than the specification's is read as absent)."""
        title, description = raw.get("title"), raw.get("description")
        output, annotations = raw.get("outputSchema"), raw.get("annotations")
        return cls(
            name=str(raw.get("name", "")),
            title=title if isinstance(title, str) else None,
            description=description if isinstance(description, str) else None,
            input_schema=schema_of(raw.get("inputSchema")),
            output_schema=schema_of(output) if is_schema(output) and output else None,
            annotations=dict(annotations) if isinstance(annotations, dict) else {},
        )

    def to_contract(self) -> ContractEntry:
        """The shape :func:`evals.contract.diff_surfaces` compares."""
        return {
            "title": self.title,
            "description": self.description,
            "annotations": self.annotations or None,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
        }

    @property
    def properties(self) -> dict[str, JsonSchema]:
        props = self.input_schema.get("properties") or {}
        return {k: v for k, v in props.items() if isinstance(v, dict)}

    @property
    def required(self) -> list[str]:
        return [r for r in self.input_schema.get("required") or [] if isinstance(r, str)]

    def texts(self) -> Iterator[tuple[str, str]]:
        """Every piece of text a model may read, as ``(JSON pointer, text)``: the name, title,
        description, annotation strings, and every string and property name in the schemas."""
        base = f"/{escape(self.name)}"
        yield f"{base}/name", self.name
        if self.title:
            yield f"{base}/title", self.title
        if self.description:
            yield f"{base}/description", self.description
        for key, value in self.annotations.items():
            if isinstance(value, str):
                yield f"{base}/annotations/{escape(key)}", value
        yield from _strings(self.input_schema, f"{base}/inputSchema")
        if self.output_schema:
            yield from _strings(self.output_schema, f"{base}/outputSchema")


def _strings(node: object, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{pointer}/{escape(str(key))}"
            if pointer.endswith("/properties"):
                yield f"{where}#name", str(key)
            yield from _strings(value, where)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, f"{pointer}/{index}")
    elif isinstance(node, str):
        yield pointer, node


def surface_map(tools: list[ToolSurface]) -> dict[str, ContractEntry]:
    return {t.name: t.to_contract() for t in tools}
