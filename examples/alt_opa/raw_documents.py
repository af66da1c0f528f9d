"""A document as an extract reader gives it (its sections in reading order, not yet numbered)
and the text helpers every reader uses: dates, whitespace, headings, titles, topics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from pydantic import JsonValue


# One extract file (``<org>/*.json``) as the readers take it: the keys they read, of any JSON type
# unless the reader needs one (each reads a value through ``str()`` or checks it).
class ExtractLink(TypedDict, total=False):
    title: JsonValue
    anchor: JsonValue


class ExtractSubsection(TypedDict, total=False):
    heading: JsonValue


class ExtractSection(TypedDict, total=False):
    heading: JsonValue
    summary: JsonValue
    content: JsonValue
    full_content: JsonValue
    subsections: list[ExtractSubsection]


class ExtractKeyContent(TypedDict, total=False):
    assessment_tools: list[JsonValue]


class ExtractMetadata(TypedDict, total=False):
    published_date: JsonValue
    effective_date: JsonValue
    revision_date: JsonValue
    source_url: JsonValue
    document_type: JsonValue
    topics: list[str]


class Extract(TypedDict, total=False):
    title: JsonValue
    content: JsonValue
    source_url: JsonValue
    source_file: JsonValue
    document_type: JsonValue
    tool_category: JsonValue
    last_updated: JsonValue
    policy_level: str | None
    sections: list[ExtractSection]
    navigation: list[ExtractLink]
    key_content: ExtractKeyContent
    metadata: ExtractMetadata


# the extracts' document types -> the vocabulary the published schema filters on
DOC_TYPES = {
    "policy": "policy",
    "advice": "advice",
    "statement": "statement",
    "clinical_tool": "tool",
    "tool": "tool",
    "ipac-guidance": "guideline",
    "guideline": "guideline",
    "bulletin": "bulletin",
}


@dataclass
class RawSection:
    heading: str
    context: tuple[str, ...]
    text: str
    page: int | None = None
    anchor: str | None = None
    extra_terms: str = ""


@dataclass
class RawDoc:
    org: str
    title: str
    url: str
    doc_type: str
    policy_level: str | None
    published_date: str | None
    effective_date: str | None
    updated_date: str | None
    topics: tuple[str, ...]
    source_file: str
    sections: list[RawSection]


_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
DATE = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+(?:(\d{1,2}),?\s+)?(\d{4})\b",
    re.IGNORECASE,
)


def iso_dates(text: str) -> list[str]:
    """Every 'Month YYYY' / 'Month D, YYYY' in ``text`` as ISO dates (day 1 when none)."""
    out = []
    for month, day, year in DATE.findall(text or ""):
        out.append(f"{int(year):04d}-{_MONTHS[month.lower()]:02d}-{int(day or 1):02d}")
    return out


def squash(text: str) -> str:
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def tidy_block(lines: Iterable[str]) -> str:
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text)
    return text.strip()


def clean_heading(text: str) -> str:
    """A heading without markup, footnote numbers glued to its end, or a 'New' badge."""
    text = squash(clean_markdown(text))
    text = re.sub(r"(?<=[a-z])New$", "", text)
    text = re.sub(r"(?<=[A-Za-z)])\d+(?:\s*[,\-\u2013]\s*\d+)*$", "", text)
    return text.strip(" :")


def display_title(title: str) -> str:
    """Titles set in capitals by the publisher are shown in title case."""
    title = squash(title)
    if title.upper() != title:
        return title
    small = {"a", "an", "and", "as", "at", "for", "in", "of", "on", "or", "the", "to", "with"}
    words = title.lower().split(" ")
    return " ".join(w if (i and w in small) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def topic(text: str) -> str:
    return squash(re.sub(r"[-_/]+", " ", text.casefold()))


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CARET = re.compile(r"\^\d+")
_EMPH = re.compile(r"\*{1,3}")


def clean_markdown(line: str) -> str:
    line = line.replace("\u00a0", " ").replace("[](#)", "")
    line = _LINK.sub(r"\1", line)
    line = _CARET.sub("", line)
    line = _EMPH.sub("", line)
    return re.sub(r"[ \t]+", " ", line).rstrip()


def letter_words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)
