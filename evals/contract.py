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

import copy
from collections.abc import Mapping
from typing import Any, Literal

from evals.contract_change import Change, ChangeJson, added_entry, change_kind, text_change
from evals.contract_schema import added_texts, schema_changes
from evals.json_pointer import escape, resolve

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
            Change(f"{pointer}/{escape(key)}", change_kind(before, after), key, before, after,
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


def to_json(changes: list[Change]) -> list[ChangeJson]:
    """Each change's fields in order, its values copied (as ``dataclasses.asdict`` does)."""
    return [
        {
            "pointer": c.pointer,
            "kind": c.kind,
            "what": c.what,
            "before": copy.deepcopy(c.before),
            "after": copy.deepcopy(c.after),
            "breaking": c.breaking,
            "concern": c.concern,
            "note": c.note,
            "suspicious": c.suspicious,
        }
        for c in changes
    ]
