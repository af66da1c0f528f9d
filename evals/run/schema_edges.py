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
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from evals.run.edge_text import Style, anchored_width, fitted

STYLES: tuple[Style, ...] = ("words", "codepoints")
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


@dataclass(frozen=True)
class Edge:
    """One boundary call: which field, which edge, the arguments."""

    field: str  # "query", "device.type", "topics[]", "(optional)", "(anyOf)", "(choices)"
    what: str  # "maxLength 1000 words"
    args: dict[str, Any]

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


def schema_edges(schema: dict[str, Any], base: dict[str, Any] | None = None) -> SchemaEdges:
    """The boundary calls of one tool's ``inputSchema``; ``base`` (a known-good call) is the
    call each field edge changes, when it is valid."""
    return _EdgeMaker(schema).make(base)


def path_name(path: Path) -> str:
    out = ""
    for part in path:
        out += "[]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class _EdgeMaker:
    def __init__(self, schema: dict[str, Any]):
        self.root = schema
        self.validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )

    # ------------------------------------------------------------------------- the whole set

    def make(self, base: dict[str, Any] | None) -> SchemaEdges:
        out = SchemaEdges()
        root = self.node(self.root)
        if not root.get("properties"):
            return out  # a tool without arguments: the one valid call is {}
        none = self.plain(root, "none", ())
        start = base if base is not None and self.validator.is_valid(base) else none
        seen: set[str] = set()

        def add(field_name: str, what: str, args: Any) -> None:
            key = json.dumps(args, sort_keys=True, ensure_ascii=False)
            if key in seen:
                out.repeats.append(Edge(field_name, what, args))
                return
            problem = self.problem(args)
            if problem:
                out.dropped.append(DroppedEdge(field_name, what, problem))
                return
            seen.add(key)
            out.edges.append(Edge(field_name, what, args))

        add("(optional)", "none", self.plain(root, "none", (), borrow=start))
        add("(optional)", "all", self.plain(root, "all", (), borrow=start))
        for n, alternative in enumerate(self.required_sets(root)):
            args = self.plain(root, "none", (), borrow=start, extra_required=alternative)
            add("(anyOf)", f"#{n + 1} {'+'.join(alternative)}", args)
        choices: list[tuple[Path, list[Any]]] = []
        for path, what, value, reason in self.field_edges(root, ()):
            name = path_name(path)
            if reason is not None:
                out.dropped.append(DroppedEdge(name, what, reason))
            elif what == "choices":
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

    def problem(self, args: Any) -> str | None:
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(args))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"invalid against the schema at {where}: {error.message[:160]}"

    def required_sets(self, node: dict[str, Any]) -> list[list[str]]:
        """The alternatives of an anyOf / oneOf of required sets (one call each at the top level)."""
        sets = []
        for key in ("anyOf", "oneOf"):
            for alternative in node.get(key) or []:
                required = alternative.get("required") if isinstance(alternative, dict) else None
                if required:
                    sets.append(list(required))
        return sets

    # ------------------------------------------------------------------------- schema nodes

    def node(self, node: Any, depth: int = 0) -> dict[str, Any]:
        """A node with local ``$ref`` and ``allOf`` folded in (the published shape, whole)."""
        if not isinstance(node, dict):
            return {}
        out = dict(node)
        ref = out.pop("$ref", None)
        if isinstance(ref, str) and ref.startswith("#/") and depth < 20:
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, dict) else {}
            out = {**self.node(target, depth + 1), **out}
        for part in out.pop("allOf", None) or []:
            merged = self.node(part, depth + 1)
            props = {**(out.get("properties") or {}), **(merged.get("properties") or {})}
            required = [*(out.get("required") or []), *(merged.get("required") or [])]
            out = {**merged, **out}
            if props:
                out["properties"] = props
            if required:
                out["required"] = list(dict.fromkeys(required))
        return out

    def branches(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        """A union field's alternatives (anyOf / oneOf of schemas, or a list of types)."""
        for key in ("anyOf", "oneOf"):
            options = node.get(key)
            if options and all(isinstance(o, dict) and "required" not in o for o in options):
                rest = {k: v for k, v in node.items() if k != key}
                return [{**rest, **self.node(o)} for o in options]
        kinds = node.get("type")
        if isinstance(kinds, list) and len(kinds) > 1:
            return [{**node, "type": k} for k in kinds]
        return [node]

    def kind(self, node: dict[str, Any]) -> str:
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
        node: dict[str, Any],
        optional: str,
        path: Path,
        *,
        borrow: Any = None,
        extra_required: list[str] | None = None,
    ) -> Any:
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
        self, item: dict[str, Any], count: int, path: Path, optional: str
    ) -> list[Any]:
        values = self.choice_values(item)
        if values:
            return [values[k % len(values)] for k in range(count)]
        out = []
        for k in range(count):
            value = self.plain(item, optional, (*path, k))
            if isinstance(value, str) and value in out:
                value = self.text(item, len(value), "words", (*path, k, "distinct")) or value
            out.append(value)
        return out

    def plain_string(self, node: dict[str, Any], path: Path) -> str:
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

    def plain_number(self, node: dict[str, Any], kind: str) -> int | float:
        low, high = self.number_bounds(node, kind)
        value: int | float = 1 if kind == "integer" else 1.0
        if low is not None and value < low:
            value = low
        if high is not None and value > high:
            value = high
        return value

    def text(self, node: dict[str, Any], length: int, style: Style, path: Path) -> str | None:
        made = fitted(node.get("pattern"), style, length, _rng(path, style, length))
        return made[0] if made else None

    # ------------------------------------------------------------------------- bounds

    def length_bounds(self, node: dict[str, Any]) -> tuple[int, int | None]:
        low = int(node.get("minLength", 0))
        high = int(node["maxLength"]) if "maxLength" in node else None
        width = anchored_width(node["pattern"]) if node.get("pattern") else None
        if width is not None:
            low = max(low, width[0])
            if width[1] < 10**9:
                high = width[1] if high is None else min(high, width[1])
        return low, high

    def number_bounds(
        self, node: dict[str, Any], kind: str
    ) -> tuple[int | float | None, int | float | None]:
        return self.number_bound(node, kind, "min"), self.number_bound(node, kind, "max")

    def number_bound(self, node: dict[str, Any], kind: str, side: str) -> int | float | None:
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

    # ------------------------------------------------------------------------- field edges

    def choice_values(self, node: dict[str, Any]) -> list[Any]:
        if "const" in node:
            return [node["const"]]
        if "enum" in node:
            return list(node["enum"])
        if self.kind(node) == "boolean":
            return [True, False]
        return []

    def field_edges(
        self, node: dict[str, Any], path: Path
    ) -> Iterator[tuple[Path, str, Any, str | None]]:
        """(path, what, value, reason-dropped) for every edge of every field under ``node``;
        what == "choices" carries the list of values a field cycles through."""
        for name, child in (node.get("properties") or {}).items():
            yield from self.value_edges(self.node(child), (*path, name))

    def value_edges(
        self, node: dict[str, Any], path: Path
    ) -> Iterator[tuple[Path, str, Any, str | None]]:
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
        self, node: dict[str, Any], path: Path
    ) -> Iterator[tuple[Path, str, Any, str | None]]:
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
                made = fitted(node.get("pattern"), style, length, _rng(path, style, length))
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
        self, node: dict[str, Any], kind: str, path: Path
    ) -> Iterator[tuple[Path, str, Any, str | None]]:
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
        self, node: dict[str, Any], path: Path
    ) -> Iterator[tuple[Path, str, Any, str | None]]:
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

    def place(self, args: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
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


def _choice_kind(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if len(values) == 1:
        return "const"
    return "enum"


def _rng(path: Path, style: str, length: int) -> random.Random:
    """The same text for the same field and edge on every run (a reproducible report)."""
    return random.Random(zlib.crc32(f"{path!r}|{style}|{length}".encode()))
