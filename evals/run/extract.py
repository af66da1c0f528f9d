"""Per-tool extractors: which ids a tool retrieved, what text it answered, which org it covers.

Where a tool's result holds these is data, not code: each tool's descriptor
(:mod:`evals.run.tool_descriptors`; the twelve tools in ``evals/tool_descriptors.yaml``, more
beside a golden file). Every function takes the descriptors of the run (the built-in ones when
not given); a tool described nowhere gets the generic behaviour (no ids, the JSON of its result
as the answer), so metrics never need to know a tool's response shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from evals.run.jsonpath import resolve
from evals.run.public_keys import SECTION_SIGN
from evals.run.tool_descriptors import ToolDescriptor, ToolDescriptors, builtin
from ocm_common.json_types import JsonObject

IdExtractor = Callable[[JsonObject], list[str]]

_CHILD_SUFFIX = re.compile(r":c\d+$")


def _ranked_unique(values: Iterable[Any]) -> list[str]:
    """Strings in first-seen order, de-duplicated, empty values dropped (rank is position)."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if value is None or value == "":
            continue
        text = str(value)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def parent_section(section_id: str) -> str:
    """``doc:s03:c2`` -> ``doc:s03``: judgments are made on parent sections."""
    return _CHILD_SUFFIX.sub("", section_id)


def ids_at(*paths: str, parent: bool = False) -> IdExtractor:
    """An extractor reading ids at ``paths`` in order (later paths rank below earlier ones)."""

    def extract(result: JsonObject) -> list[str]:
        values: list[Any] = []
        for path in paths:
            values.extend(resolve(result, path))
        if parent:
            values = [parent_section(str(v)) for v in values if v is not None]
        return _ranked_unique(values)

    return extract


def descriptor(tool: str, descriptors: ToolDescriptors | None = None) -> ToolDescriptor:
    """The tool's descriptor in ``descriptors`` (built-in when None); generic if undescribed."""
    return (descriptors if descriptors is not None else builtin()).of(tool)


def retrieved_ids(
    tool: str, result: JsonObject | None, descriptors: ToolDescriptors | None = None
) -> list[str]:
    """Ranked, de-duplicated ids a tool result retrieved ([] for errors or tools without ids)."""
    if not isinstance(result, dict):
        return []
    described = descriptor(tool, descriptors)
    own = ids_at(*described.ids, parent=described.parent_ids)(result)
    if described.public_id is None:
        return own
    named = public_names(result, described.public_id.items, described.public_id.fields)
    return _ranked_unique(named) if named else own


def public_names(result: Any, items: str, fields: tuple[str, ...]) -> list[str]:
    """``"<url> § <heading>"`` (the fields joined) for each item holding every field."""
    names: list[str] = []
    for item in resolve(result, items):
        if not isinstance(item, dict):
            continue
        values = [item.get(name) for name in fields]
        if all(isinstance(v, str) and v.strip() for v in values):
            names.append(f" {SECTION_SIGN} ".join(str(v).strip() for v in values))
    return names


def answer_text(
    tool: str,
    result: JsonObject | None,
    fallback: str = "",
    descriptors: ToolDescriptors | None = None,
) -> str:
    """The tool's answer as text for string and LLM metrics (the JSON of the result when its
    descriptor names no answer, or nothing is there)."""
    if not isinstance(result, dict):
        return fallback
    parts: list[str] = []
    for path in descriptor(tool, descriptors).answer:
        parts.extend(str(v) for v in resolve(result, path) if isinstance(v, str) and v)
    return "\n".join(parts) or fallback or json.dumps(result, sort_keys=True)


def contexts(
    tool: str, result: JsonObject | None, descriptors: ToolDescriptors | None = None
) -> list[str]:
    """Retrieved passages as text, for LLM-judged faithfulness and context metrics."""
    if not isinstance(result, dict):
        return []
    out: list[str] = []
    for path in descriptor(tool, descriptors).contexts:
        for value in resolve(result, path):
            if isinstance(value, str) and value.strip():
                out.append(value)
            elif isinstance(value, list):
                out.extend(str(v) for v in value if isinstance(v, str) and v.strip())
    return out


# Source organisation: the descriptor's when it names one, else from the id prefix before the
# first '-' (or ':').
ORG_BY_PREFIX: dict[str, str] = {
    "cpso": "cpso",
    "cep": "cep",
    "pho": "pho",
    "moh": "moh",
    "oh": "ontario_health",
    "ontario": "ontario_health",
    "ontario_health": "ontario_health",
    "ohip": "ohip",
    "adp": "adp",
    "odb": "odb",
}


# an official document's publisher by its site (judgments keyed on official URLs)
ORG_BY_HOST: tuple[tuple[str, str], ...] = (
    ("cpso.on.ca", "cpso"),
    ("cep.health", "cep"),
    ("publichealthontario.ca", "pho"),
    ("cancercareontario.ca", "ontario_health"),
    ("cancercare.on.ca", "ontario_health"),
    ("ontariohealth.ca", "ontario_health"),
    ("ontario.ca", "moh"),
)


def organisation(tool: str, ids: Iterable[str], descriptors: ToolDescriptors | None = None) -> str:
    """The source organisation a query is about (``other`` when it cannot be told)."""
    fixed = descriptor(tool, descriptors).organisation
    if fixed:
        return fixed
    for doc_id in ids:
        host = urlsplit(str(doc_id).strip()).netloc.casefold().removeprefix("www.")
        if host:
            for suffix, org in ORG_BY_HOST:
                if host == suffix or host.endswith("." + suffix):
                    return org
            continue
        prefix = str(doc_id).split("-", 1)[0].split(":", 1)[0].lower()
        if prefix in ORG_BY_PREFIX:
            return ORG_BY_PREFIX[prefix]
    return "other"
