"""The merge step the section-level `opa.*` tools share: both paths' section rows into one ranking.

Fusion is reciprocal-rank fusion of the two ranked lists, collapsed to one hit per parent
section (its best chunk), then the spec's boosts: exact phrase +50 %, title match +30 %,
CPSO expectation +20 %, recency decay over 5 years, superseded -70 %; and ours: up to +80 % for
the document's topics said in the question (`topic_coverage`). The optional reranker
reorders the fused list; the SQL and vector copies of a section's metadata are compared here,
where both are at hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

from reference_server import ranking
from reference_server.config import Fusion, Settings
from reference_server.retrieval import rerank
from reference_server.retrieval.opa_section_rows import SectionRow
from reference_server.retrieval.sql import STOPWORDS
from reference_server.retrieval.vector import ChunkMetadata, VectorHit
from reference_server.scoring.confidence import OPA, Counts
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.text import prefix_stem
from reference_server.tools.base import ExtraMeta

# Fusion parameters, chosen on the OPA golden set (`make eval`, ablation table): weighted
# reciprocal-rank fusion with a small k and the vector list counting double (keyword matches
# on common words such as 'requirements' are noisier than embeddings).
RRF_K = 10
VEC_W = 2.0
# A document's topics (its corpus `topics`) said whole in the question: the fused score grows by
# up to this share, in proportion to how much of the question's subject they cover. Titles and
# headings rarely restate a question asked by subject ('benzodiazepines, tapering and z-drugs'),
# so without it a neighbouring document that shares one of those words ranks first. Chosen on
# the derived OPA sets (opa.document_topic 100 -> 109 of 113 first; headings searched as written
# 433 -> 431 of 451 in the first five, paraphrased 419 -> 418): 0.5 gave 107, 1.5 gave 112 but
# cost 5 headings.
TOPIC_BOOST = 0.8
# Distinct topic strings remembered (`_topic_phrase`); the corpus has a few hundred.
TOPIC_CACHE_SIZE = 8192


@dataclass
class SectionHit:
    """One parent section in the fused ranking, represented by its best-matching chunk.
    Mutable: the reranker and a tool's own boosts change `score`."""

    section_id: str
    parent_id: str
    row: SectionRow
    score: float = 0.0
    sql_rank: int | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    vector_meta: ChunkMetadata = field(default_factory=dict)  # the vector store's metadata

    @property
    def from_sql(self) -> bool:
        return self.sql_rank is not None

    @property
    def from_vector(self) -> bool:
        return self.vector_rank is not None


@dataclass(frozen=True)
class Ranked:
    """A section tool's merged value: every fused section, the ones the answer shows, and what
    the reranker did (for `_meta`)."""

    hits: list[SectionHit]  # best first
    top: list[SectionHit]
    rerank: ExtraMeta
    addressed: bool = True  # False: no document addresses the question (`not_addressed`)
    # documents whose title and headings use every subject word of the question
    sharing: frozenset[str] = frozenset()
    # companion document -> the document it accompanies (`guidance_of`)
    families: Mapping[str, str] = field(default_factory=dict)
    # how much nearer the leading guidance's title lies to the question than any other's
    # (tools/guidance_titles.py); None where the tool does not measure it
    title_gap: float | None = None


WORD_RE = re.compile(r"[a-z0-9]+")
WRITTEN_WORD_RE = re.compile(r"[A-Za-z0-9]+")  # as written, capitals kept


def _query_terms(query: str) -> list[str]:
    return [w for w in WORD_RE.findall(query.lower()) if w not in STOPWORDS and len(w) > 2]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=TOPIC_CACHE_SIZE)
def _topic_phrase(topic: str) -> tuple[str, ...]:
    """A topic's words, singular: topics are read-only index data, so each is split once per
    process instead of once per hit of every call."""
    return tuple(_singular(w) for w in WORD_RE.findall(topic.lower()))


@dataclass(frozen=True)
class Question:
    """What every hit's boost reads from the question, computed once per call (`fuse`)."""

    text: str
    words: tuple[str, ...]  # every word, singular
    subject: frozenset[int]  # positions of the words that are not stopwords
    terms: tuple[str, ...]  # `_query_terms`
    phrase: str | None  # the question lower-cased, when two words or more (exact phrase boost)
    word_set: frozenset[str]  # `words`, for a topic's first word to be looked up

    @classmethod
    def of(cls, query: str) -> Question:
        raw = WORD_RE.findall(query.lower())
        q = query.lower().strip()
        words = tuple(_singular(w) for w in raw)
        return cls(
            text=query,
            words=words,
            subject=frozenset(i for i, w in enumerate(raw) if w not in STOPWORDS),
            terms=tuple(_query_terms(query)),
            phrase=q if len(q.split()) >= 2 else None,
            word_set=frozenset(words),
        )

    def topic_coverage(self, topics: tuple[str, ...] | list[str]) -> float:
        """See `topic_coverage`."""
        if not self.subject:
            return 0.0
        words = self.words
        covered: set[int] = set()
        for topic in topics:
            phrase = _topic_phrase(topic)
            n = len(phrase)
            if not n or phrase[0] not in self.word_set:  # it cannot start anywhere
                continue
            for start in range(len(words) - n + 1):
                if words[start : start + n] == phrase:
                    covered.update(range(start, start + n))
        return len(covered.intersection(self.subject)) / len(self.subject)


def topic_coverage(query: str, topics: tuple[str, ...] | list[str]) -> float:
    """The share of the question's subject words (stopwords dropped) inside one of the
    document's topics said whole in the question ('z-drugs' covers 'z drugs'; plurals meet
    singulars). 0 when no topic is in the question."""
    return Question.of(query).topic_coverage(topics)


def boost(hit: SectionHit, query: str | Question, today: date) -> float:
    """The spec's multiplicative boosts and penalties for one hit, and the topic boost.
    ``query`` may be a `Question` already read, as `fuse` passes for every hit of a call."""
    question = query if isinstance(query, Question) else Question.of(query)
    row = hit.row
    factor = 1.0 + TOPIC_BOOST * question.topic_coverage(row.topics)
    if question.phrase is not None and question.phrase in row.text.lower():
        factor *= 1.5
    terms = question.terms
    title = row.document_title.lower()
    if terms and sum(t in title for t in terms) / len(terms) >= 0.5:
        factor *= 1.3
    if row.source_org == "cpso" and row.policy_level == "expectation":
        factor *= 1.2
    updated = row.updated_date or row.effective_date
    if updated:
        years = max(0.0, (today - date.fromisoformat(str(updated)[:10])).days / 365.25)
        factor *= 1.0 - 0.2 * min(years, 5.0) / 5.0  # linear decay to 0.8 at five years
    if row.is_superseded:
        factor *= 0.3
    return factor


def fuse(
    sql_rows: list[SectionRow] | None,
    vector_hits: list[VectorHit] | None,
    query: str,
    today: date,
    fusion: Fusion | None = None,
) -> list[SectionHit]:
    """Weighted RRF of both lists, one hit per parent section, boosts applied; best first.
    ``fusion`` (the server's settings) may change k, the vector weight or switch boosts off."""
    rrf_k = fusion.rrf_k if fusion else RRF_K
    vec_w = fusion.vector_weight if fusion else VEC_W
    boosts = fusion.boosts if fusion else True
    by_parent: dict[str, SectionHit] = {}

    for rank, row in enumerate(sql_rows or [], start=1):
        pid = row.parent_id or row.section_id
        hit = by_parent.get(pid)
        if hit is None:
            by_parent[pid] = SectionHit(row.section_id, pid, row, sql_rank=rank)
        elif hit.sql_rank is None:
            hit.sql_rank = rank
    for rank, vhit in enumerate(vector_hits or [], start=1):
        pid = vhit.metadata.get("parent_id") or vhit.id
        hit = by_parent.get(pid)
        if hit is None:
            hit = by_parent[pid] = SectionHit(vhit.id, pid, SectionRow.from_vector(vhit))
        if hit.vector_rank is None:
            hit.vector_rank = rank
            hit.vector_similarity = vhit.similarity
            hit.vector_meta = vhit.metadata
    question = Question.of(query)
    for hit in by_parent.values():
        rrf = 0.0
        if hit.sql_rank is not None:
            rrf += 1.0 / (rrf_k + hit.sql_rank)
        if hit.vector_rank is not None:
            rrf += vec_w / (rrf_k + hit.vector_rank)
        fused = rrf * (rrf_k + 1) * (boost(hit, question, today) if boosts else 1.0)
        hit.score = ranking.score(fused)
    return sorted(by_parent.values(), key=lambda h: (-h.score, h.section_id))


def metadata_conflicts(hits: list[SectionHit]) -> list[Conflict]:
    """Where the vector store's copy of a section's metadata disagrees with SQL (a stale index)."""
    conflicts = []
    for hit in hits:
        meta = hit.vector_meta
        if not meta:
            continue
        row = hit.row
        checks = [
            ("is_superseded", row.is_superseded, meta.get("is_superseded")),
            ("updated_date", str(row.updated_date or ""), meta.get("updated_date")),
            ("policy_level", row.policy_level or "", meta.get("policy_level")),
        ]
        ipac = meta.get("ipac")
        if row.ipac and ipac and isinstance(ipac, str):  # stored as JSON text
            vector_block = json.dumps(json.loads(ipac), sort_keys=True)
            checks.append(("ipac", row.ipac.canonical, vector_block))
        for name, sql_value, vector_value in checks:
            c = compare(
                f"{hit.section_id}.{name}",
                sql_value,
                vector_value,
                "SQL metadata is authoritative; rebuild the index",
            )
            if c:
                conflicts.append(c)
    return conflicts


async def rerank_sections(
    settings: Settings, query: str, hits: list[SectionHit], spent_ms: float = 0.0
) -> tuple[list[SectionHit], ExtraMeta]:
    """Fused hits through the optional reranker (OCM_RERANK); `_meta` to report what it did.
    `spent_ms` (the dual-path time) keeps the rerank call inside the whole-tool timeout."""
    ranked, outcome = await rerank.rerank(
        settings,
        query,
        hits,
        id_of=lambda h: h.section_id,
        text_of=lambda h: f"{h.row.document_title} - {h.row.section_heading}\n{h.row.text}",
        spent_ms=spent_ms,
    )
    meta: ExtraMeta = {"rerank": outcome.meta()} if outcome else {}
    return ranked, meta


async def fused_and_reranked(
    settings: Settings,
    query: str,
    sql_rows: list[SectionRow] | None,
    vector_hits: list[VectorHit] | None,
    spent_ms: float,
) -> tuple[list[SectionHit], ExtraMeta]:
    """The merge step of every section-level tool: fuse both paths, then the optional rerank."""
    hits = fuse(sql_rows, vector_hits, query, settings.today(), settings.fusion)
    return await rerank_sections(settings, query, hits, spent_ms)


# "No document addresses this question", decided from what both paths found, never from a list
# of subjects. Measured with the local MiniLM embeddings on the golden OPA questions and on
# questions about subjects no document covers (veterinary dosing, tax filing, car repair, a
# fictitious CPSO policy): on-topic questions' best passage scores 0.45-0.86 (below 0.56 only with
# every subject word found), unrelated subjects
# 0.10-0.35; a question about a fictitious policy of a real publisher borrows that publisher's
# words and reaches 0.50-0.55, but names a subject no found section uses.
ADDRESSED_SIMILARITY = 0.40  # below: nothing in the corpus is about the question
CLEARLY_ADDRESSED_SIMILARITY = 0.56  # at or above: a passage is about it, whatever the words
# Confidence of an answer no document addresses: the formula's value less this, so at most 0.5.
NOT_ADDRESSED_PENALTY = 0.5
# Subject words are words of three letters or more that are not stopwords. A word this short or
# shorter ('cat', 'dog', 'car', 'hst') is a whole subject, not a stem: it is matched as a word of
# its own, so 'cat' is not found in 'indicate'; and written in lower case it names a thing, not
# the acronym the same letters spell in capitals ('cat' is not the COPD Assessment Test, 'CAT').
_MIN_CONTENT_LETTERS = 3
_WHOLE_WORD_LETTERS = 3


def content_words(query: str) -> list[str]:
    """The query's words that carry its subject (three letters or more, not a stopword)."""
    words = WORD_RE.findall(query.lower())
    return list(
        dict.fromkeys(w for w in words if w not in STOPWORDS and len(w) >= _MIN_CONTENT_LETTERS)
    )


def _short_word_found(word: str, found_words: set[str]) -> bool:
    """A short query word among the found sections' words (as written): in capitals it is an
    acronym and matches in any case; otherwise its lower-case or capitalised form must be used,
    not only an acronym of the same letters."""
    if word.isupper():
        return any(w.lower() == word.lower() for w in found_words)
    return word.lower() in found_words or word.capitalize() in found_words


def unmatched_words(query: str, hits: list[SectionHit]) -> list[str]:
    """Content words of the query that no found section uses (in its title, heading, topics or
    text): the subject the answer would be about is not in what either path found. A short word
    must be found as a word of its own, a longer one by its stem."""
    found = " ".join(
        f"{h.row.document_title} {h.row.section_heading} {' '.join(h.row.topics)} {h.row.text}"
        for h in hits
    )
    lowered = found.lower()
    content = content_words(query)
    short = {
        w
        for w in WRITTEN_WORD_RE.findall(query)
        if w.lower() in content and len(w) <= _WHOLE_WORD_LETTERS
    }
    found_words = set(WRITTEN_WORD_RE.findall(found)) if short else set()
    unmatched_short = {w.lower() for w in short if not _short_word_found(w, found_words)}
    return [
        w
        for w in content
        if (
            w in unmatched_short if len(w) <= _WHOLE_WORD_LETTERS else prefix_stem(w) not in lowered
        )
    ]


def not_addressed(query: str, hits: list[SectionHit]) -> bool:
    """Whether no document addresses the question: nothing found at all; or the best vector
    passage is far from it; or it is only moderately close and the question names a subject
    none of the found sections mentions. Without the vector path (keyword mode, a failed path)
    the words decide alone: most of the question's subject words unmatched."""
    if not hits:
        return True
    similarities = [h.vector_similarity for h in hits if h.vector_similarity is not None]
    unmatched = unmatched_words(query, hits)
    if not similarities:
        return len(unmatched) * 2 > len(content_words(query))
    best = max(similarities)
    if best < ADDRESSED_SIMILARITY:
        return True
    return best < CLEARLY_ADDRESSED_SIMILARITY and bool(unmatched)


def section_counts(hits: list[SectionHit], *, addressed: bool = True) -> Counts:
    """The OPA evidence of the sections an answer uses: a section both paths found is an SQL hit
    corroborated by the vector path; each vector passage is a passage (see scoring/confidence.py).
    An answer no document addresses (`not_addressed`) carries NOT_ADDRESSED_PENALTY."""
    return Counts(
        sql_records=sum(h.from_sql for h in hits),
        vector_passages=sum(h.from_vector for h in hits),
        profile=OPA,
        corroborated=sum(h.from_sql and h.from_vector for h in hits),
        penalty=0.0 if addressed else NOT_ADDRESSED_PENALTY,
    )


def truncate(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
