"""A contract diff of two tool surfaces (what each backend published in ``tools/list``).

Tools missing or extra, and for each shared tool the changes between its input and output
JSON Schemas, each at a JSON-pointer path (RFC 6901) into the schema with local ``$ref``s
resolved: properties added or removed, ``type`` / ``enum`` / ``required`` / ``const`` and
numeric or string constraints changed. A change is marked breaking when a client written
against A could fail against B: for inputs, a new required argument, a removed argument, a
narrowed type or enum or a tightened bound; for outputs, a removed field, a changed type, a
field no longer required, or enum values that A never produced.

Where the surfaces carry them (a live ``tools/list``; run logs' ``tools.json`` do not), the
tools' title, description and annotations are compared too: a changed text is shown, not
breaking; an annotation that makes a tool less safe to call unattended (``readOnlyHint`` no
longer true, ``destructiveHint`` now true) is breaking, since clients decide on it whether
to ask the user first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

Side = Literal["inputSchema", "outputSchema"]
CONSTRAINTS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
    "additionalProperties",
)
# For inputs, a larger minimum or a smaller maximum rejects calls A accepted.
TIGHTER_IF_LARGER = {"minimum", "exclusiveMinimum", "minLength", "minItems"}
TIGHTER_IF_SMALLER = {"maximum", "exclusiveMaximum", "maxLength", "maxItems"}


@dataclass(frozen=True)
class Change:
    pointer: str
    kind: Literal["added", "removed", "changed"]
    what: str  # tool, property, type, enum, required, const, or a constraint keyword
    before: Any = None
    after: Any = None
    breaking: bool = False

    def describe(self) -> str:
        if self.kind == "changed":
            return f"{self.what} changed: {_short(self.before)} -> {_short(self.after)}"
        value = self.after if self.kind == "added" else self.before
        return f"{self.what} {self.kind}" + (f": {_short(value)}" if value is not None else "")


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape(token: str) -> str:
    """One JSON-pointer reference token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve(schema: Any, root: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """``schema`` with local ``#/...`` references replaced by their targets (cycles stop)."""
    if isinstance(schema, list):
        return [resolve(item, root, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
        target: Any = root
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token, {}) if isinstance(target, dict) else {}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return resolve(merged, root, seen | {ref})
    return {
        key: resolve(value, root, seen)
        for key, value in schema.items()
        if key not in ("$defs", "definitions")
    }


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    value = schema.get("type")
    if value is None:
        variants = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(variants, list):
            found = sorted({t for v in variants if isinstance(v, dict) for t in (_types(v) or [])})
            return found or None
        return None
    return sorted(value) if isinstance(value, list) else [value]


def _nullable_variant(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``anyOf: [X, {type: null}]`` (how pydantic spells Optional) -> X, to compare inside it."""
    variants = schema.get("anyOf")
    if isinstance(variants, list):
        real = [v for v in variants if isinstance(v, dict) and v.get("type") != "null"]
        if len(real) == 1:
            return real[0]
    return schema


def _walk(a: Any, b: Any, pointer: str, side: Side, out: list[Change]) -> None:
    if not isinstance(a, dict) or not isinstance(b, dict):
        if a != b:
            out.append(Change(pointer, "changed", "schema", a, b, breaking=True))
        return
    is_input = side == "inputSchema"
    types_a, types_b = _types(a), _types(b)
    if types_a != types_b and types_a is not None and types_b is not None:
        lost = set(types_a) - set(types_b)
        gained = set(types_b) - set(types_a)
        breaking = bool(lost) if is_input else bool(gained)
        out.append(Change(f"{pointer}/type", "changed", "type", types_a, types_b, breaking))
    elif (types_a is None) != (types_b is None):
        out.append(Change(f"{pointer}/type", "changed", "type", types_a, types_b, True))
    enum_a, enum_b = a.get("enum"), b.get("enum")
    if enum_a != enum_b:
        if enum_a is None or enum_b is None:
            out.append(Change(f"{pointer}/enum", "changed", "enum", enum_a, enum_b, True))
        else:
            removed = [v for v in enum_a if v not in enum_b]
            added = [v for v in enum_b if v not in enum_a]
            if removed:
                out.append(Change(f"{pointer}/enum", "removed", "enum", removed, None, is_input))
            if added:
                out.append(Change(f"{pointer}/enum", "added", "enum", None, added, not is_input))
    if a.get("const") != b.get("const"):
        out.append(
            Change(f"{pointer}/const", "changed", "const", a.get("const"), b.get("const"), True)
        )
    for key in CONSTRAINTS:
        before, after = a.get(key), b.get(key)
        if before == after or isinstance(before, dict) or isinstance(after, dict):
            continue
        breaking = False
        if is_input:
            if before is None or after is None:
                breaking = after is not None
            elif key in TIGHTER_IF_LARGER:
                breaking = after > before
            elif key in TIGHTER_IF_SMALLER:
                breaking = after < before
            else:
                breaking = True
        out.append(Change(f"{pointer}/{key}", "changed", key, before, after, breaking))
    req_a, req_b = set(a.get("required") or []), set(b.get("required") or [])
    for name in sorted(req_b - req_a):
        out.append(
            Change(f"{pointer}/required/{escape(name)}", "added", "required", None, name, is_input)
        )
    for name in sorted(req_a - req_b):
        out.append(
            Change(
                f"{pointer}/required/{escape(name)}",
                "removed",
                "required",
                name,
                None,
                not is_input,
            )
        )
    props_a = a.get("properties") or {}
    props_b = b.get("properties") or {}
    for name in props_a:
        where = f"{pointer}/properties/{escape(name)}"
        if name not in props_b:
            out.append(Change(where, "removed", "property", name, None, True))
        else:
            _walk(
                _nullable_variant(props_a[name]), _nullable_variant(props_b[name]), where, side, out
            )
    for name in props_b:
        if name not in props_a:
            breaking = is_input and name in req_b
            out.append(
                Change(
                    f"{pointer}/properties/{escape(name)}",
                    "added",
                    "property",
                    None,
                    name,
                    breaking,
                )
            )
    items_a, items_b = a.get("items"), b.get("items")
    if isinstance(items_a, dict) and isinstance(items_b, dict):
        _walk(_nullable_variant(items_a), _nullable_variant(items_b), f"{pointer}/items", side, out)
    elif (items_a is None) != (items_b is None):
        out.append(Change(f"{pointer}/items", "changed", "items", items_a, items_b, True))


def schema_changes(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, pointer: str, side: Side
) -> list[Change]:
    """Changes from schema ``a`` to ``b``; ``pointer`` is where the schema itself sits."""
    if a is None and b is None:
        return []
    if a is None or b is None:
        return [Change(pointer, "added" if a is None else "removed", side, a, b, b is None)]
    out: list[Change] = []
    _walk(resolve(a, a), resolve(b, b), pointer, side, out)
    return out


TEXTS = ("title", "description")


# The specification's defaults for an absent hint (tools, ToolAnnotations).
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True}


def _less_safe(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """True when B's hints (with the specification's defaults) let a client call the tool
    with less care than A's did: no longer read-only, or now destructive."""

    def hint(hints: Mapping[str, Any], key: str) -> bool:
        return bool(hints.get(key, HINT_DEFAULTS[key]))

    read_only_a, read_only_b = hint(a, "readOnlyHint"), hint(b, "readOnlyHint")
    destructive_a = not read_only_a and hint(a, "destructiveHint")
    destructive_b = not read_only_b and hint(b, "destructiveHint")
    return (read_only_a and not read_only_b) or (destructive_b and not destructive_a)


def annotation_changes(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, pointer: str
) -> list[Change]:
    """Each annotation added, removed or changed between ``a`` and ``b``; changes to the
    safety hints are breaking when they make the tool less safe to call unattended."""
    hints_a: Mapping[str, Any] = a or {}
    hints_b: Mapping[str, Any] = b or {}
    less_safe = _less_safe(hints_a, hints_b)
    out: list[Change] = []
    for key in sorted(set(hints_a) | set(hints_b)):
        before, after = hints_a.get(key), hints_b.get(key)
        if before == after:
            continue
        kind: Literal["added", "removed", "changed"] = (
            "added" if key not in hints_a else "removed" if key not in hints_b else "changed"
        )
        breaking = less_safe and key in HINT_DEFAULTS
        out.append(
            Change(f"{pointer}/{escape(key)}", kind, f"annotation {key}", before, after, breaking)
        )
    return out


def diff_surfaces(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> list[Change]:
    """Every change from surface ``a`` to surface ``b`` (``{tool: {inputSchema, outputSchema}}``,
    optionally with ``title``, ``description`` and ``annotations``)."""
    changes: list[Change] = []
    for tool in sorted(a):
        if tool not in b:
            changes.append(Change(f"/{escape(tool)}", "removed", "tool", tool, None, True))
    for tool in sorted(b):
        if tool not in a:
            changes.append(Change(f"/{escape(tool)}", "added", "tool", None, tool, False))
    for tool in sorted(set(a) & set(b)):
        for text in TEXTS:
            before, after = a[tool].get(text), b[tool].get(text)
            if before != after:
                changes.append(Change(f"/{escape(tool)}/{text}", "changed", text, before, after))
        changes += annotation_changes(
            a[tool].get("annotations"), b[tool].get("annotations"), f"/{escape(tool)}/annotations"
        )
        for side in ("inputSchema", "outputSchema"):
            changes += schema_changes(
                a[tool].get(side), b[tool].get(side), f"/{escape(tool)}/{side}", side
            )
    return changes


def to_json(changes: list[Change]) -> list[dict[str, Any]]:
    return [asdict(c) for c in changes]
