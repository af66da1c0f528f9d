"""The words a tool and a query are compared on: names split on `.`, `_`, `-` and camelCase,
lower case, common English words dropped, a light suffix stemmer so 'covered' meets 'coverage'
only when they share a stem, never by a synonym list."""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "up",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "any",
        "all",
        "also",
        "e",
        "g",
        "eg",
        "ie",
        "etc",
        "one",
        "per",
    ]
)


def split_name(name: str) -> str:
    """`opa.search_sections` -> 'opa search sections'; `getTrialDetails` -> 'get trial details'."""
    spaced = _CAMEL.sub(" ", name)
    return re.sub(r"[._\-/:]+", " ", spaced).lower()


@lru_cache(maxsize=1 << 16)  # the same words recur across thousands of tools and queries
def stem(word: str) -> str:
    """Strip one common English suffix (plural, -ing, -ed, -ly, -ion forms) from longer words."""
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix, keep in (
        ("ational", "ate"),
        ("ibilities", ""),
        ("ibility", ""),
        ("ible", ""),
        ("ages", ""),
        ("age", ""),
        ("ations", ""),
        ("ation", ""),
        ("ments", ""),
        ("ment", ""),
        ("ities", ""),
        ("ity", ""),
        ("ings", ""),
        ("ing", ""),
        ("ies", "y"),
        ("ed", ""),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("ly", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + keep
            break
    if word.endswith("ss"):
        return word
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case words of `text` (names split first), stop words kept."""
    return _WORD.findall(split_name(text))


def terms(text: str) -> list[str]:
    """The stemmed, stop-word-free terms BM25 counts."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]
