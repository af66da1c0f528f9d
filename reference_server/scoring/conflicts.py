"""Conflicts between sources: surfaced in every response, never hidden."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from reference_server.text import DIRECTIVE_STOPWORDS

# What a source can say about a field: text, a number, a flag, or a list of them. Typed so the
# published output schema says what a client may receive.
ConflictValue = str | int | float | bool | list[str] | list[float] | None


class Conflict(BaseModel):
    field: str = Field(description="What the sources disagree on.")
    sql_value: ConflictValue = Field(
        default=None, description="What the structured (SQL) source says."
    )
    vector_value: ConflictValue = Field(
        default=None, description="What the passage (vector) source says."
    )
    resolution: str = Field(description="Which value the answer uses, and why.")


def compare(field: str, sql_value: Any, vector_value: Any, resolution: str) -> Conflict | None:
    """A conflict when both sides have a value and they differ (numbers compared to the cent)."""
    if sql_value is None or vector_value is None:
        return None
    if isinstance(sql_value, int | float) and isinstance(vector_value, int | float):
        if round(float(sql_value), 2) == round(float(vector_value), 2):
            return None
    elif str(sql_value).strip().lower() == str(vector_value).strip().lower():
        return None
    return Conflict(
        field=field, sql_value=sql_value, vector_value=vector_value, resolution=resolution
    )


# -- requirement levels that disagree between sources (opa.ipac_guidance) ---------------------

LEVEL_RANK = {"must": 0, "should": 1, "may": 2}
_MUST = re.compile(r"\b(must|shall|required to|never)\b", re.I)
_SHOULD = re.compile(r"\b(should|advised|advisable|encouraged|recommended)\b", re.I)
_MAY = re.compile(r"\bmay\b", re.I)
_STOP = DIRECTIVE_STOPWORDS


@dataclass(frozen=True)
class Statement:
    """One sentence-level requirement from one source document."""

    level: str  # must | should | may
    text: str
    document_id: str
    source: str  # e.g. "PHO: Infection Prevention and Control for Clinical Office Practice"


def sentence_level(sentence: str) -> str | None:
    """Regulatory language of one sentence: must/shall/never > should/advised > may."""
    if _MUST.search(sentence):
        return "must"
    if _SHOULD.search(sentence):
        return "should"
    if _MAY.search(sentence):
        return "may"
    return None


def statements_from_text(text: str, document_id: str, source: str) -> list[Statement]:
    """The sentences of a passage that state a level (the rest describe, and cannot disagree)."""
    return list(_statements(text, document_id, source))


@lru_cache(maxsize=4096)
def _statements(text: str, document_id: str, source: str) -> tuple[Statement, ...]:
    """Passages are immutable once indexed: each is split and classified once per process."""
    out = []
    for sentence in re.split(r"(?<=[.;])\s+", text):
        level = sentence_level(sentence)
        if level:
            out.append(Statement(level, sentence.strip(), document_id, source))
    return tuple(out)


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """A statement's content words; statements are immutable, so each is read once."""
    return frozenset(
        w.rstrip("s")
        for w in re.findall(r"[a-z0-9]+", text.lower())
        if len(w) > 3 and w not in _STOP
    )


@lru_cache(maxsize=1024)
def _item_regex(item: str) -> re.Pattern[str]:
    """The item as a whole word or phrase (spaces or hyphens between words, plural allowed),
    compiled once per item rather than on every sentence it is checked against."""
    pattern = re.escape(item.lower()).replace(r"\ ", r"[\s-]+")
    return re.compile(rf"\b{pattern}(e?s)?\b")


@lru_cache(maxsize=1 << 16)
def _names(item: str, lowered: str) -> bool:
    """Whether a lower-cased statement names the item: asked again for the same statement and
    item on every call whose answer shares its sections, so each pair is searched once."""
    return _item_regex(item).search(lowered) is not None


_RUN = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=8192)
def _lowered_runs(text: str) -> tuple[str, frozenset[str]]:
    """A statement's text lower-cased and its distinct letter-digit runs: what `StatementIndex`
    indexes it by, read once per statement (statements are immutable)."""
    lowered = text.lower()
    return lowered, frozenset(_RUN.findall(lowered))


class StatementIndex:
    """Which statements name an item, in their original order.

    An inverted index over each statement's words: only statements containing the item's first
    word (or, for a one-word item, its plural) are searched with the item's regex, so the cost is
    the matches, not items x statements. A fixed comparison set (CPSO's IPAC statements) is
    indexed once per process and passed to `level_conflicts` as its `reference`."""

    def __init__(self, statements: list[Statement]):
        self._statements = statements
        read = [_lowered_runs(s.text) for s in statements]
        self._lowered = [lowered for lowered, _ in read]
        self._by_word: dict[str, list[int]] = {}
        for position, (_, words) in enumerate(read):
            for word in words:
                self._by_word.setdefault(word, []).append(position)

    def __call__(self, item: str) -> list[Statement]:
        words = _RUN.findall(item.lower())
        if not words or not item.lower().startswith(words[0]):
            positions: Iterable[int] = range(len(self._statements))  # no word to look up
        else:
            first = words[0]
            forms = (first, first + "s", first + "es") if len(words) == 1 else (first,)
            positions = sorted({p for form in forms for p in self._by_word.get(form, ())})
        return [self._statements[p] for p in positions if _names(item, self._lowered[p])]


def level_conflicts(
    answer: list[Statement],
    others: list[Statement],
    items: list[str],
    reference: StatementIndex | None = None,
) -> list[Conflict]:
    """Where another document states a different level for the same item and practice.

    `others` are this answer's own comparison statements; `reference`, an index built once,
    holds a fixed set searched after them (same result as appending its statements to
    `others`, without indexing them on every call).

    Two statements are about the same practice when both name the item and share at least two
    further content words (e.g. 'gloves' + 'contact', 'blood'); one conflict per item and pair of
    documents. The answer keeps its source's wording; the resolution says the stricter level
    applies, because a 'must' in either source binds the clinician.
    """
    conflicts: list[Conflict] = []
    seen: set[tuple[str, str, str]] = set()
    answer_naming, others_naming = StatementIndex(answer), StatementIndex(others)

    def named_in_others(item: str) -> list[Statement]:
        return others_naming(item) + (reference(item) if reference else [])

    for item in sorted({i for i in items if len(i) >= 4}):
        named_in_answer = answer_naming(item)
        if not named_in_answer:
            continue
        compared = named_in_others(item)
        item_words = _words(item)
        for a in named_in_answer:
            for b in compared:
                key = (item, a.document_id, b.document_id)
                if (
                    b.document_id == a.document_id
                    or b.level == a.level
                    or key in seen
                    or len((_words(a.text) & _words(b.text)) - item_words) < 2
                ):
                    continue
                seen.add(key)
                stricter = min(a.level, b.level, key=LEVEL_RANK.__getitem__)
                conflicts.append(
                    Conflict(
                        field=f"{item}: requirement level",
                        sql_value=f"{a.level} ({a.source}): {a.text}",
                        vector_value=f"{b.level} ({b.source}): {b.text}",
                        resolution=(
                            f"The requirement is listed as {a.source.split(':')[0]} words it "
                            f"('{a.level}'); {b.source.split(':')[0]} says '{b.level}'. Treat it as "
                            f"'{stricter}': the stricter level binds."
                        ),
                    )
                )
    return conflicts
