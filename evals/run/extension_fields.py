"""Checks on fields the spec does not ask for.

The reference server answers with more than the spec (seeds 000-002) gives a tool: a stale
document's ``staleness`` label, a provenance list, a section's heading. Its golden checks read
some of those fields. A backend written to the spec publishes none of them, and failing it for
that would be red for our wording, not for its facts. So a tool's descriptor lists its
``extensions``, and a check that reads one is "not checked" on a backend that neither declares
the field in its published outputSchema nor answers it. A backend that declares the field (ours
does) is judged on it, so losing it is still a failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from evals.run.checks import CheckSpec
from evals.run.jsonpath import Key, parse, resolve
from evals.run.schema_reading import UNIONS, is_schema
from ocm_common.json_types import JsonSchema

# A path with every list step as "any element": the shape, not the position, is what the spec names.
Shape = tuple[str, ...]
ANY = "[*]"


def shape(path: str) -> Shape:
    if not path.strip() or path.strip() == "$":
        return ()
    return tuple(step.name if isinstance(step, Key) else ANY for step in parse(path))


def read_shapes(spec: CheckSpec, prefix: Shape = ()) -> Iterator[Shape]:
    """Every result path a check reads (its own and, for item checks, its item's under it),
    and the field it says it follows from."""
    here = prefix + shape(spec.path)
    yield here
    if spec.follows_from:
        yield shape(spec.follows_from)
    if spec.item is not None:
        yield from read_shapes(spec.item, (*here, ANY))


def _resolved(node: JsonSchema, root: JsonSchema) -> list[JsonSchema]:
    """The schema and, through ``$ref`` and unions, every alternative it stands for (the
    published objects themselves, not copies)."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return _resolved(target, root) if is_schema(target) else []
    found = [node]
    for union in UNIONS:
        for alternative in node.get(union) or []:
            if is_schema(alternative):
                found += _resolved(alternative, root)
    return found


def nodes_at(schema: JsonSchema | None, steps: Shape) -> list[JsonSchema]:
    """The schema objects the published schema gives the path (a list step: the items'
    schema); none when it does not name every step."""
    if not schema:
        return []
    current = _resolved(schema, schema)
    for step in steps:
        following: list[JsonSchema] = []
        for node in current:
            if step == ANY:
                member = node.get("items")
            else:
                props = node.get("properties")
                member = props.get(step) if isinstance(props, dict) else None
            if is_schema(member):
                following += _resolved(member, schema)
        current = following
    return current


def declares(schema: JsonSchema | None, steps: Shape) -> bool:
    """The published schema names every step of the path."""
    return bool(nodes_at(schema, steps))


def unpublished_extension(
    spec: CheckSpec, extensions: Sequence[str], schema: JsonSchema | None, data: Any
) -> str | None:
    """The extension this check reads that the backend neither declares nor answers, if any."""
    if not extensions:
        return None
    for extension in extensions:
        wanted = shape(extension)
        reads = any(read[: len(wanted)] == wanted for read in read_shapes(spec))
        if not reads or declares(schema, wanted):
            continue
        if not resolve(data, extension):
            return extension
    return None


def not_published_reason(extension: str) -> str:
    return (
        f"it reads {extension}, which this project adds beyond the spec; the backend neither "
        "declares it in its outputSchema nor answers it"
    )
