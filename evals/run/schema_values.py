"""What the boundary-case builder knows of a schema node, apart from its edges: the node with
local ``$ref`` and ``allOf`` folded in, a union's alternatives, its kind, a valid and
unremarkable value for it (the base every edge changes one field of), its length and number
bounds, and the values a choice field cycles through.
"""

from __future__ import annotations

import copy
import math
import random
import zlib

import jsonschema

from evals.run.edge_text import Style, anchored_width, fitted
from evals.run.schema_reading import UNIONS, is_schema
from ocm_common.json_types import JsonSchema, JsonValue

# A known value per string format: a format fixes the text, so length edges are not built for it.
FORMAT_SAMPLES = {
    "date": "2026-11-01",
    "date-time": "2026-11-01T09:30:00Z",
    "time": "09:30:00Z",
    "email": "clinic@example.org",
    "uri": "https://example.org/guidance",
    "uri-reference": "/guidance",
    "uuid": "4f1d2c3b-5a6e-4f70-8a9b-0c1d2e3f4a5b",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.org",
}
PLAIN_LENGTH = 24  # a filler string's length, within the field's bounds
Path = tuple[str | int, ...]  # keys and list positions from the arguments' root


class SchemaValues:
    """One tool's ``inputSchema`` (its root, for local references, and a validator that asserts
    formats) and the plain values and bounds of its nodes."""

    def __init__(self, schema: JsonSchema):
        self.root = schema
        self.validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )

    def required_sets(self, node: JsonSchema) -> list[list[str]]:
        """The alternatives of an anyOf / oneOf of required sets (one call each at the top level)."""
        sets = []
        for key in UNIONS:
            for alternative in node.get(key) or []:
                required = alternative.get("required") if isinstance(alternative, dict) else None
                if required:
                    sets.append(list(required))
        return sets

    # ------------------------------------------------------------------------- schema nodes

    def node(self, node: object, depth: int = 0) -> JsonSchema:
        """A node with local ``$ref`` and ``allOf`` folded in (the published shape, whole)."""
        if not is_schema(node):
            return {}
        out: JsonSchema = {**node}
        ref = out.pop("$ref", None)
        if isinstance(ref, str) and ref.startswith("#/") and depth < 20:
            target: object = self.root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            out = {**self.node(target, depth + 1), **out}
        for each in out.pop("allOf", None) or []:
            merged = self.node(each, depth + 1)
            props = {**(out.get("properties") or {}), **(merged.get("properties") or {})}
            required = [*(out.get("required") or []), *(merged.get("required") or [])]
            out = {**merged, **out}
            if props:
                out["properties"] = props
            if required:
                out["required"] = list(dict.fromkeys(required))
        return out

    def branches(self, node: JsonSchema) -> list[JsonSchema]:
        """A union field's alternatives (anyOf / oneOf of schemas, or a list of types)."""
        for key in UNIONS:
            options = node.get(key)
            if options and all(isinstance(o, dict) and "required" not in o for o in options):
                rest: JsonSchema = {**node}
                del rest[key]
                return [{**rest, **self.node(o)} for o in options]
        kinds = node.get("type")
        if isinstance(kinds, list) and len(kinds) > 1:
            return [{**node, "type": k} for k in kinds]
        return [node]

    def kind(self, node: JsonSchema) -> str:
        kinds = node.get("type")
        if isinstance(kinds, list):
            kinds = next((k for k in kinds if k != "null"), kinds[0] if kinds else None)
        if kinds:
            return str(kinds)
        if "properties" in node:
            return "object"
        if "items" in node:
            return "array"
        if "enum" in node or "const" in node:
            return "choice"
        return "any"

    # ------------------------------------------------------------------------- plain values

    def plain(
        self,
        node: JsonSchema,
        optional: str,
        path: Path,
        *,
        borrow: JsonValue = None,
        extra_required: list[str] | None = None,
    ) -> JsonValue:
        """A valid, unremarkable value: objects with their required fields (``optional="all"``:
        every field), the borrowed known-good value where it has one."""
        node = self.node(node)
        branches = self.branches(node)
        if len(branches) > 1:
            for branch in branches:
                value = self.plain(branch, optional, path, borrow=borrow)
                if jsonschema.Draft202012Validator(branch).is_valid(value):
                    return value
            node = branches[0]
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return borrow if borrow in node["enum"] else node["enum"][0]
        kind = self.kind(node)
        if kind == "object":
            props = node.get("properties") or {}
            wanted = set(node.get("required") or []) | set(extra_required or [])
            if optional == "all":
                wanted |= set(props)
            sets = self.required_sets(node)
            if sets and not any(set(one) <= wanted for one in sets):
                wanted |= set(sets[0])  # an anyOf of required sets: its first alternative
            source = borrow if isinstance(borrow, dict) else {}
            return {
                name: self.plain(
                    props.get(name) or {}, optional, (*path, name), borrow=source.get(name)
                )
                for name in props
                if name in wanted
            }
        if borrow is not None and jsonschema.Draft202012Validator(node).is_valid(borrow):
            return copy.deepcopy(borrow)
        if "default" in node and jsonschema.Draft202012Validator(node).is_valid(node["default"]):
            return node["default"]
        if kind == "array":
            item = self.node(node.get("items") or {})
            count = max(int(node.get("minItems", 0)), 1 if optional == "all" else 0)
            count = min(count, int(node.get("maxItems", count)))
            return self.distinct_items(item, count, path, optional)
        if kind == "string":
            return self.plain_string(node, path)
        if kind in ("integer", "number"):
            return self.plain_number(node, kind)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return "x"

    def distinct_items(
        self, item: JsonSchema, count: int, path: Path, optional: str
    ) -> list[JsonValue]:
        values = self.choice_values(item)
        if values:
            return [values[k % len(values)] for k in range(count)]
        out: list[JsonValue] = []
        for k in range(count):
            value = self.plain(item, optional, (*path, k))
            if isinstance(value, str) and value in out:
                value = self.text(item, len(value), "words", (*path, k, "distinct")) or value
            out.append(value)
        return out

    def plain_string(self, node: JsonSchema, path: Path) -> str:
        if node.get("format") in FORMAT_SAMPLES:
            return FORMAT_SAMPLES[node["format"]]
        low, high = self.length_bounds(node)
        length = min(max(low, PLAIN_LENGTH), high if high is not None else PLAIN_LENGTH)
        for size in (length, low, high):
            if size is None:
                continue
            text = self.text(node, size, "words", (*path, "plain"))
            if text is not None:
                return text
        return "x"

    def plain_number(self, node: JsonSchema, kind: str) -> int | float:
        low, high = self.number_bounds(node, kind)
        value: int | float = 1 if kind == "integer" else 1.0
        if low is not None and value < low:
            value = low
        if high is not None and value > high:
            value = high
        return value

    def text(self, node: JsonSchema, length: int, style: Style, path: Path) -> str | None:
        made = fitted(node.get("pattern"), style, length, field_rng(path, style, length))
        return made[0] if made else None

    # ------------------------------------------------------------------------- bounds

    def length_bounds(self, node: JsonSchema) -> tuple[int, int | None]:
        low = int(node.get("minLength", 0))
        high = int(node["maxLength"]) if "maxLength" in node else None
        width = anchored_width(node["pattern"]) if node.get("pattern") else None
        if width is not None:
            low = max(low, width[0])
            if width[1] < 10**9:
                high = width[1] if high is None else min(high, width[1])
        return low, high

    def number_bounds(
        self, node: JsonSchema, kind: str
    ) -> tuple[int | float | None, int | float | None]:
        return self.number_bound(node, kind, "min"), self.number_bound(node, kind, "max")

    def number_bound(self, node: JsonSchema, kind: str, side: str) -> int | float | None:
        """The smallest (or largest) value the node accepts, bounds and exclusive bounds
        together; None when unbounded on that side."""
        inclusive = node.get("minimum" if side == "min" else "maximum")
        exclusive = node.get("exclusiveMinimum" if side == "min" else "exclusiveMaximum")
        if exclusive is True:  # draft 4: the boolean form makes the bound exclusive
            exclusive, inclusive = inclusive, None
        if exclusive is False:
            exclusive = None
        candidates = []
        if isinstance(inclusive, int | float) and not isinstance(inclusive, bool):
            candidates.append(self.inside(inclusive, kind, side, exclusive=False))
        if isinstance(exclusive, int | float) and not isinstance(exclusive, bool):
            candidates.append(self.inside(exclusive, kind, side, exclusive=True))
        if not candidates:
            return None
        return max(candidates) if side == "min" else min(candidates)

    @staticmethod
    def inside(bound: int | float, kind: str, side: str, *, exclusive: bool) -> int | float:
        up = side == "min"
        if kind == "integer":
            value = math.ceil(bound) if up else math.floor(bound)
            if exclusive and value == bound:
                value += 1 if up else -1
            return int(value)
        if exclusive:
            return math.nextafter(float(bound), math.inf if up else -math.inf)
        return bound

    def choice_values(self, node: JsonSchema) -> list[JsonValue]:
        if "const" in node:
            return [node["const"]]
        if "enum" in node:
            return list(node["enum"])
        if self.kind(node) == "boolean":
            return [True, False]
        return []


def field_rng(path: Path, style: str, length: int) -> random.Random:
    """The same text for the same field and edge on every run (a reproducible report)."""
    return random.Random(zlib.crc32(f"{path!r}|{style}|{length}".encode()))
