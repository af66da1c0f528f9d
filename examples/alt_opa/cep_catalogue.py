"""`opa.clinical_tools`: the Centre for Effective Practice's clinical tools as a catalogue.

Each CEP tool is one extract (``cep/<slug>_extracted.json``); the catalogue holds the tools the
corpus keeps (:mod:`examples.alt_opa.corpus`: unpublished staging and draft pages are left out,
and of two pages with the same text the one under the shorter URL is kept), under the corpus's
document id, so a ``tool_id`` is also a ``document_id`` of ``opa.search_sections``.

From each extract, by this backend's rules:

- name, official URL and last update: the corpus document's (its title, ``source_url`` and
  the extract's ``last_updated`` date, when that is a date);
- category: the extract's own ``tool_category`` (``mental_health``, ``chronic_disease``,
  ``pain_msk``...), unchanged; the ``category`` filter takes these values, compared without
  regard to case, spaces or hyphens (``Mental Health`` is ``mental_health``); another value is
  a tool error naming the categories the catalogue holds;
- features: a feature (algorithm, calculator, checklist) is available when the extract
  declares it (its ``features`` block, which its ``summary`` line repeats: "Features:
  algorithm, calculator...") or when one of its headings names it ("Assessment algorithm",
  "Insulin initiation checklist"); its link is the tool URL plus the anchor of the first
  heading naming it that has one (``.../dementia-diagnosis/#algorithm``), else the tool URL
  (the page holds it, the extract gives no place on it); an unavailable feature has no link;
- screening tools: the instruments the extract lists (``key_content.assessment_tools``), then
  those its headings and section summaries name as "<Name> Scale / Index / Questionnaire /
  Inventory / Assessment / Test / Examination ... (<ABBREVIATION>)", by their abbreviation;
- summary: the first section summary of some length, without the sub-headings the extract
  glues to its start;
- sections: the extract's top-level sections, reference lists and acknowledgements left out,
  each with its summary and a link: the tool URL plus the section's anchor, else the anchor of a
  navigation entry of the same title, else that of the section's first sub-heading (where the
  section's text starts); else the tool URL. Listed with ``include_sections`` only (else
  ``sections`` is an empty list, so the answer's shape does not change);
- PDF version: no extract links a PDF of the tool itself (the PDFs in them are references to
  other publishers), so ``pdf_version`` is null.

Matching: ``condition`` keeps the tools that hold every word of it (the search module's
tokens: lower case, stop words dropped, cut to six letters) in their name, category, headings,
section summaries or screening tools, ranked by BM25 over those fields (name three times,
headings twice) times one plus the share of the name's words the condition covers (a tool
named for the condition before one that mentions it). ``tool_name`` keeps the tools whose name
holds every word of it, ranked by that share. Without either, tools come in name order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict
from urllib.parse import quote

from fastmcp.exceptions import ToolError
from pydantic import JsonValue

from examples.alt_opa.corpus import REFERENCE_HEADINGS, Corpus, data_folder
from examples.alt_opa.raw_documents import clean_heading, squash
from examples.alt_opa.search import Bm25, tokens

# the spec's feature_type values -> the key_features entry each fills
FEATURES = {
    "algorithm": "assessment_algorithm",
    "calculator": "calculator",
    "checklist": "checklist",
}
# the extract's declared flag of each feature
FLAGS = {"algorithm": "has_algorithm", "calculator": "has_calculator", "checklist": "has_checklist"}
# a heading naming the feature
NAMED_IN_HEADING = {
    "algorithm": re.compile(r"\balgorithms?\b", re.IGNORECASE),
    "calculator": re.compile(r"\bcalculators?\b", re.IGNORECASE),
    "checklist": re.compile(r"\bcheck-?lists?\b", re.IGNORECASE),
}
NAME_WEIGHT = 3
HEADING_WEIGHT = 2
SUMMARY_MIN_CHARS = 80
_INSTRUMENT = (
    r"(?:Scale|Index|Questionnaire|Inventory|Assessment|Test|Examination|Exam|Screener|Screen"
    r"|Score|Instrument|Survey|Measure)"
)
# "<Capitalised words> <instrument word> (<ABBREVIATION>)", footnote numbers allowed before "("
NAMED_INSTRUMENT = re.compile(
    r"\b[A-Z][\w’'/-]*(?:\s+(?:(?:of|for|and|the|in|on)\s+)?[A-Z][\w’'/-]*){0,6}?\s+"
    + _INSTRUMENT
    + r"(?:\s*\d[\d,\-–]*)?\s*\(([A-Z][A-Za-z0-9-]{1,14})\)"
)
_TRAILING_NOTES = re.compile(r"[\d\s,\-–]+$")
# characters a URL fragment may hold as they are (a space is written %20)
FRAGMENT_SAFE = "/-._~!$&'()*+,;=:@%?"


def category_key(text: str) -> str:
    """``Mental Health``, ``mental-health`` and ``mental_health`` are one category."""
    return "_".join(re.split(r"[\s_/-]+", text.strip().casefold()))


def _bare(heading: str) -> str:
    """A heading as the extract glues it into a summary (no footnote numbers after it)."""
    return _TRAILING_NOTES.sub("", clean_heading(heading)).strip()


def strip_glued_headings(summary: str, headings: Sequence[str]) -> str:
    """The summary without the sub-headings the extract set, run together, at its start."""
    rest = squash(summary)
    for heading in dict.fromkeys(h for h in (_bare(h) for h in headings) if h):
        if rest.startswith(heading):
            rest = rest[len(heading) :]
    return rest.strip()


# ---------------------------------------------------------------------- the extract's shape


# A CEP extract as this module reads it: the keys it reads, of any JSON type unless it needs one
# (each value is read through ``str()`` or checked).
class CepHeading(TypedDict, total=False):
    heading: JsonValue
    anchor: JsonValue


class CepSection(TypedDict, total=False):
    heading: JsonValue
    anchor: JsonValue
    summary: JsonValue
    subsections: list[CepHeading]


class CepLink(TypedDict, total=False):
    title: JsonValue
    anchor: JsonValue


class CepKeyContent(TypedDict, total=False):
    assessment_tools: list[JsonValue]


class CepExtract(TypedDict, total=False):
    tool_category: JsonValue
    features: dict[str, JsonValue]
    key_content: CepKeyContent
    sections: list[CepSection]
    navigation: list[CepLink]


# ---------------------------------------------------------------------- the answer's shape


class FeatureLink(TypedDict):
    available: bool
    url: str | None


class KeyFeatures(TypedDict):
    assessment_algorithm: FeatureLink
    calculator: FeatureLink
    checklist: FeatureLink
    screening_tools: list[str]


class SectionLink(TypedDict):
    title: str
    summary: str
    url: str


class QuickLinks(TypedDict):
    full_tool: str
    pdf_version: str | None


class ToolRow(TypedDict):
    tool_id: str
    name: str
    url: str
    last_updated: str | None
    category: str
    summary: str
    key_features: KeyFeatures
    sections: list[SectionLink]
    quick_links: QuickLinks


class ClinicalToolsResult(TypedDict):
    tools: list[ToolRow]
    total_tools: int
    query_interpretation: str


# ---------------------------------------------------------------------- the catalogue


@dataclass(frozen=True)
class ToolSection:
    title: str
    summary: str
    anchor: str | None


@dataclass(frozen=True)
class ClinicalTool:
    tool_id: str
    name: str
    url: str
    last_updated: str | None
    category: str
    summary: str
    features: dict[str, str | bool | None]  # feature -> anchor (str), on the page (True), or absent
    screening_tools: tuple[str, ...]
    sections: tuple[ToolSection, ...]
    headings: tuple[str, ...]

    def link(self, anchor: str | None) -> str:
        if not anchor or not self.url:
            return self.url
        return f"{self.url}#{quote(anchor, safe=FRAGMENT_SAFE)}"

    def has(self, feature: str) -> bool:
        return self.features.get(feature) not in (None, False)

    def feature_link(self, feature: str) -> FeatureLink:
        where = self.features.get(feature)
        if where is None or where is False:
            return {"available": False, "url": None}
        return {"available": True, "url": self.link(where if isinstance(where, str) else None)}

    def terms(self) -> list[str]:
        parts = [self.name] * NAME_WEIGHT + [self.category.replace("_", " ")]
        parts += list(self.headings) * HEADING_WEIGHT
        parts += [s.summary for s in self.sections] + list(self.screening_tools)
        return tokens(" ".join(parts))


def _anchor(value: object) -> str | None:
    text = str(value or "").strip().lstrip("#").strip()
    return text or None


def _headings(data: CepExtract) -> list[tuple[str, str | None]]:
    """Every heading of the extract with its anchor: sections, their sub-headings, navigation."""
    out: list[tuple[str, str | None]] = []
    for sec in data.get("sections") or []:
        out.append((clean_heading(str(sec.get("heading") or "")), _anchor(sec.get("anchor"))))
        for sub in sec.get("subsections") or []:
            out.append((clean_heading(str(sub.get("heading") or "")), _anchor(sub.get("anchor"))))
    for nav in data.get("navigation") or []:
        out.append((clean_heading(str(nav.get("title") or "")), _anchor(nav.get("anchor"))))
    return [(h, a) for h, a in out if h]


def read_features(data: CepExtract) -> dict[str, str | bool | None]:
    declared = data.get("features") or {}
    headings = _headings(data)
    out: dict[str, str | bool | None] = {}
    for feature, pattern in NAMED_IN_HEADING.items():
        naming = [a for h, a in headings if pattern.search(h)]
        anchored = next((a for a in naming if a), None)
        if anchored:
            out[feature] = anchored
        elif naming or declared.get(FLAGS[feature]) is True:
            out[feature] = True
        else:
            out[feature] = None
    return out


def read_sections(data: CepExtract) -> list[ToolSection]:
    nav = {
        clean_heading(str(n.get("title") or "")).casefold(): _anchor(n.get("anchor"))
        for n in data.get("navigation") or []
    }
    out = []
    for sec in data.get("sections") or []:
        title = clean_heading(str(sec.get("heading") or ""))
        if not title or REFERENCE_HEADINGS.match(title):
            continue
        subs = [str(s.get("heading") or "") for s in sec.get("subsections") or []]
        summary = strip_glued_headings(str(sec.get("summary") or ""), subs)
        first_sub = (sec.get("subsections") or [{}])[0]
        anchor = (
            _anchor(sec.get("anchor"))
            or nav.get(title.casefold())
            or _anchor(first_sub.get("anchor"))
        )
        out.append(ToolSection(title, summary, anchor))
    return out


def read_screening_tools(data: CepExtract, sections: Iterable[ToolSection]) -> list[str]:
    key = data.get("key_content") or {}
    listed = [squash(str(t)) for t in key.get("assessment_tools") or [] if str(t or "").strip()]
    text = " ".join([h for h, _ in _headings(data)] + [s.summary for s in sections])
    named = [m.group(1) for m in NAMED_INSTRUMENT.finditer(text)]
    seen: dict[str, str] = {}
    for name in [*listed, *named]:
        seen.setdefault(name.casefold(), name)
    return list(seen.values())


def read_tool(
    tool_id: str, name: str, url: str, last_updated: str | None, data: CepExtract
) -> ClinicalTool:
    sections = read_sections(data)
    summary = next(
        (s.summary for s in sections if len(s.summary) >= SUMMARY_MIN_CHARS),
        sections[0].summary if sections else "",
    )
    return ClinicalTool(
        tool_id=tool_id,
        name=name,
        url=url,
        last_updated=last_updated,
        category=str(data.get("tool_category") or "").strip() or "uncategorised",
        summary=summary,
        features=read_features(data),
        screening_tools=tuple(read_screening_tools(data, sections)),
        sections=tuple(sections),
        headings=tuple(dict.fromkeys(h for h, _ in _headings(data))),
    )


@dataclass(frozen=True)
class Request:
    condition: str | None = None
    tool_name: str | None = None
    category: str | None = None
    feature_type: str | None = None
    include_sections: bool = False


class Catalogue:
    def __init__(self, tools: Sequence[ClinicalTool]) -> None:
        self.tools = list(tools)
        self.index = Bm25([t.terms() for t in self.tools])
        self.term_sets = [set(t.terms()) for t in self.tools]
        self.name_terms = [set(tokens(t.name)) for t in self.tools]

    @classmethod
    def build(cls, corpus: Corpus, folder: Path | None = None) -> Catalogue:
        """The corpus's CEP documents, each read again from its extract for what the corpus
        does not keep (features, navigation, category, instruments)."""
        folder = folder or data_folder()
        tools = []
        for doc in corpus.documents.values():
            if doc.org != "cep":
                continue
            try:
                data: CepExtract = json.loads(
                    (folder / doc.source_file).read_text(encoding="utf-8")
                )
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                tools.append(read_tool(doc.doc_id, doc.title, doc.url, doc.updated_date, data))
        return cls(tools)

    def categories(self) -> list[str]:
        return sorted({t.category for t in self.tools})

    def name_share(self, row: int, words: set[str]) -> float:
        name = self.name_terms[row]
        return len(name & words) / len(name) if name else 0.0

    def find(self, request: Request) -> list[ClinicalTool]:
        rows = list(range(len(self.tools)))
        if request.category is not None:
            wanted = category_key(request.category)
            if wanted not in {category_key(c) for c in self.categories()}:
                raise ToolError(
                    f"invalid category {request.category!r}; allowed (the CEP tools' own "
                    f"categories): {', '.join(self.categories())}"
                )
            rows = [i for i in rows if category_key(self.tools[i].category) == wanted]
        if request.feature_type is not None:
            if request.feature_type not in FEATURES:
                raise ToolError(
                    f"invalid feature_type {request.feature_type!r}; allowed: {', '.join(FEATURES)}"
                )
            rows = [i for i in rows if self.tools[i].has(request.feature_type)]
        score = {i: 0.0 for i in rows}
        if request.tool_name is not None:
            words = set(self._words("tool_name", request.tool_name))
            rows = [i for i in rows if words <= self.name_terms[i]]
            for i in rows:
                score[i] += self.name_share(i, words)
        if request.condition is not None:
            query = self._words("condition", request.condition)
            words = set(query)
            rows = [i for i in rows if words <= self.term_sets[i]]
            bm25 = self.index.scores(query, set(rows))
            for i in rows:
                score[i] += bm25.get(i, 0.0) * (1.0 + self.name_share(i, words))
        ranked = sorted(rows, key=lambda i: (-round(score[i], 6), self.tools[i].name.casefold(), i))
        return [self.tools[i] for i in ranked]

    @staticmethod
    def _words(field: str, text: str) -> list[str]:
        words = tokens(text)
        if not words:
            raise ToolError(
                f"invalid {field} {text!r}: it holds no word to match (only stop words or "
                "single letters)"
            )
        return words


def interpretation(request: Request, shown: int, total: int) -> str:
    asked = []
    if request.condition is not None:
        asked.append(
            f"for the condition {request.condition!r} (every word of it in the tool's name, "
            "category, headings, section summaries or screening tools; best match first)"
        )
    if request.tool_name is not None:
        asked.append(f"whose name holds every word of {request.tool_name!r}")
    if request.category is not None:
        asked.append(f"in the category {category_key(request.category)!r}")
    if request.feature_type is not None:
        asked.append(
            f"with {'an' if request.feature_type == 'algorithm' else 'a'} {request.feature_type}"
        )
    what = " ".join(asked) if asked else "all of them, in name order"
    sections = "with their section summaries" if request.include_sections else "without sections"
    return (
        f"Centre for Effective Practice clinical tools {what}; {sections}. {shown} of the "
        f"{total} tools in this catalogue match."
    )


def answer(catalogue: Catalogue, request: Request) -> ClinicalToolsResult:
    found = catalogue.find(request)
    return {
        "tools": [row(t, request.include_sections) for t in found],
        "total_tools": len(found),
        "query_interpretation": interpretation(request, len(found), len(catalogue.tools)),
    }


def row(tool: ClinicalTool, include_sections: bool) -> ToolRow:
    return {
        "tool_id": tool.tool_id,
        "name": tool.name,
        "url": tool.url,
        "last_updated": tool.last_updated,
        "category": tool.category,
        "summary": tool.summary,
        "key_features": {
            "assessment_algorithm": tool.feature_link("algorithm"),
            "calculator": tool.feature_link("calculator"),
            "checklist": tool.feature_link("checklist"),
            "screening_tools": list(tool.screening_tools),
        },
        "sections": [
            {"title": s.title, "summary": s.summary, "url": tool.link(s.anchor)}
            for s in tool.sections
        ]
        if include_sections
        else [],
        "quick_links": {"full_tool": tool.url, "pdf_version": None},
    }
