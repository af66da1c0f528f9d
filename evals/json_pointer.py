"""JSON pointers into JSON Schemas: escaping a reference token (RFC 6901) and resolving local
``$ref``s, for the contract diff and the security probes that walk published schemas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
