"""Ids a backend gave itself, found by asking it first.

A scenario about ``source.passages`` or ``opa.get_section`` needs an id, and ids are a
backend's own: ours are ``ohip:commentary:...``, another team's may be ``passage-17``. A scenario
with ``ids_from`` first calls the same backend's search (``tool`` with ``args``), picks the
objects under ``path`` that name ``key`` (a public key such as a fee code, a DIN, an ADP
section or an official URL, or any text) and reads their ``id`` field; those ids become the
argument ``into`` of the scenario's own call. So the scenario works on any corpus, and a
backend that cannot say where a fact is fails once, named, instead of in a cascade of
positional mismatches.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evals.run.jsonpath import resolve
from evals.run.outcome import CallOutcome
from evals.run.public_keys import public_key
from ocm_common.json_types import Arguments, JsonObject, JsonSchema, as_json


class IdLookup(BaseModel):
    """Where a scenario's id argument comes from: the same backend's answer to a search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    args: Arguments = Field(default_factory=dict)
    path: str = Field(min_length=1, description="objects to choose from, e.g. citations[*]")
    key: str | list[str] | None = Field(
        default=None, description="public key(s) or text the chosen object must all name"
    )
    id: str = Field(min_length=1, description="field of a chosen object holding the id")
    into: str = Field(min_length=1, description="argument of the scenario's call to fill")
    limit: int = Field(default=1, ge=1, le=50)
    grade: int | None = Field(
        default=None, ge=1, le=3, description="relevance grade given to the ids found"
    )

    @field_validator("args", mode="before")
    @classmethod
    def _json_args(cls, args: object) -> object:
        return as_json(args)

    def describe(self) -> str:
        named = f" naming {self.key!r}" if self.key else ""
        return f"{self.tool}({self.args}) -> {self.path}{named} -> {self.id}"


class LookupFailed(Exception):
    """The backend's own answer held no object naming the key: one failure, named once."""


def _strings(node: Any) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def names(node: Any, key: str) -> int:
    """How well ``node`` names ``key``: 2 when a string in it is the same public key in any
    spelling (or, for text that names none, the same text ignoring case), 1 when a string only
    contains the text, 0 when nothing names it."""
    wanted = public_key(key)
    folded = key.strip().casefold()
    best = 0
    for text in _strings(node):
        if wanted is not None:
            if public_key(text) == wanted:
                return 2
        elif text.strip().casefold() == folded:
            return 2
        elif folded in text.casefold():
            best = 1
    return best


def pick_ids(lookup: IdLookup, result: Any) -> list[str]:
    """The ids of the objects under ``lookup.path`` naming every key, exact names first, then
    in the order the backend gave them."""
    keys = [lookup.key] if isinstance(lookup.key, str) else list(lookup.key or [])
    ranked: list[tuple[int, int, str]] = []
    for position, node in enumerate(resolve(result, lookup.path)):
        scores = [names(node, key) for key in keys]
        if not all(scores):
            continue
        for ident in resolve(node, lookup.id) if isinstance(node, dict) else []:
            if isinstance(ident, str) and ident:
                ranked.append((-sum(scores), position, ident))
    found: list[str] = []
    for _, _, ident in sorted(ranked):
        if ident not in found:
            found.append(ident)
    return found[: lookup.limit]


def fill(args: Arguments, into: str, ids: list[str], schema: JsonSchema | None) -> Arguments:
    """``args`` with the ids put in ``into``: before the ids already there where the tool's
    input schema takes an array (without a schema: where a list is there already or the name
    is a plural of id, ``chunk_ids``), else the first id alone."""
    prop = ((schema or {}).get("properties") or {}).get(into) or {}
    plural = isinstance(args.get(into), list) or into.endswith("ids")
    if prop.get("type") == "array" or (not prop and plural):
        present = args.get(into) or []
        kept = [i for i in (present if isinstance(present, list) else [present]) if i not in ids]
        return {**args, into: [*ids, *kept]}
    return {**args, into: ids[0]}


def lookup_failure(lookup: IdLookup, reason: str) -> str:
    return f"could not find the id to ask for: {lookup.describe()}: {reason}"


CallTool = Callable[[str, Arguments], Awaitable[JsonObject | None]]


def answers_of(call: Callable[[str, Arguments], Awaitable[CallOutcome]]) -> CallTool:
    """A target's ``call_tool`` as a lookup asks it: the structured answer, None on an error."""

    async def ask(tool: str, args: Arguments) -> JsonObject | None:
        asked = await call(tool, args)
        return None if asked.is_error else asked.structured

    return ask


async def resolve_args(
    call_tool: CallTool,
    lookups: list[IdLookup],
    args: Arguments,
    input_schema: JsonSchema | None = None,
) -> Arguments | None:
    """``args`` with every lookup's ids filled in by asking ``call_tool`` (which returns the
    structured result, or None on an error); None when a lookup finds nothing. For callers
    outside a run (fuzz examples, store comparisons) that need a call the backend can answer."""
    for lookup in reversed(lookups):
        result = await call_tool(lookup.tool, dict(lookup.args))
        ids = pick_ids(lookup, result) if result is not None else []
        if not ids:
            return None
        args = fill(args, lookup.into, ids, input_schema)
    return args
