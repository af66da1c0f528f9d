"""Reading the text of the ADP manual extraction: page markers and running footers dropped,
sentences split, a heading kept or shortened to a label, table-of-contents fragments told apart
from policy, and the dollar amounts and percentages a section states.

The funding, exclusion and section rows (`adp`) are all read from text cleaned here.
"""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

from .dates import MONTH
from .textrules import keep_label, summarise

_FOOTER = re.compile(
    r"(?:[A-Z][A-Za-z-]*\s)+(?:and\s(?:[A-Z][A-Za-z-]*\s)+)?(?:Policy and Administration Manual|"
    r"Policies and Procedures Manual for the Assistive Devices Program)\s+(?:\d+\s+)?"
    rf"{MONTH}\s+(?:\d{{1,2}},\s+)?\d{{4}}(?:\s+\d+\b)?"
)
# a running footer names the manual the page belongs to
MANUAL_FOOTER = re.compile(
    r"((?:[A-Z][A-Za-z-]*[ \t]+)+(?:and\s+(?:[A-Z][A-Za-z-]*[ \t]+)+)?Policy and Administration Manual|"
    r"Policies and Procedures Manual for the Assistive Devices Program)\s+(?:\d+\s*)?"
    rf"{MONTH}\s+(?:\d{{1,2}},\s+)?\d{{4}}"
)
_DOTS = re.compile(r"\.{4,}\s*\d*")
_PAGE = re.compile(r"---\s*Page\s+\d+\s*---")
AMOUNT = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d{2})?)")
_HEAD_STOP = {
    "the",
    "of",
    "for",
    "and",
    "or",
    "to",
    "a",
    "an",
    "by",
    "in",
    "with",
    "on",
    "real-time",
}
_SENTENCE_START = re.compile(
    r"^(?:The|If|In|An|A|For|To|When|Where|Unless|This|These|All|Each|Any|Clients?|Applicants?)\b"
)


def clean_text(text: str) -> str:
    """Drop page markers and running footers, flatten bullets and whitespace."""
    t = _PAGE.sub(" ", text or "")
    t = _FOOTER.sub(" ", t)
    t = _DOTS.sub(" ", t)
    t = re.sub(r"\s*•\s*", " • ", t)
    return re.sub(r"\s+", " ", t).strip()


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.;])\s+|\s•\s", text)
    return [p.strip(" •") for p in parts if p.strip(" •")]


def heading(title: str, raw: str) -> str:
    """A real heading is kept; a sentence fragment is reduced to a short label."""
    t = re.sub(r"\.{3,}.*$", "", title or "").strip()
    t = re.sub(r"^(?:Added|Revised|Updated)\s*(?:\d+(?:\.\d+)*)?:\s*", "", t).strip()
    first_line = (raw or "").strip().split("\n", 1)[0].strip()
    words = t.split()
    looks_heading = 0 < len(words) <= 9 and not _SENTENCE_START.match(t) and not t.endswith(",")
    if (
        looks_heading
        and words[-1].lower() in _HEAD_STOP | {"by", "to"}
        and first_line
        and len(first_line.split()) <= 5
    ):
        t = f"{t} {first_line}".strip()
    if looks_heading:
        return keep_label(t, max_words=12)
    return summarise(f"{t} {first_line}", max_words=8)


class AdpSection(TypedDict):
    """One adp_sections.jsonl record (keys in the order written)."""

    id: str
    policy_uid: str
    adp_doc: str
    device_category: str
    manual: str
    part: str
    section_ref: str
    heading: str
    page_num: int | None
    topics: list[str]
    percentages: list[int]
    amounts: list[str]
    exclusions: list[str]
    kind: str
    summary: str
    _text: NotRequired[str]  # the cleaned section text, while rules are read; never written


# `../shared/data/adp/adp_extraction.json` as the extraction wrote it: the keys read here (any
# may be missing).


class AdpFundingItem(TypedDict, total=False):
    """A funding statement the extraction found in a section."""

    scenario: str
    client_share_percent: str | int | float | None  # 25, "25%", ...
    details: str | None
    llm_extracted: bool


class AdpExclusionItem(TypedDict, total=False):
    """A not-funded phrase the extraction found in a section."""

    phrase: str | None
    applies_to: str | None
    llm_extracted: bool


class AdpExtractedSection(TypedDict, total=False):
    """One section of one ADP manual, as extracted from its PDF."""

    adp_doc: str
    part: str | None
    section_id: str | None
    title: str
    raw_text: str | None
    policy_uid: str | None
    topics: list[str] | None
    funding: list[AdpFundingItem] | None
    exclusions: list[AdpExclusionItem] | None
    page_num: int | None


class AdpExtraction(TypedDict, total=False):
    extraction_date: str
    documents_processed: int
    total_sections: int
    total_exclusions: int
    total_funding_rules: int
    sections: list[AdpExtractedSection]


def section_kind(x: AdpExtractedSection, raw: str) -> str:
    """'toc' for table-of-contents / amendment-log fragments, else 'policy'."""
    title = x.get("title") or ""
    if (
        _DOTS.search(title)
        or _DOTS.search(raw)
        or re.search(r"Table of Contents|Section Change Date|^\d+(?:\.\d+)*:", f"{title} {raw}")
    ):
        return "toc"
    if re.search(rf"\b{MONTH}\s+\d{{4}}\b", title) and (x.get("page_num") or 99) <= 5:
        return "toc"
    return "policy"


def percentages(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"(\d{1,3})\s*(?:percent|%)", text, re.I)]
