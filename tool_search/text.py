"""The words a tool and a query are compared on: names split on `.`, `_`, `-` and camelCase,
lower case, common English words dropped, a light suffix stemmer so 'covered' meets 'coverage'
only when they share a stem, never by a synonym list."""

from __future__ import annotations

import re

from reference_server.text import TOOL_TEXT_STOPWORDS, english_stem

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")

STOPWORDS = TOOL_TEXT_STOPWORDS


def split_name(name: str) -> str:
    """`opa.search_sections` -> 'opa search sections'; `getTrialDetails` -> 'get trial details'."""
    spaced = _CAMEL.sub(" ", name)
    return re.sub(r"[._\-/:]+", " ", spaced).lower()


stem = english_stem


def words(text: str) -> list[str]:
    """Lower-case words of `text` (names split first), stop words kept."""
    return _WORD.findall(split_name(text))


def terms(text: str) -> list[str]:
    """The stemmed, stop-word-free terms BM25 counts."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]
