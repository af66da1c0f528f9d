"""A contract diff of two tool surfaces (what each backend published in ``tools/list``).

Tools missing or extra, and for each shared tool every difference in what it publishes, each
at a JSON-pointer path (RFC 6901) with local ``$ref``s resolved: in the input and output JSON
Schemas, properties added or removed (a removed one that reappears under another name with
the same schema is named as a possible rename), ``type`` / ``enum`` / ``required`` /
``const``, nullability, numeric and string constraints, ``default``, the texts a model reads
(``title``, ``description``, ``examples``) at every level, subschemas (``anyOf`` and the
like, ``additionalProperties``, ``patternProperties``) and any other keyword, so no
published difference is left out; at the tool level its title, description, annotations and
any other member (``execution``, ``_meta``, ...).

Each change is marked by what it matters for:

- ``compatibility``: breaking when a client written against A could fail against B (for
  inputs, a new required argument, a removed argument, a narrowed type or enum, a tightened
  bound, null no longer accepted; for outputs, a removed field, a changed type, a field no
  longer required, enum values A never produced, null now possible; an annotation that makes
  the tool less safe to call unattended; a tool that now requires tasks), or worth a look
  without being breaking (a changed default, an unknown keyword);
- ``poisoning`` (shown as **for review**): text a model reads, where tool poisoning hides: a
  changed title, description or examples at any level, every text of an added argument or
  tool (each at its own pointer, old -> new in full) and the added argument or tool itself
  (its name is read too); **suspicious** when the new text adds what
  :func:`contract_text.suspicion` looks for (the security check's poisoning patterns, a
  request for the conversation, file contents, credentials or environment variables, hiding
  something from the user, instruction-like wording, invisible characters).

Run logs' ``tools.json`` surfaces carry only the schemas, so their diffs cover those.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from evals.contract_text import name_words, suspicion

Side = Literal["inputSchema", "outputSchema"]
Concern = Literal["compatibility", "poisoning", ""]
Kind = Literal["added", "removed", "changed"]
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
    concern: Concern = ""  # what the change matters for (a breaking one: compatibility)
    note: str = ""  # why it is suspicious, or a possible rename
    suspicious: bool = False  # text that adds instruction-like wording

    def __post_init__(self) -> None:
        if self.breaking and not self.concern:
            object.__setattr__(self, "concern", "compatibility")

    def describe(self) -> str:
        if self.kind == "changed":
            text = f"{self.what} changed: {_short(self.before)} -> {_short(self.after)}"
        else:
            value = self.after if self.kind == "added" else self.before
            text = f"{self.what} {self.kind}" + (f": {_short(value)}" if value is not None else "")
        return f"{text} ({self.note})" if self.note else text

    @property
    def review(self) -> bool:
        """Text a model reads (or a new argument or tool): to be read by a person."""
        return self.concern == "poisoning" or self.suspicious

    @property
    def marks(self) -> str:
        """``compatibility`` / ``compatibility, breaking`` / ``for review`` /
        ``for review, suspicious`` (a new required argument may be breaking and suspicious)."""
        marks = ["compatibility"] if self.concern == "compatibility" else []
        marks += ["breaking"] if self.breaking else []
        marks += ["for review"] if self.review else []
        marks += ["suspicious"] if self.suspicious else []
        return ", ".join(marks)


def _kind(a: Any, b: Any) -> Kind:
    return "added" if a is None else "removed" if b is None else "changed"


def text_change(pointer: str, what: str, before: Any, after: Any) -> Change:
    """A changed title, description or examples: marked for poisoning review, suspicious
    when it adds instruction-like wording."""
    why = suspicion(before, after)
    return Change(
        pointer, _kind(before, after), what, before, after,
        concern="poisoning", note=why, suspicious=bool(why),
    )  # fmt: skip


def added_entry(pointer: str, what: str, name: str, breaking: bool = False) -> Change:
    """An added argument or tool: for review (a model reads its name and fills it in),
    suspicious when its name, read as words, asks for what :func:`suspicion` looks for; a
    breaking one (a new required argument) stays a compatibility change."""
    why = suspicion(None, name_words(name))
    return Change(
        pointer, "added", what, None, name, breaking,
        concern="compatibility" if breaking else "poisoning", note=why, suspicious=bool(why),
    )  # fmt: skip


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
        kind = _kind(None if "default" not in a else before, None if "default" not in b else after)
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
                Change(f"{pointer}/{escape(key)}", _kind(a.get(key), b.get(key)), what,
                       a.get(key), b.get(key), concern="compatibility")
            )  # fmt: skip


def _walk_subschemas(
    a: dict[str, Any], b: dict[str, Any], pointer: str, side: Side, out: list[Change]
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
                    _kind(sub_a, sub_b),
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
                    _kind(list_a, list_b),
                    key,
                    list_a,
                    list_b,
                    concern="compatibility",
                )
            )
    for key in SUBSCHEMA_MAPS:
        map_a, map_b = a.get(key) or {}, b.get(key) or {}
        for name in sorted(set(map_a) | set(map_b)):
            where = f"{pointer}/{key}/{escape(name)}"
            if name in map_a and name in map_b:
                _walk(map_a[name], map_b[name], where, side, out)
            else:
                out.append(
                    Change(
                        where,
                        _kind(map_a.get(name), map_b.get(name)),
                        key,
                        map_a.get(name),
                        map_b.get(name),
                        concern="compatibility",
                    )
                )


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


def _renamed(removed: Any, added: dict[str, Any]) -> str | None:
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
        where = f"{pointer}/{escape(key)}"
        if isinstance(before, str) or isinstance(after, str):  # title: text a model reads
            out.append(text_change(where, f"annotation {key}", before, after))
            continue
        breaking = less_safe and key in HINT_DEFAULTS
        out.append(Change(where, kind, f"annotation {key}", before, after, breaking))
    return out


TOOL_MEMBERS = {"name", "title", "description", "annotations", "inputSchema", "outputSchema"}


def member_changes(a: Mapping[str, Any], b: Mapping[str, Any], pointer: str) -> list[Change]:
    """Members of a tool entry besides its texts, annotations and schemas (``execution``,
    ``_meta``, ``icons``, ...): a tool that now requires tasks is breaking (a client that
    calls it plainly fails), any other difference is shown."""
    out: list[Change] = []
    for key in sorted((set(a) | set(b)) - TOOL_MEMBERS):
        before, after = a.get(key), b.get(key)
        if before == after:
            continue
        support = [
            (v or {}).get("taskSupport") if isinstance(v, dict) else None for v in (before, after)
        ]
        breaking = key == "execution" and support[1] == "required" and support[0] != "required"
        out.append(
            Change(f"{pointer}/{escape(key)}", _kind(before, after), key, before, after,
                   breaking, concern="compatibility")
        )  # fmt: skip
    return out


def tool_texts(name: str, entry: Mapping[str, Any]) -> list[Change]:
    """An added tool: the tool itself and every text it publishes (title, description, an
    annotation's title, its schemas' texts), each for review."""
    where = f"/{escape(name)}"
    out = [added_entry(where, "tool", name)]
    out += [
        text_change(f"{where}/{key}", key, None, entry[key])
        for key in TEXTS
        if entry.get(key) is not None
    ]
    for key, value in sorted((entry.get("annotations") or {}).items()):
        if isinstance(value, str):
            out.append(
                text_change(f"{where}/annotations/{escape(key)}", f"annotation {key}", None, value)
            )
    for side in ("inputSchema", "outputSchema"):
        schema = entry.get(side)
        if isinstance(schema, dict):
            out += added_texts(resolve(schema, schema), f"{where}/{side}")
    return out


def diff_surfaces(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> list[Change]:
    """Every change from surface ``a`` to surface ``b`` (``{tool: {inputSchema, outputSchema}}``,
    optionally with ``title``, ``description``, ``annotations`` and any other member of the
    tool's ``tools/list`` entry)."""
    changes: list[Change] = []
    for tool in sorted(a):
        if tool not in b:
            changes.append(Change(f"/{escape(tool)}", "removed", "tool", tool, None, True))
    for tool in sorted(b):
        if tool not in a:
            changes += tool_texts(tool, b[tool])
    for tool in sorted(set(a) & set(b)):
        for text in TEXTS:
            before, after = a[tool].get(text), b[tool].get(text)
            if before != after:
                changes.append(text_change(f"/{escape(tool)}/{text}", text, before, after))
        changes += annotation_changes(
            a[tool].get("annotations"), b[tool].get("annotations"), f"/{escape(tool)}/annotations"
        )
        changes += member_changes(a[tool], b[tool], f"/{escape(tool)}")
        for side in ("inputSchema", "outputSchema"):
            changes += schema_changes(
                a[tool].get(side), b[tool].get(side), f"/{escape(tool)}/{side}", side
            )
    return changes


def to_json(changes: list[Change]) -> list[dict[str, Any]]:
    return [asdict(c) for c in changes]
