"""Cases from a published inputSchema: valid arguments (hypothesis-jsonschema, plus hostile
text put into string fields) and invalid ones (a valid object broken by one or two
schema-driven mutations, each confirmed invalid by a JSON Schema validator)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator

import jsonschema
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from evals.run.fuzz_models import VALID_FAMILY, Case
from ocm_common.json_types import Arguments, JsonSchema, JsonValue

HOSTILE_TEXT = [
    "\u202eevil\u202c \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",  # RTL override, Hebrew, Arabic
    "\U0001f489\U0001f3e5 \U0001f468\u200d\u2695\ufe0f vaccine \U0001f9ea",  # emoji, ZWJ sequence
    "' OR 1=1; DROP TABLE opa_sections; --",
    '"unbalanced quote',
    "*",
    "consent NEAR(",
    "care OR",
    "-screening",
    "NOT AND OR",
    "../../../../etc/passwd",
    "..\\..\\windows\\system32",
    "%00%2e%2e%2f",
]
CONTROL_TEXT = ["abc\x00def", "\x00", "line\x07bell", "esc\x1b[31m", "del\x7f"]
BLANK_TEXT = ["", " ", "   ", "\t\n", "\u00a0\u2003"]
ONE_MB = "a" * (1 << 20)


def _type_of(node: JsonSchema) -> set[str]:
    kind = node.get("type")
    if isinstance(kind, list):
        return set(kind)
    if kind:
        return {kind}
    if "enum" in node:
        return ({type(v).__name__ for v in node["enum"]} & {"str"} and {"string"}) or set()
    return set()


WRONG_VALUES: dict[str, list[JsonValue]] = {
    "string": [12345, 3.5, True, ["a"], {"a": 1}],
    "integer": ["5", 2.5, True, [1], {"n": 1}],
    "number": ["5", True, [1.0], {"n": 1}],
    "boolean": ["true", 1, 0, ["x"], {"b": True}],
    "array": ['["a"]', 7, True, {"a": 1}],
    "object": ["{}", 7, True, ["a"]],
}


def _string_fields(schema: JsonSchema, prefix: str = "") -> Iterator[tuple[str, JsonSchema]]:
    """Every string-valued place (top-level fields, nested object fields, array items)."""
    for name, node in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        kinds = _type_of(node)
        if "string" in kinds:
            yield path, node
        if "object" in kinds:
            yield from _string_fields(node, f"{path}.")
        items = _items(node)
        if "array" in kinds and "string" in _type_of(items):
            yield f"{path}[0]", items


def _items(node: JsonSchema) -> JsonSchema:
    """An array node's one item schema; {} when absent (or a tuple's list of schemas)."""
    items = node.get("items")
    return items if isinstance(items, dict) else {}


def _set_path(args: Arguments, path: str, value: JsonValue) -> Arguments:
    out = copy.deepcopy(args)
    parts = [p for p in re.split(r"(\.|\[0\])", path) if p and p != "."]
    node = out
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "[0]":
            continue
        nxt = parts[i + 1] if not last else None
        if last:
            node[part] = value
        elif nxt == "[0]":
            items = node.get(part)
            if not isinstance(items, list) or not items:
                items = [None]
                node[part] = items
            if i + 1 == len(parts) - 1:
                items[0] = value
                return out
            first = items[0]
            if not isinstance(first, dict):
                first = {}
                items[0] = first
            node = first
        else:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
    return out


class Mutations:
    """Schema-driven ways to break a valid argument object; each returns (family, args, fields)
    or None when the schema gives it nothing to break."""

    def __init__(self, schema: JsonSchema):
        self.schema = schema
        self.props: dict[str, JsonSchema] = schema.get("properties") or {}
        # formats (date, uri, ...) are asserted: a value breaking its format is no valid case
        self.validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )

    def is_valid(self, args: Arguments) -> bool:
        return self.validator.is_valid(args)

    def families(self) -> list[str]:
        """The families this schema can refuse. A text family needs a string field whose
        schema limits it (a huge string needs `maxLength`; blank text and control characters a
        `pattern` or `minLength`): without one every such case is valid, and hypothesis would
        spend its whole budget drawing cases it must throw away."""
        limits = {k for _, node in _string_fields(self.schema) for k in node}
        text = {
            "huge_string": "maxLength" in limits,
            "control_chars": "pattern" in limits,
            "blank_text": bool({"pattern", "minLength"} & limits),
        }
        # extra arguments are an error only where the schema says so (additionalProperties)
        closed = self.schema.get("additionalProperties") is False
        out = [
            "wrong_type",
            *(["extra_field"] if closed else []),
            *(family for family, applies in text.items() if applies),
            *(["two_problems"] if closed else []),
        ]
        if self.schema.get("required") or self.schema.get("anyOf"):
            out.append("missing_required")
        if any({"integer", "number"} & _type_of(n) for n in self.props.values()):
            out.append("out_of_range")
        if any("enum" in n or "enum" in (n.get("items") or {}) for n in self.props.values()):
            out.append("unknown_enum")
        if any("maxItems" in n for n in self.props.values()):
            out.append("too_many_items")
        if not self.props:
            out = [*(["extra_field"] if closed else []), "wrong_type_arguments"]
        return out

    def apply(
        self, family: str, base: Arguments, draw: st.DrawFn
    ) -> tuple[Arguments, list[str]] | None:
        props = sorted(self.props)
        if family == "wrong_type":
            name = draw(st.sampled_from(props))
            kinds = _type_of(self.props[name]) or {"string"}
            value = draw(st.sampled_from(WRONG_VALUES[sorted(kinds)[0]]))
            return {**base, name: value}, [name]
        if family == "wrong_type_arguments":
            wrong: list[JsonValue] = [[1], "x", 3]
            return {"arguments": draw(st.sampled_from(wrong))}, ["arguments"]
        if family == "extra_field":
            name = "zz_" + draw(st.text("abcdefghij_", min_size=1, max_size=8))
            odd: list[JsonValue] = [1, "x", None, [1]]
            return {**base, name: draw(st.sampled_from(odd))}, [name]
        if family == "missing_required":
            required = list(self.schema.get("required") or [])
            if required:
                name = draw(st.sampled_from(required))
                return {k: v for k, v in base.items() if k != name}, [name]
            names = {f for alt in self.schema.get("anyOf", []) for f in alt.get("required", [])}
            return {k: v for k, v in base.items() if k not in names}, sorted(names)[:1]
        if family == "out_of_range":
            numeric = [p for p in props if {"integer", "number"} & _type_of(self.props[p])]
            name = draw(st.sampled_from(numeric))
            node = self.props[name]
            options: list[int | float] = []
            if "maximum" in node:
                options += [node["maximum"] + 1, node["maximum"] * 1000 + 7]
            if "minimum" in node:
                options += [node["minimum"] - 1, -(10**12)]
            if not options:
                return None
            value = draw(st.sampled_from(options))
            if "integer" in _type_of(node):
                value = int(value)
            return {**base, name: value}, [name]
        if family == "unknown_enum":
            enums = [
                p
                for p in props
                if "enum" in self.props[p] or "enum" in (self.props[p].get("items") or {})
            ]
            name = draw(st.sampled_from(enums))
            bad = draw(st.sampled_from(["not-a-value", "ALL", "", "drop table", "\u00e9"]))
            if "enum" in self.props[name]:
                return {**base, name: bad}, [name]
            return {**base, name: [bad]}, [name]
        if family == "too_many_items":
            arrays = [p for p in props if "maxItems" in self.props[p]]
            name = draw(st.sampled_from(arrays))
            node = self.props[name]
            item = _sample_item(_items(node))
            return {**base, name: [item] * (int(node["maxItems"]) + 1)}, [name]
        if family in ("huge_string", "control_chars", "blank_text"):
            places = list(_string_fields(self.schema))
            if not places:
                return None
            path, _node = draw(st.sampled_from(places))
            pool = {
                "huge_string": [ONE_MB],
                "control_chars": CONTROL_TEXT,
                "blank_text": BLANK_TEXT,
            }[family]
            return _set_path(base, path, draw(st.sampled_from(pool))), [path]
        if family == "two_problems":
            first = draw(
                st.sampled_from(
                    [f for f in self.families() if f not in ("two_problems", "missing_required")]
                )
            )
            one = self.apply(first, base, draw)
            if one is None:
                return None
            args, fields = one
            extra = "zz_also_unknown"
            return {**args, extra: 1}, [*fields, extra]
        return None


def _sample_item(node: JsonSchema) -> JsonValue:
    if "enum" in node:
        return node["enum"][0]
    kinds = _type_of(node)
    if "integer" in kinds or "number" in kinds:
        return node.get("minimum", 1)
    if "string" in kinds:
        return "C124" if node.get("pattern", "").startswith("^[A-Z]") else "item"
    return "item"


def arguments_from(schema: JsonSchema) -> st.SearchStrategy[Arguments]:
    """hypothesis-jsonschema's strategy for an object schema (its stubs type the schema as a
    plain dict of JSON values and what it draws as any JSON value)."""
    return from_schema(schema)  # type: ignore[arg-type, return-value]


def valid_strategy(schema: JsonSchema) -> st.SearchStrategy[Arguments]:
    """Valid arguments from the published schema, plus the same with hostile text put into a
    string field (kept as a valid case only when the schema still accepts it)."""
    if not schema.get("properties"):
        return st.just({})  # a tool without arguments has one valid call
    base = arguments_from(schema)
    places = list(_string_fields(schema))
    if not places:
        return base

    @st.composite
    def hostile(draw: st.DrawFn) -> Arguments:
        args = draw(base)
        path, _ = draw(st.sampled_from(places))
        return _set_path(args, path, draw(st.sampled_from(HOSTILE_TEXT)))

    return st.one_of(base, hostile())


def valid_cases(name: str, schema: JsonSchema, mutations: Mutations) -> st.SearchStrategy[Case]:
    """Schema-valid calls; hostile text the schema refuses is no valid case (the invalid
    families cover it), so hypothesis draws again."""

    def case(args: Arguments) -> Case:
        text = json.dumps(args, ensure_ascii=False)
        family = "hostile_text" if any(h in text for h in HOSTILE_TEXT) else VALID_FAMILY
        return Case(name, "valid", family, args)

    return valid_strategy(schema).filter(mutations.is_valid).map(case)


def invalid_cases(
    name: str, mutations: Mutations, family: str, valid_args: st.SearchStrategy[Arguments]
) -> st.SearchStrategy[Case]:
    """Valid arguments broken by one family's mutation, each confirmed invalid by the schema."""

    @st.composite
    def made(draw: st.DrawFn) -> Case | None:
        broken = mutations.apply(family, draw(valid_args), draw)
        if broken is None or mutations.is_valid(broken[0]):
            return None
        return Case(name, "invalid", family, broken[0], broken[1])

    return made().filter(lambda c: c is not None)  # type: ignore[return-value]
