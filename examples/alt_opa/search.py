"""Keyword retrieval: a small BM25 over each section's heading, context, document title and text.

Tokens are lower-case letter/digit runs without stop words, cut to their first six letters (a
plain truncation stemmer: ``sterilized``, ``sterilizers`` and ``sterilization`` all become
``steril``); tokens holding a digit (``n95``, ``k080``) stay whole. The heading counts twice.
Scores are rounded to six decimals and ties broken by section id, so a ranking never depends
on float noise.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from examples.alt_opa.corpus import Corpus, Document, Section

STEM_LENGTH = 6
K1 = 1.2
B = 0.75
HEADING_WEIGHT = 2
# below this share of the query's weight found in the best section, no document addresses it
RELEVANCE_FLOOR = 0.45

STOP_WORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """a about above after again all also am an and any are as at be because been before being
    between both but by can could did do does doing during each few for from further had has
    have having he her here hers him his how i if in into is it its itself just me more most my
    no nor not of off on once only or other our out over own same she should so some such than
    that the their them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your yours
    must may shall""",
    )
)
_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    out = []
    for raw in _TOKEN.findall(text.casefold()):
        if raw in STOP_WORDS or (len(raw) < 2 and not raw.isdigit()):
            continue
        out.append(raw if any(c.isdigit() for c in raw) else raw[:STEM_LENGTH])
    return out


def section_terms(section: Section, document: Document) -> list[str]:
    parts = [section.heading] * HEADING_WEIGHT + [
        *section.context,
        document.title,
        *document.topics,
        section.extra_terms,
        section.text,
    ]
    return tokens(" ".join(parts))


@dataclass(frozen=True)
class Hit:
    section: Section
    score: float


class Bm25:
    """An inverted index of term -> [(row, tf)] and Okapi BM25 over it."""

    def __init__(self, rows: Sequence[list[str]], k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.lengths = [len(r) for r in rows]
        self.average = (sum(self.lengths) / len(rows)) if rows else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, row in enumerate(rows):
            for term, tf in Counter(row).items():
                self.postings[term].append((i, tf))
        n = len(rows)
        self.idf = {
            t: math.log(1.0 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in self.postings.items()
        }

    def scores(self, query: Iterable[str], allowed: set[int] | None = None) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        for term, qtf in Counter(query).items():
            idf = self.idf.get(term)
            if idf is None:
                continue
            for row, tf in self.postings[term]:
                if allowed is not None and row not in allowed:
                    continue
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[row] / self.average)
                out[row] += qtf * idf * tf * (self.k1 + 1.0) / (tf + norm)
        return dict(out)


@dataclass(frozen=True)
class Filters:
    source_org: str | None = None
    document_type: str | None = None
    topics: tuple[str, ...] = ()
    include_superseded: bool = False


def _norm_topic(text: str) -> str:
    return " ".join(re.sub(r"[-_/]+", " ", text.casefold()).split())


def topic_matches(wanted: Sequence[str], have: Sequence[str]) -> bool:
    """Any wanted topic equals one of ``have`` or is a whole-word part of one (or contains one)."""
    for w in (_norm_topic(t) for t in wanted):
        for h in (_norm_topic(t) for t in have):
            if w == h or f" {w} " in f" {h} " or f" {h} " in f" {w} ":
                return True
    return False


class SectionSearch:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.rows = [s for s in corpus.sections if s.searchable]
        self.terms = [section_terms(s, corpus.documents[s.doc_id]) for s in self.rows]
        self.index = Bm25(self.terms)
        self.term_sets = [set(t) for t in self.terms]
        self.row_of = {s.section_id: i for i, s in enumerate(self.rows)}

    def _allowed(self, filters: Filters) -> set[int] | None:
        if not (filters.source_org or filters.document_type or filters.topics):
            return None
        keep = set()
        for i, s in enumerate(self.rows):
            doc = self.corpus.documents[s.doc_id]
            if filters.source_org and doc.org != filters.source_org:
                continue
            if filters.document_type and doc.doc_type != filters.document_type:
                continue
            if filters.topics and not topic_matches(filters.topics, doc.topics):
                continue
            keep.add(i)
        return keep

    def search(self, query: str, filters: Filters) -> list[Hit]:
        """Every matching section, best first (a section of a superseded document would be
        dropped unless asked for; the publishers' extracts mark none as superseded)."""
        scores = self.index.scores(tokens(query), self._allowed(filters))
        ranked = sorted(
            ((round(v, 6), self.rows[i].section_id, i) for i, v in scores.items() if v > 0),
            key=lambda x: (-x[0], x[1]),
        )
        return [Hit(self.rows[i], score) for score, _, i in ranked]

    def coverage(self, query: str, section: Section) -> float:
        """Share of the query's idf weight whose terms the section (with its title) holds."""
        wanted = set(tokens(query))
        if not wanted:
            return 0.0
        row = self.row_of[section.section_id]
        weight = {
            t: self.index.idf.get(t, max(self.index.idf.values(), default=1.0)) for t in wanted
        }
        held = sum(w for t, w in weight.items() if t in self.term_sets[row])
        return held / sum(weight.values())


def promote_second_document(hits: list[Hit]) -> list[Hit]:
    """Seeded defect ``wrong_document``: the runner-up document's sections go first."""
    order: list[str] = []
    for h in hits:
        if h.section.doc_id not in order:
            order.append(h.section.doc_id)
    if len(order) < 2:
        return hits
    second = order[1]
    return [h for h in hits if h.section.doc_id == second] + [
        h for h in hits if h.section.doc_id != second
    ]
