"""Boundary cases from a published ``inputSchema``: the calls every property-based run makes
first (hypothesis' explicit phase), before any random generation.

Random generation seldom reaches a schema's edges: strings stay short, numbers rarely land on a
bound. So each tool is first called with, for every field (nested objects and array items
included):

- strings at ``maxLength`` and ``minLength``, once in clinical English and once in random code
  points (non-ASCII, combining marks, emoji), fitted to the field's ``pattern``; a bound the
  pattern cannot meet is skipped with the reason; an anchored pattern without declared lengths
  gives its own shortest and longest;
- numbers at ``minimum`` / ``maximum`` and just inside ``exclusiveMinimum`` /
  ``exclusiveMaximum`` (integers: the bound +/- 1; numbers: the next representable float);
- arrays at ``minItems`` and ``maxItems`` (items valid; enum items cycle through their values);
- every ``enum`` and ``const`` value and both booleans, several fields' choices per call (call
  k sets each such field to its k-th value) so a 26-value enum costs 26 calls, not 26 per field;
- all optional fields absent, all present; one call per ``anyOf`` / ``oneOf`` required set.

Each edge is one change to a base call (a known-good input when there is one, else the required
fields only), so a failure names the field and the edge. Every edge is validated against the
schema (formats asserted) before use; one that does not validate is dropped and reported, never
sent as a valid call.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from evals.run.edge_text import Style, fitted
from evals.run.schema_values import FORMAT_SAMPLES, Path, SchemaValues, field_rng
from ocm_common.json_types import Arguments, JsonSchema, JsonValue

STYLES: tuple[Style, ...] = ("words", "codepoints")


@dataclass(frozen=True)
class Edge:
    """One boundary call: which field, which edge, the arguments."""

    field: str  # "query", "device.type", "topics[]", "(optional)", "(anyOf)", "(choices)"
    what: str  # "maxLength 1000 words"
    args: Arguments

    @property
    def label(self) -> str:
        return f"{self.field}: {self.what}"


@dataclass(frozen=True)
class DroppedEdge:
    """An edge not sent: it could not be built (a pattern or format rules it out) or did not
    validate against the schema."""

    field: str
    what: str
    reason: str

    @property
    def label(self) -> str:
        return f"{self.field}: {self.what}"


@dataclass
class SchemaEdges:
    edges: list[Edge] = field(default_factory=list)
    dropped: list[DroppedEdge] = field(default_factory=list)
    repeats: list[Edge] = field(default_factory=list)  # the same call as an earlier edge: not sent
    choices: dict[str, str] = field(default_factory=dict)  # field -> "3 enum values"

    def summary(self) -> str:
        """Per field, the edges exercised: 'query: maxLength 1000 words, ...; mode: 3 enum values'."""
        by_field: dict[str, list[str]] = {}
        for edge in [*self.edges, *self.repeats]:
            if edge.field == "(choices)":
                continue
            by_field.setdefault(edge.field, []).append(edge.what)
        for name, what in self.choices.items():
            by_field.setdefault(name, []).append(what)
        return "; ".join(f"{name}: {', '.join(whats)}" for name, whats in by_field.items())


def schema_edges(schema: JsonSchema, base: Arguments | None = None) -> SchemaEdges:
    """The boundary calls of one tool's ``inputSchema``; ``base`` (a known-good call) is the
    call each field edge changes, when it is valid."""
    return _EdgeMaker(schema).make(base)


def path_name(path: Path) -> str:
    out = ""
    for part in path:
        out += "[]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _EdgeMaker(SchemaValues):
    """The boundary calls of one schema: every field's edges, each placed into the base call
    and validated before it is kept."""

    # ------------------------------------------------------------------------- the whole set

    def make(self, base: Arguments | None) -> SchemaEdges:
        out = SchemaEdges()
        root = self.node(self.root)
        if not root.get("properties"):
            return out  # a tool without arguments: the one valid call is {}
        none = self.plain(root, "none", ())
        start = _call(base if base is not None and self.validator.is_valid(base) else none)
        seen: set[str] = set()

        def add(field_name: str, what: str, value: JsonValue) -> None:
            key = json.dumps(value, sort_keys=True, ensure_ascii=False)
            if key in seen:
                out.repeats.append(Edge(field_name, what, _call(value)))
                return
            problem = self.problem(value)
            if problem:
                out.dropped.append(DroppedEdge(field_name, what, problem))
                return
            seen.add(key)
            out.edges.append(Edge(field_name, what, _call(value)))

        add("(optional)", "none", self.plain(root, "none", (), borrow=start))
        add("(optional)", "all", self.plain(root, "all", (), borrow=start))
        for n, alternative in enumerate(self.required_sets(root)):
            args = self.plain(root, "none", (), borrow=start, extra_required=alternative)
            add("(anyOf)", f"#{n + 1} {'+'.join(alternative)}", args)
        choices: list[tuple[Path, list[JsonValue]]] = []
        for path, what, value, reason in self.field_edges(root, ()):
            name = path_name(path)
            if reason is not None:
                out.dropped.append(DroppedEdge(name, what, reason))
            elif what == "choices" and isinstance(value, list):
                choices.append((path, value))
            else:
                add(name, what, self.place(start, path, value))
        for path, values in choices:
            kinds = "values" if len(values) != 1 else "value"
            out.choices[path_name(path)] = f"{len(values)} {_choice_kind(values)} {kinds}"
        rounds = max((len(values) for _, values in choices), default=0)
        for k in range(rounds):
            args = copy.deepcopy(start)
            for path, values in choices:
                args = self.place(args, path, values[k % len(values)])
            if self.problem(args) is None:
                add("(choices)", f"#{k + 1}", args)
                continue
            for path, values in choices:  # the combination is refused: one field at a time
                if k < len(values):
                    add(path_name(path), f"value {values[k]!r}", self.place(start, path, values[k]))
        return out

    def problem(self, args: JsonValue) -> str | None:
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"invalid against the schema at {where}: {error.message[:160]}"

    # ------------------------------------------------------------------------- field edges

    def field_edges(
        self, node: JsonSchema, path: Path
    ) -> Iterator[tuple[Path, str, JsonValue, str | None]]:
        """(path, what, value, reason-dropped) for every edge of every field under ``node``;
        what == "choices" carries the list of values a field cycles through."""
        for name, child in (node.get("properties") or {}).items():
            yield from self.value_edges(self.node(child), (*path, name))

    def value_edges(
        self, node: JsonSchema, path: Path
    ) -> Iterator[tuple[Path, str, JsonValue, str | None]]:
        branches = self.branches(node)
        if len(branches) > 1:
            for n, branch in enumerate(branches):
                for where, what, value, reason in self.value_edges(branch, path):
                    yield where, f"{what} (alternative {n + 1})", value, reason
            return
        values = self.choice_values(node)
        if values:
            yield path, "choices", values, None
            return
        kind = self.kind(node)
        if kind == "object":
            yield from self.field_edges(node, path)
        elif kind == "array":
            yield from self.array_edges(node, path)
        elif kind == "string":
            yield from self.string_edges(node, path)
        elif kind in ("integer", "number"):
            yield from self.number_edges(node, kind, path)
        elif kind == "null":
            yield path, "null", None, None

    def string_edges(
        self, node: JsonSchema, path: Path
    ) -> Iterator[tuple[Path, str, JsonValue, str | None]]:
        fmt = node.get("format")
        if fmt:
            if fmt in FORMAT_SAMPLES:
                yield path, f"format {fmt}", FORMAT_SAMPLES[fmt], None
            else:
                yield path, f"format {fmt}", None, f"no known value for format {fmt!r}"
            if "maxLength" in node or "minLength" in node:
                yield path, "length bounds", None, f"format {fmt!r} fixes the text: no length edges"
            return
        low, high = self.length_bounds(node)
        bounds: list[tuple[str, int]] = []
        if high is not None:
            declared = "maxLength" in node and int(node["maxLength"]) == high
            bounds.append((f"maxLength {high}" if declared else f"longest {high} (pattern)", high))
        declared_low = "minLength" in node and int(node["minLength"]) == low
        name = (
            f"minLength {low}"
            if declared_low
            else (f"shortest {low} (pattern)" if low else "empty")
        )
        if high is None or low != high:
            bounds.append((name, low))
        for label, length in bounds:
            built: dict[str, str] = {}
            for style in STYLES:
                made = fitted(node.get("pattern"), style, length, field_rng(path, style, length))
                if made is None:
                    yield (
                        path,
                        f"{label} {style}",
                        None,
                        (
                            f"no string of {length} characters built for pattern {node.get('pattern')!r}"
                            " (none exists, or the pattern uses look-arounds or back-references)"
                        ),
                    )
                    continue
                text, how = made
                if how == "from pattern" and "from pattern" in built:
                    continue  # the pattern decides the characters: one such string is enough
                built[how] = text
                yield path, f"{label} {how}" if length else label, text, None
                if not length:
                    break  # the empty string has no style

    def number_edges(
        self, node: JsonSchema, kind: str, path: Path
    ) -> Iterator[tuple[Path, str, JsonValue, str | None]]:
        for side, inclusive_key, exclusive_key in (
            ("min", "minimum", "exclusiveMinimum"),
            ("max", "maximum", "exclusiveMaximum"),
        ):
            for key in (inclusive_key, exclusive_key):
                bound = node.get(key)
                if isinstance(bound, bool) or not isinstance(bound, int | float):
                    continue
                value = self.inside(bound, kind, side, exclusive=key == exclusive_key)
                multiple = node.get("multipleOf")
                if isinstance(multiple, int | float) and multiple > 0:
                    steps = value / multiple
                    value = (math.ceil(steps) if side == "min" else math.floor(steps)) * multiple
                    if kind == "integer":
                        value = int(value)
                what = f"{key} {bound}" if value == bound else f"{key} {bound}: {value!r}"
                yield path, what, value, None

    def array_edges(
        self, node: JsonSchema, path: Path
    ) -> Iterator[tuple[Path, str, JsonValue, str | None]]:
        item = self.node(node.get("items") or {})
        low = int(node.get("minItems", 0))
        yield path, f"minItems {low}", self.distinct_items(item, low, path, "none"), None
        values = self.choice_values(item)
        if "maxItems" in node:
            high = int(node["maxItems"])
            if high != low:
                yield path, f"maxItems {high}", self.distinct_items(item, high, path, "none"), None
        elif values:
            yield path, f"all {len(values)} item values", list(values), None
        if values:
            yield (*path, 0), "choices", [[v] for v in values], None
            return
        yield from self.value_edges(item, (*path, 0))

    # ------------------------------------------------------------------------- placing a value

    def place(self, args: Arguments, path: Path, value: JsonValue) -> Arguments:
        """``args`` with ``value`` at ``path``; missing parents are made as plain values (an
        edge inside an array replaces its first item; a choice list replaces the array)."""
        if len(path) >= 2 and isinstance(path[-1], int) and isinstance(value, list):
            return self.place(args, path[:-1], value)  # an enum item's choice: the whole array
        out = copy.deepcopy(args)
        node: Any = out
        schema = self.node(self.root)
        for n, part in enumerate(path):
            last = n == len(path) - 1
            schema = self.node(
                (
                    schema.get("items")
                    if isinstance(part, int)
                    else (schema.get("properties") or {}).get(part)
                )
                or {}
            )
            if last:
                if isinstance(part, int):
                    if not node:
                        node.append(value)
                    else:
                        node[0] = value
                else:
                    node[part] = value
                break
            if isinstance(part, int):
                if not node:
                    node.append(self.plain(schema, "none", path[: n + 1]))
                node = node[0]
            else:
                if not isinstance(node.get(part), dict | list):
                    node[part] = self.plain(schema, "none", path[: n + 1])
                node = node[part]
        return out


def _call(value: JsonValue) -> Arguments:
    """A call's arguments: a JSON object (an MCP ``inputSchema`` is ``type: object``, so its
    plain value is one; placing a field into any other value raised TypeError before)."""
    if not isinstance(value, dict):
        raise TypeError(f"the arguments of a call are a JSON object, not {value!r:.80}")
    return value


def _choice_kind(values: list[JsonValue]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if len(values) == 1:
        return "const"
    return "enum"
