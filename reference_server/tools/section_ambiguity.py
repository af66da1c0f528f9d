"""Which documents a section question may mean, and what a section answer's confidence reads
from its ranking: the documents sharing a heading-like question's words, the guidance each
document belongs to (a policy with its companion advice), the margin and agreement between the
two paths, and the candidates an ambiguous answer lists. The merge itself (fusing the paths,
boosts, "nothing addresses this") is section_merge.py's; this module reads its `Ranked`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from reference_server.errors import IndexMissingError
from reference_server.retrieval.opa_sections import companions, current_headings
from reference_server.retrieval.sql import SqlClient
from reference_server.scoring.features import Signals
from reference_server.text import prefix_stem
from reference_server.tools.section_merge import Ranked, SectionHit, content_words

# Documents whose best section scores within this share of the first document's are "close":
# the ranking alone does not say which of them the question means.
CLOSE_SCORES = 0.1
MAX_CANDIDATES = 5


def _stems(text: str) -> set[str]:
    return {prefix_stem(w) for w in content_words(text)}


@dataclass(frozen=True)
class HeadingIndex:
    """Every current document by the subject words (`_stems`) of its title and headings."""

    by_word: dict[str, frozenset[str]]  # word -> the documents whose title or headings use it

    @staticmethod
    def of(texts: tuple[tuple[str, str], ...]) -> HeadingIndex:
        by_word: dict[str, set[str]] = {}
        for document, text in texts:
            for word in _stems(text):
                by_word.setdefault(word, set()).add(document)
        return HeadingIndex({w: frozenset(docs) for w, docs in by_word.items()})

    def documents(self, query: str) -> frozenset[str]:
        """The documents whose title and headings use every subject word of the question."""
        words = _stems(query)
        if not words:
            return frozenset()
        return frozenset.intersection(*(self.by_word.get(w, frozenset()) for w in sorted(words)))


NO_HEADINGS = HeadingIndex({})


def guidance_families(sql: SqlClient) -> Mapping[str, str]:
    """Companion documents by the document they accompany; empty when the SQL store cannot be
    read (then every document stands alone)."""
    try:
        return companions(sql)
    except (IndexMissingError, sqlite3.Error, OSError):
        return {}


def paths_agree(merged: Ranked) -> bool:
    """Whether the keyword path's best section and the vector path's best section are in the
    same guidance (a document or its companion): two independent rankings that lead with the
    same document make a wrong document first much less likely than when each leads with its
    own. False when either path found nothing or did not run."""
    by_sql = [h for h in merged.hits if h.sql_rank is not None]
    by_vector = [h for h in merged.hits if h.vector_rank is not None]
    if not by_sql or not by_vector:
        return False
    first_sql = min(by_sql, key=lambda h: (h.sql_rank or 0, h.section_id)).row.document_id
    first_vector = min(by_vector, key=lambda h: (h.vector_rank or 0, h.section_id)).row.document_id
    families = merged.families
    return families.get(first_sql, first_sql) == families.get(first_vector, first_vector)


def heading_index(sql: SqlClient) -> HeadingIndex:
    """The title and heading index of the current documents, built once per process; empty when
    the SQL store cannot be read (the vector path's answer stands, without this signal)."""
    try:
        return sql.derived.get(
            "section_ambiguity.heading_index", lambda: HeadingIndex.of(current_headings(sql))
        )
    except (IndexMissingError, sqlite3.Error, OSError):
        return NO_HEADINGS


def shared_heading(query: str, index: HeadingIndex) -> frozenset[str]:
    """The documents a short, heading-like question may mean: those whose title and section
    headings use every subject word of it ('Treatment options', 'Fees', 'Professional
    behaviour'). A question that names its subject ('CPSO policy on medical assistance in
    dying') is one document's, or none's."""
    return index.documents(query)


def best_per_document(hits: list[SectionHit]) -> list[SectionHit]:
    """Each document's best section, best first (hits are sorted best first)."""
    seen: set[str] = set()
    out = []
    for h in sorted(hits, key=lambda h: (-h.score, h.section_id)):
        if h.row.document_id not in seen:
            seen.add(h.row.document_id)
            out.append(h)
    return out


def best_per_guidance(merged: Ranked) -> tuple[float, ...]:
    """Each guidance's best score, best first (a document and its companion are one guidance:
    a policy's advice scoring close to the policy leaves no doubt about which policy answers)."""
    best: dict[str, float] = {}
    for h in best_per_document(merged.hits):
        family = merged.families.get(h.row.document_id, h.row.document_id)
        best.setdefault(family, h.score)
    return tuple(sorted(best.values(), reverse=True))


def lexical(query: str, hit: SectionHit) -> float:
    """The share of the question's subject words in the hit's document title and heading."""
    asked = _stems(query)
    if not asked:
        return 0.0
    named = _stems(f"{hit.row.document_title} {hit.row.section_heading}")
    return len(asked & named) / len(asked)


def names_all(query: str, hit: SectionHit) -> bool:
    """Whether the hit's document title and section heading use every subject word of the
    question: the section a heading-like question names, not another section of its document."""
    return lexical(query, hit) == 1.0


def unshown(query: str, merged: Ranked) -> int:
    """How many times more documents a short question may mean than the answer shows of them
    (1: one or none may be meant, or every one is shown): the answer is the asker's only if it
    shows the document they meant, at the section the question names."""
    if len(merged.sharing) <= 1:
        return 1
    shown = {h.row.document_id for h in merged.top if names_all(query, h)} & merged.sharing
    return max(1, round(len(merged.sharing) / max(1, len(shown))))


def section_signals(query: str, merged: Ranked) -> Signals:
    """The evidence a calibrated confidence reads from a section answer: the documents' best
    scores, the shared heading, the leading section's paths, similarity and words."""
    lead = merged.top[0] if merged.top else None
    return Signals(
        top_scores=best_per_guidance(merged)[:MAX_CANDIDATES],
        shared=unshown(query, merged),
        no_answer=not merged.addressed or lead is None,
        corroborated=bool(lead and lead.from_sql and lead.from_vector),
        similarity=lead.vector_similarity if lead else None,
        lexical=lexical(query, lead) if lead else None,
        lead_unmatched=bool(lead and merged.sharing)
        and lead is not None
        and lead.row.document_id not in merged.sharing,
        paths_agree=paths_agree(merged),
        title_gap=merged.title_gap,
    )


class Candidate(BaseModel):
    """A document the question may mean, by its best section."""

    document_id: str
    document_title: str
    source_url: str
    section_id: str
    section_heading: str
    score: float


AMBIGUITY_DESCRIPTION = (
    "Documents the question may mean when it does not say which: several documents' titles and "
    "headings use all its words, or several documents score within 10% of the first. The first result is "
    "one of them, not the answer, and confidence is lowered; empty when one document stands out."
)


def candidates(query: str, merged: Ranked) -> list[Candidate]:
    """The documents a question names no one of: the found ones whose title and headings use
    every subject word of a question several documents' do, and those within CLOSE_SCORES
    of the first document's best score (best first, at most MAX_CANDIDATES); empty when fewer
    than two."""
    if not merged.addressed:
        return []
    best = best_per_document(merged.hits)
    if not best:
        return []
    floor = (1.0 - CLOSE_SCORES) * best[0].score
    sharing = merged.sharing if len(merged.sharing) > 1 else frozenset()
    kept = [h for h in best if h.score >= floor or h.row.document_id in sharing]
    if len(kept) < 2:
        return []
    return [
        Candidate(
            document_id=h.row.document_id,
            document_title=h.row.document_title,
            source_url=h.row.source_url,
            section_id=h.section_id,
            section_heading=h.row.section_heading,
            score=round(h.score, 4),
        )
        for h in kept[:MAX_CANDIDATES]
    ]
