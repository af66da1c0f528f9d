"""Per-tool extractors: which ids a tool retrieved, what text it answered, which org it covers.

One small function per tool, registered by tool name, so adding a tool is one entry and
metrics never need to know a tool's response shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from evals.run.jsonpath import resolve

IdExtractor = Callable[[dict[str, Any]], list[str]]
TextExtractor = Callable[[dict[str, Any]], str]
ContextExtractor = Callable[[dict[str, Any]], list[str]]

RETRIEVED_IDS: dict[str, IdExtractor] = {}
ANSWER_TEXT: dict[str, TextExtractor] = {}
CONTEXTS: dict[str, ContextExtractor] = {}

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

    def extract(result: dict[str, Any]) -> list[str]:
        values: list[Any] = []
        for path in paths:
            values.extend(resolve(result, path))
        if parent:
            values = [parent_section(str(v)) for v in values if v is not None]
        return _ranked_unique(values)

    return extract


def register_ids(tool: str, extractor: IdExtractor) -> None:
    RETRIEVED_IDS[tool] = extractor


register_ids("opa.search_sections", ids_at("sections[*].section_id", parent=True))
register_ids("opa.policy_check", ids_at("policies[*].section_id", parent=True))
register_ids("opa.get_section", ids_at("section.section_id"))
register_ids("opa.program_lookup", ids_at("recommendations[*].source_section_id"))
register_ids("opa.ipac_guidance", ids_at("requirements[*].source_section_id"))
register_ids("opa.clinical_tools", ids_at("tools[*].tool_id"))
register_ids("opa.freshness_probe", ids_at("stale_documents[*].document_id"))
register_ids("schedule.get", ids_at("items[*].code"))
register_ids("odb.get", ids_at("coverage.din", "interchangeable[*].din", "lowest_cost.din"))
register_ids("adp.get", ids_at("citations[*].loc"))
register_ids("source.passages", ids_at("passages[*].chunk_id"))
register_ids("coverage.answer", ids_at("highlights[*].citations[*].loc"))

KNOWN_TOOLS: tuple[str, ...] = tuple(RETRIEVED_IDS)


def retrieved_ids(tool: str, result: dict[str, Any] | None) -> list[str]:
    """Ranked, de-duplicated ids a tool result retrieved ([] for errors or unknown tools)."""
    if not isinstance(result, dict) or tool not in RETRIEVED_IDS:
        return []
    return RETRIEVED_IDS[tool](result)


def _join(*paths: str) -> TextExtractor:
    def extract(result: dict[str, Any]) -> str:
        parts: list[str] = []
        for path in paths:
            parts.extend(str(v) for v in resolve(result, path) if isinstance(v, str) and v)
        return "\n".join(parts)

    return extract


def _texts(*paths: str) -> ContextExtractor:
    def extract(result: dict[str, Any]) -> list[str]:
        out: list[str] = []
        for path in paths:
            for value in resolve(result, path):
                if isinstance(value, str) and value.strip():
                    out.append(value)
                elif isinstance(value, list):
                    out.extend(str(v) for v in value if isinstance(v, str) and v.strip())
        return out

    return extract


ANSWER_TEXT.update(
    {
        "coverage.answer": _join("summary", "highlights[*].point"),
        "adp.get": _join("summary"),
        "opa.program_lookup": _join("summary", "overview"),
        "opa.policy_check": _join("summary"),
        "opa.ipac_guidance": _join("summary", "requirements[*].text"),
        "schedule.get": _join("items[*].description", "items[*].requirements"),
        "odb.get": _join("summary", "coverage.lu_criteria"),
        "opa.search_sections": _join("sections[*].text"),
        "opa.get_section": _join("section.text"),
        "source.passages": _join("passages[*].text"),
    }
)

CONTEXTS.update(
    {
        "opa.search_sections": _texts("sections[*].text"),
        "opa.policy_check": _texts("policies[*].text"),
        "opa.get_section": _texts("section.text"),
        "opa.program_lookup": _texts("recommendations[*].text"),
        "opa.ipac_guidance": _texts("requirements[*].text"),
        "source.passages": _texts("passages[*].text"),
        "odb.get": _texts("context"),
        "adp.get": _texts("context"),
        "schedule.get": _texts("items[*].requirements"),
        "coverage.answer": _texts("highlights[*].point"),
    }
)


def answer_text(tool: str, result: dict[str, Any] | None, fallback: str = "") -> str:
    """The tool's answer as text for string and LLM metrics (JSON of the result if unknown)."""
    if not isinstance(result, dict):
        return fallback
    extractor = ANSWER_TEXT.get(tool)
    text = extractor(result) if extractor else ""
    return text or fallback or json.dumps(result, sort_keys=True)


def contexts(tool: str, result: dict[str, Any] | None) -> list[str]:
    """Retrieved passages as text, for LLM-judged faithfulness and context metrics."""
    if not isinstance(result, dict) or tool not in CONTEXTS:
        return []
    return CONTEXTS[tool](result)


# Source organisation: fixed for the Dr. OFF tools, else from the id prefix before the first '-'.
ORG_BY_TOOL: dict[str, str] = {"schedule.get": "ohip", "adp.get": "adp", "odb.get": "odb"}
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


def organisation(tool: str, ids: Iterable[str]) -> str:
    """The source organisation a query is about (``other`` when it cannot be told)."""
    if tool in ORG_BY_TOOL:
        return ORG_BY_TOOL[tool]
    for doc_id in ids:
        prefix = str(doc_id).split("-", 1)[0].split(":", 1)[0].lower()
        if prefix in ORG_BY_PREFIX:
            return ORG_BY_PREFIX[prefix]
    return "other"
