"""The words texts are compared on: every stop-word list and stemmer of the server and of tool
search, in one place.

They are not one list and one stemmer, and the differences are deliberate (each was measured on
the answers it serves; merging them changes answers):

- `QUESTION_STOPWORDS`: the words of a clinician's question that say nothing about its subject
  (the SQL path's full-text queries, the OPA subject words). 'patient' is one: every question is
  about one.
- `DIRECTIVE_STOPWORDS`: the words two guidance sentences share without agreeing or disagreeing
  (the conflict finder). The directive verbs ('must', 'may', 'never', 'not') are compared by level
  elsewhere, so here they are dropped; question words never occur in guidance.
- `TOOL_TEXT_STOPWORDS`: common English in tool names and descriptions (tool search), where
  'patient' and 'under' are content.

Stemmers, from lightest to strongest:
- `plural_stem`: one of -ing, -es, -s, -ed, keeping at least four letters (OHIP descriptions,
  whose abbreviations are spelt out first);
- `prefix_stem`: the word less its last three letters, at least four kept (OPA subject words:
  'licences' meets 'licence', 'dosing' meets 'dose');
- `english_stem`: one of the common English suffixes with its replacement (tool search: 'covered'
  meets 'coverage' only when they share a stem).

The derived case families keep their own lists on purpose: a case must not share code with the
tool it judges.
"""

from __future__ import annotations

from functools import lru_cache

QUESTION_STOPWORDS = frozenset(
    {"a", "about", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does", "for"}
    | {"from", "how", "i", "in", "is", "it", "my", "of", "on", "or", "patient", "patients"}
    | {"should", "that", "the", "their", "there", "this", "to", "under", "what", "when", "which"}
    | {"who", "why", "with"}
)

DIRECTIVE_STOPWORDS = (
    QUESTION_STOPWORDS
    - {"about", "can", "do", "does", "how", "i", "my", "there", "under", "what", "which", "who"}
    - {"why"}
) | frozenset(
    {"after", "all", "before", "each", "every", "into", "its", "may", "must", "never", "no"}
    | {"not", "physician", "physicians", "shall", "staff", "they", "use", "used", "using"}
)

TOOL_TEXT_STOPWORDS = (QUESTION_STOPWORDS - {"about", "patient", "patients", "under"}) | frozenset(
    {"all", "also", "been", "being", "but", "could", "e", "eg", "etc", "g", "has", "have", "ie"}
    | {"if", "into", "its", "me", "one", "our", "per", "so", "such", "than", "them", "then"}
    | {"these", "those", "up", "us", "was", "we", "were", "where", "whom", "will", "would"}
    | {"you", "your"}
)


def plural_stem(word: str) -> str:
    """Strip one of -ing, -es, -s, -ed when at least four letters remain."""
    for suffix in ("ing", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


PREFIX_STEM_MIN_LETTERS = 4


def prefix_stem(word: str) -> str:
    """The word less its last three letters, at least `PREFIX_STEM_MIN_LETTERS` kept."""
    return word[: max(PREFIX_STEM_MIN_LETTERS, len(word) - 3)]


_ENGLISH_SUFFIXES = (
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
)


@lru_cache(maxsize=1 << 16)  # the same words recur across thousands of tools and queries
def english_stem(word: str) -> str:
    """Strip one common English suffix (plural, -ing, -ed, -ly, -ion forms) from longer words."""
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix, keep in _ENGLISH_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + keep
            break
    if word.endswith("ss"):
        return word
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word
