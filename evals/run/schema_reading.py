"""Reading a JSON Schema another server published: a JSON object where a schema belongs (an
``inputSchema``, a ``$ref`` target, a union's alternative, ``items``) is read as a
:class:`~ocm_common.json_types.JsonSchema`, and each keyword is narrowed where it is read."""

from __future__ import annotations

from typing import Literal, TypeGuard

from ocm_common.json_types import JsonSchema

# The union keywords whose alternatives are schemas (or, at an object's root, required sets).
UNIONS: tuple[Literal["anyOf"], Literal["oneOf"]] = ("anyOf", "oneOf")


def is_schema(value: object) -> TypeGuard[JsonSchema]:
    """``value`` is a JSON object, so it is read as a schema."""
    return isinstance(value, dict)


def schema_of(value: object) -> JsonSchema:
    """A schema member as read: a shallow copy of the object, ``{}`` when absent (or not one)."""
    return {**value} if is_schema(value) else {}
