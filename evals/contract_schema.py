"""The schema half of the contract diff: every difference between two JSON Schemas (an input or
an output schema of one tool), each at its JSON pointer, judged breaking by which side it is on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from evals.contract_change import Change, added_entry, change_kind, text_change
from evals.json_pointer import escape, resolve
from ocm_common.json_types import JsonObject, JsonValue

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


def _nullable(schema: Any) -> bool:
    variants = schema.get("anyOf") if isinstance(schema, dict) else None
    return isinstance(variants, list) and any(
        isinstance(v, dict) and v.get("type") == "null" for v in variants
    )


TEXT_KEYWORDS = ("title", "description", "examples")
SUBSCHEMA_KEYS = (
    "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
    "unevaluatedProperties", "unevaluatedItems",
)  # fmt: skip
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_MAPS = ("patternProperties", "dependentSchemas")
HANDLED = {
    "type", "enum", "const", "required", "properties", "items", "default",
    *TEXT_KEYWORDS, *CONSTRAINTS, *SUBSCHEMA_KEYS, *SUBSCHEMA_LISTS, *SUBSCHEMA_MAPS,
}  # fmt: skip


def _walk(a: Any, b: Any, pointer: str, side: Side, out: list[Change]) -> None:
    if not isinstance(a, dict) or not isinstance(b, dict):
        if a != b:
            out.append(Change(pointer, "changed", "schema", a, b, breaking=True))
        return
    is_input = side == "inputSchema"
    for key in TEXT_KEYWORDS:
        if a.get(key) != b.get(key):
            out.append(text_change(f"{pointer}/{key}", key, a.get(key), b.get(key)))
    if a.get("default") != b.get("default") or ("default" in a) != ("default" in b):
        before, after = a.get("default"), b.get("default")
        kind = change_kind(
            None if "default" not in a else before, None if "default" not in b else after
        )
        out.append(
            Change(f"{pointer}/default", kind, "default", before, after, concern="compatibility")
        )
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
            renamed = _renamed(
                props_a[name], {k: v for k, v in props_b.items() if k not in props_a}
            )
            note = f"renamed to {renamed!r}?" if renamed else ""
            out.append(Change(where, "removed", "property", name, None, True, note=note))
            continue
        null_a, null_b = _nullable(props_a[name]), _nullable(props_b[name])
        if null_a != null_b:
            breaking = null_a if is_input else null_b
            out.append(Change(f"{where}/anyOf", "changed", "nullable", null_a, null_b, breaking))
        _walk(_nullable_variant(props_a[name]), _nullable_variant(props_b[name]), where, side, out)
    for name in props_b:
        if name not in props_a:
            where = f"{pointer}/properties/{escape(name)}"
            out.append(added_entry(where, "property", name, is_input and name in req_b))
            out += added_texts(props_b[name], where)
    items_a, items_b = a.get("items"), b.get("items")
    if isinstance(items_a, dict) and isinstance(items_b, dict):
        _walk(_nullable_variant(items_a), _nullable_variant(items_b), f"{pointer}/items", side, out)
    elif (items_a is None) != (items_b is None):
        out.append(Change(f"{pointer}/items", "changed", "items", items_a, items_b, True))
    _walk_subschemas(a, b, pointer, side, out)
    for key in sorted((set(a) | set(b)) - HANDLED):
        if a.get(key) != b.get(key):
            what = f"keyword {key}"
            out.append(
                Change(f"{pointer}/{escape(key)}", change_kind(a.get(key), b.get(key)), what,
                       a.get(key), b.get(key), concern="compatibility")
            )  # fmt: skip


def _walk_subschemas(
    a: JsonObject, b: JsonObject, pointer: str, side: Side, out: list[Change]
) -> None:
    """Subschemas other than properties and items: walked where both sides have one of the
    same shape, otherwise shown as one change (their type effects are judged at ``type``)."""
    for key in SUBSCHEMA_KEYS:
        sub_a, sub_b = a.get(key), b.get(key)
        if isinstance(sub_a, dict) and isinstance(sub_b, dict):
            _walk(sub_a, sub_b, f"{pointer}/{key}", side, out)
        elif sub_a != sub_b and (
            isinstance(sub_a, dict) or isinstance(sub_b, dict) or key not in CONSTRAINTS
        ):
            out.append(
                Change(
                    f"{pointer}/{key}",
                    change_kind(sub_a, sub_b),
                    key,
                    sub_a,
                    sub_b,
                    concern="compatibility",
                )
            )
    for key in SUBSCHEMA_LISTS:
        list_a, list_b = a.get(key), b.get(key)
        if isinstance(list_a, list) and isinstance(list_b, list) and len(list_a) == len(list_b):
            for index, (sub_a, sub_b) in enumerate(zip(list_a, list_b, strict=True)):
                _walk(sub_a, sub_b, f"{pointer}/{key}/{index}", side, out)
        elif list_a != list_b:
            out.append(
                Change(
                    f"{pointer}/{key}",
                    change_kind(list_a, list_b),
                    key,
                    list_a,
                    list_b,
                    concern="compatibility",
                )
            )
    for key in SUBSCHEMA_MAPS:
        map_a, map_b = _members(a.get(key)), _members(b.get(key))
        for name in sorted(set(map_a) | set(map_b)):
            where = f"{pointer}/{key}/{escape(name)}"
            if name in map_a and name in map_b:
                _walk(map_a[name], map_b[name], where, side, out)
            else:
                out.append(
                    Change(
                        where,
                        change_kind(map_a.get(name), map_b.get(name)),
                        key,
                        map_a.get(name),
                        map_b.get(name),
                        concern="compatibility",
                    )
                )


def _members(value: JsonValue) -> JsonObject:
    """A keyword's named subschemas (``patternProperties``); a missing or malformed one has none."""
    return value if isinstance(value, dict) else {}


def schema_texts(schema: Any, pointer: str) -> list[tuple[str, str, Any]]:
    """(pointer, keyword, value) of every title, description and examples in ``schema`` and
    its subschemas (properties, items, ``anyOf`` and the like), in document order."""
    if not isinstance(schema, dict):
        return []
    found = [(f"{pointer}/{key}", key, schema[key]) for key in TEXT_KEYWORDS if key in schema]
    for key in ("properties", *SUBSCHEMA_MAPS):
        members = schema.get(key)
        if isinstance(members, dict):
            for name, sub in members.items():
                found += schema_texts(sub, f"{pointer}/{key}/{escape(name)}")
    for key in ("items", *SUBSCHEMA_KEYS):
        found += schema_texts(schema.get(key), f"{pointer}/{key}")
    for key in SUBSCHEMA_LISTS:
        subs = schema.get(key)
        if isinstance(subs, list):
            for index, sub in enumerate(subs):
                found += schema_texts(sub, f"{pointer}/{key}/{index}")
    return found


def added_texts(schema: Any, pointer: str) -> list[Change]:
    """Every text of an added schema (an argument, an output field), each an added text
    change: shown in full for review, suspicious by :func:`suspicion`."""
    return [
        text_change(where, key, None, value) for where, key, value in schema_texts(schema, pointer)
    ]


def _without_texts(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_texts(v) for k, v in schema.items() if k not in TEXT_KEYWORDS}
    if isinstance(schema, list):
        return [_without_texts(v) for v in schema]
    return schema


def _renamed(removed: Any, added: JsonObject) -> str | None:
    """The one added property whose schema (texts aside) equals the removed one's."""
    same = [
        name for name, schema in added.items() if _without_texts(schema) == _without_texts(removed)
    ]
    return same[0] if len(same) == 1 else None


def schema_changes(
    a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, pointer: str, side: Side
) -> list[Change]:
    """Changes from schema ``a`` to ``b``; ``pointer`` is where the schema itself sits."""
    if a is None and b is None:
        return []
    if a is None or b is None:
        change = Change(pointer, "added" if a is None else "removed", side, a, b, b is None)
        return [change, *(added_texts(resolve(b, b), pointer) if b is not None else [])]
    out: list[Change] = []
    _walk(resolve(a, a), resolve(b, b), pointer, side, out)
    return out
