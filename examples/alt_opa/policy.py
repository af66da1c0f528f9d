"""`opa.policy_check`: CPSO policy sections for a question, expectations told apart from advice.

Scope: the CPSO documents that are policies or *Advice to the Profession* pages (their
companions); CPSO position statements and every other organisation are left out. Sections
kept for look-up only (endnotes, references) are not searched.

Level of a section, decided from the source itself:

- a section of an *Advice to the Profession* document (the extract's ``document_type`` is
  ``advice``, or its title starts "Advice to the Profession") is **advice**, whatever it says:
  those pages explain the policy, and restate its "must" only to explain it;
- a section of a policy that says "must" (or "must not"), "shall", or "is/are required to" is an
  **expectation**: CPSO policies state their expectations with "must";
- a section of a policy that says none of those but "should", "advised", "advisable",
  "encouraged" or "recommended" is **advice**: CPSO policies mark with "advised" what physicians
  may apply with reasonable discretion;
- a section of a policy that says none of them (definitions, scope) takes its document's level,
  the extract's ``policy_level`` (``expectation`` for a policy): it is text of the binding
  policy, the terms its expectations use.

Ranking: BM25 (:class:`examples.alt_opa.search.SectionSearch`'s index) over the sections the
filters keep (``policy_level``; ``include_advice`` false drops every advice section, and with
``policy_level`` "advice" is a tool error, as the two ask for nothing together). The
sections scoring at least ``POOL_SHARE`` of the best are the relevant pool, ranked as the spec
says: expectations before advice, then by score, then the more recently effective document
first; the other sections follow by score. The extracts carry no policy number, so
``policy_number`` is null and nothing is boosted by number; they carry no next review date
either, so ``review_date`` is null.

Each policy's ``text`` is the whole section as the page shows it, its heading first (the
spec's policy has no heading field); ``source_url`` is the document's official URL from its
extract; ``policy_title`` the document's title. ``expectations_found`` and ``advice_found``
count the policies returned at each level.

``confidence`` is this backend's own, from its one keyword path: the share of the question's
weight (BM25 idf of its terms) that the first policy's section holds, times a single-path base
of 0.6 raised by 0.03 for each further policy from the same document (at most 0.15): near 0.75
when one document's sections answer every word of the question, low when the best section
holds few of its words, 0 when nothing matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from fastmcp.exceptions import ToolError

from examples.alt_opa.corpus import Corpus, Document, Section
from examples.alt_opa.payloads import Conflict
from examples.alt_opa.search import SectionSearch, tokens

EXPECTATION, ADVICE, ALL = "expectation", "advice", "all"
LEVELS = (EXPECTATION, ADVICE, ALL)
DEFAULT_RESULTS = 3
MAX_RESULTS = 20
SCOPE_TYPES = ("policy", "advice")
# sections scoring at least this share of the best one are the pool ranked expectations first
POOL_SHARE = 0.5
BASE_CONFIDENCE = 0.6
CORROBORATION_STEP = 0.03
CORROBORATION_CAP = 0.15
PROVENANCE = ["sql"]  # one lexical path; the schema's vocabulary calls that path "sql"

EXPECTATION_WORDS = re.compile(r"\b(must|shall|(?:is|are)\s+required\s+to)\b", re.IGNORECASE)
ADVICE_WORDS = re.compile(
    r"\b(should|advised|advisable|encouraged|recommended|recommends?)\b", re.IGNORECASE
)
ADVICE_TITLE = re.compile(r"^advice to the profession\b", re.IGNORECASE)


class Policy(TypedDict):
    section_id: str
    policy_number: str | None
    policy_title: str
    policy_level: str
    text: str
    relevance_score: float
    effective_date: str | None
    review_date: str | None
    source_url: str


class PolicyCitation(TypedDict):
    source: str
    loc: str
    chunk_id: str
    url: str


class PolicyResult(TypedDict):
    provenance: list[str]
    confidence: float
    policies: list[Policy]
    expectations_found: int
    advice_found: int
    citations: list[PolicyCitation]
    conflicts: list[Conflict]


@dataclass(frozen=True)
class Request:
    query: str
    policy_level: str = ALL
    include_advice: bool = True
    n_results: int = DEFAULT_RESULTS


@dataclass(frozen=True)
class Ranked:
    section: Section
    level: str
    score: float


def in_scope(doc: Document) -> bool:
    return doc.org == "cpso" and doc.doc_type in SCOPE_TYPES


def is_advice_document(doc: Document) -> bool:
    return doc.doc_type == ADVICE or bool(ADVICE_TITLE.match(doc.title))


def section_level(section: Section, doc: Document) -> str:
    """The section's level by the rules in the module docstring."""
    if is_advice_document(doc):
        return ADVICE
    if EXPECTATION_WORDS.search(section.text):
        return EXPECTATION
    if ADVICE_WORDS.search(section.text):
        return ADVICE
    return ADVICE if doc.policy_level == ADVICE else EXPECTATION


def validate(request: Request) -> None:
    """The request's bounds (the input schema's, for a direct call) and the one contradiction
    the schema cannot say."""
    if request.policy_level not in LEVELS:
        raise ToolError(
            f"invalid policy_level: {request.policy_level!r}; allowed: {', '.join(LEVELS)}"
        )
    if not 1 <= request.n_results <= MAX_RESULTS:
        raise ToolError(f"invalid n_results: {request.n_results}; allowed: 1 to {MAX_RESULTS}")
    if request.policy_level == ADVICE and not request.include_advice:
        raise ToolError(
            "invalid include_advice: false excludes every advice section, so policy_level "
            "'advice' could return nothing; drop one of them"
        )


def _date_number(doc: Document) -> int:
    """The document's latest date as YYYYMMDD (0 when it has none), to rank newer first."""
    value = doc.effective_date or doc.updated_date or doc.published_date or ""
    digits = value[:10].replace("-", "")
    return int(digits) if digits.isdigit() else 0


class PolicyCheck:
    """The CPSO policy and advice sections of a corpus, each with its level, searched with the
    section search's BM25 index."""

    def __init__(self, corpus: Corpus, search: SectionSearch) -> None:
        self.corpus = corpus
        self.search = search
        self.levels: dict[int, str] = {}
        for row, section in enumerate(search.rows):
            doc = corpus.documents[section.doc_id]
            if in_scope(doc):
                self.levels[row] = section_level(section, doc)

    def allowed(self, request: Request) -> set[int]:
        wanted = {EXPECTATION, ADVICE} if request.policy_level == ALL else {request.policy_level}
        if not request.include_advice:
            wanted.discard(ADVICE)
        return {row for row, level in self.levels.items() if level in wanted}

    def rank(self, request: Request) -> list[Ranked]:
        scores = self.search.index.scores(tokens(request.query), self.allowed(request))
        found = [(round(v, 6), row) for row, v in scores.items() if v > 0]
        if not found:
            return []
        floor = POOL_SHARE * max(v for v, _ in found)

        def key(item: tuple[float, int]) -> tuple[bool, int, float, int, str]:
            score, row = item
            section = self.search.rows[row]
            pooled = score >= floor
            level_rank = 0 if (not pooled or self.levels[row] == EXPECTATION) else 1
            newer = -_date_number(self.corpus.documents[section.doc_id])
            return (not pooled, level_rank, -score, newer, section.section_id)

        return [
            Ranked(self.search.rows[row], self.levels[row], score)
            for score, row in sorted(found, key=key)
        ]

    def check(self, request: Request, url: Callable[[Document], str]) -> PolicyResult:
        validate(request)
        ranked = self.rank(request)
        shown = ranked[: request.n_results]
        policies = [self.policy(r, url) for r in shown]
        return {
            "provenance": list(PROVENANCE),
            "confidence": self.confidence(request.query, shown),
            "policies": policies,
            "expectations_found": sum(1 for p in policies if p["policy_level"] == EXPECTATION),
            "advice_found": sum(1 for p in policies if p["policy_level"] == ADVICE),
            "citations": [self.citation(r, url) for r in shown],
            "conflicts": [],
        }

    def policy(self, ranked: Ranked, url: Callable[[Document], str]) -> Policy:
        section = ranked.section
        doc = self.corpus.documents[section.doc_id]
        return {
            "section_id": section.section_id,
            "policy_number": None,
            "policy_title": doc.title,
            "policy_level": ranked.level,
            "text": with_heading(section, doc),
            "relevance_score": round(ranked.score, 4),
            "effective_date": doc.effective_date,
            "review_date": None,
            "source_url": url(doc),
        }

    def citation(self, ranked: Ranked, url: Callable[[Document], str]) -> PolicyCitation:
        section = ranked.section
        doc = self.corpus.documents[section.doc_id]
        where = url(doc)
        if where and section.anchor:
            where = f"{where}#{section.anchor}"
        return {
            "source": doc.title,
            "loc": section.heading,
            "chunk_id": section.section_id,
            "url": where,
        }

    def confidence(self, query: str, shown: Sequence[Ranked]) -> float:
        if not shown:
            return 0.0
        first = shown[0].section
        support = sum(1 for r in shown[1:] if r.section.doc_id == first.doc_id)
        base = BASE_CONFIDENCE + min(CORROBORATION_CAP, CORROBORATION_STEP * support)
        return round(max(0.0, min(1.0, base * self.search.coverage(query, first))), 3)


def with_heading(section: Section, doc: Document) -> str:
    """The section's text under its heading (a passage under the page's own title, or one that
    already opens with its heading, is its text alone)."""
    heading = section.heading.strip()
    if not heading or heading == doc.title or section.text.startswith(heading):
        return section.text
    return f"{heading}\n\n{section.text}"
