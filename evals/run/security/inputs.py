"""Arguments for the probing calls, from each tool's published inputSchema: the smallest
value that satisfies a property (so a probe changes one argument and leaves the rest
plausible), and the extreme value a property allows or, when it declares no bound, one far
past anything a tool should accept without a limit."""

from __future__ import annotations

import re

from evals.json_pointer import resolve
from evals.run.schema_reading import UNIONS, is_schema
from ocm_common.json_types import Arguments, JsonSchema, JsonValue

HUGE_INT = 10**12
HUGE_NUMBER = 1e308
HUGE_STRING = 1_000_000
HUGE_ARRAY = 10_000
STRING_CANDIDATES = ("test", "a", "1", "00000000", "a1", "2026-01-01", "x@example.org")


def plain(schema: object) -> JsonSchema:
    """The schema of one value: ``anyOf``/``oneOf`` reduced to their first non-null variant."""
    if not is_schema(schema):
        return {}
    for key in UNIONS:
        variants = schema.get(key)
        if isinstance(variants, list):
            real = [v for v in variants if is_schema(v) and v.get("type") != "null"]
            if real:
                merged: JsonSchema = {**schema}
                del merged[key]
                return plain({**merged, **real[0]})
    return schema


def kind(schema: JsonSchema) -> str | None:
    value = schema.get("type")
    if isinstance(value, list):
        value = next((t for t in value if t != "null"), None)
    if value is None and "properties" in schema:
        return "object"
    return value if isinstance(value, str) else None


def minimal(schema: object) -> JsonValue:
    """A small value valid against ``schema`` where that is easy (enum, const, type, bounds,
    simple patterns and formats); good enough to reach the code behind the argument."""
    s = plain(schema)
    if "const" in s:
        return s["const"]
    if isinstance(s.get("enum"), list) and s["enum"]:
        return s["enum"][0]
    if "default" in s and s["default"] is not None:
        return s["default"]
    t = kind(s)
    if t == "integer":
        low = s.get("minimum", s.get("exclusiveMinimum", 0))
        return int(low) + (1 if "exclusiveMinimum" in s else 0) if low > 1 else 1
    if t == "number":
        low = s.get("minimum", s.get("exclusiveMinimum", 0))
        return float(low) + (1.0 if "exclusiveMinimum" in s else 0.0) if low > 1 else 1.0
    if t == "boolean":
        return False
    if t == "array":
        count = int(s.get("minItems", 1) or 1)
        return [minimal(s.get("items") or {"type": "string"}) for _ in range(count)]
    if t == "object":
        return {name: minimal(sub) for name, sub in _required(s).items()}
    if t == "null":
        return None
    return _string(s)


def _required(schema: JsonSchema) -> dict[str, JsonSchema]:
    props = schema.get("properties") or {}
    return {n: props.get(n, {}) for n in schema.get("required") or [] if isinstance(n, str)}


def _string(s: JsonSchema) -> str:
    fmt = s.get("format")
    if fmt in ("uri", "uri-reference", "iri", "url"):
        return "file:///tmp/evals-security"
    if fmt == "date-time":
        return "2026-01-01T00:00:00Z"
    if fmt == "date":
        return "2026-01-01"
    if fmt == "email":
        return "x@example.org"
    low = int(s.get("minLength", 0) or 0)
    pattern = s.get("pattern")
    for candidate in STRING_CANDIDATES:
        text = candidate * max(1, -(-low // len(candidate)))
        if pattern is None or _matches(pattern, text):
            return text
    return "test"


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True


def base_args(input_schema: JsonSchema) -> Arguments:
    """Every required argument at its minimal value."""
    schema: JsonSchema = resolve(input_schema, input_schema)
    return {name: minimal(sub) for name, sub in _required(schema).items()}


def extreme(schema: object) -> tuple[JsonValue, str] | None:
    """The largest value or size of one argument, and how to say it, or None for a kind of
    argument where size does not apply (booleans, enums)."""
    s = plain(schema)
    if "enum" in s or "const" in s:
        return None
    t = kind(s)
    if t == "integer":
        top = s.get("maximum", s.get("exclusiveMaximum"))
        if top is None:
            return HUGE_INT, f"{HUGE_INT:.0e} (no maximum declared)"
        value = int(top) - (1 if "exclusiveMaximum" in s and "maximum" not in s else 0)
        return value, f"{value} (the declared maximum)"
    if t == "number":
        top = s.get("maximum", s.get("exclusiveMaximum"))
        if top is None:
            return HUGE_NUMBER, "1e308 (no maximum declared)"
        return float(top), f"{top} (the declared maximum)"
    if t == "string" and s.get("format") not in ("date", "date-time", "email", "uri"):
        size = min(int(s.get("maxLength", HUGE_STRING)), HUGE_STRING)
        text = ("A" * size) if not s.get("pattern") else _string(s) * max(1, size // 8)
        text = text[:size]
        how = "maxLength" if "maxLength" in s else "no maxLength declared"
        return text, f"a string of {len(text):,} characters ({how})"
    if t == "array":
        size = min(int(s.get("maxItems", HUGE_ARRAY)), HUGE_ARRAY)
        item = minimal(s.get("items") or {"type": "string"})
        how = "maxItems" if "maxItems" in s else "no maxItems declared"
        return [item] * size, f"an array of {size:,} items ({how})"
    return None
