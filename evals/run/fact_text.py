"""Whether free text states a fact, however a backend words it.

A check on prose must judge the fact, not one backend's phrasing: "Limited to one service per
hospital admission" and "1 service per admission" state the same limit. A fact is written as a
short term and matched tolerantly:

| term | matches |
|---|---|
| a number, ``48`` or ``61.15`` | the number in digits or words (``one``..``twenty``, ``once``, ``twice``), ``$61.15``, ``1,250.00`` |
| a public key, ``C124``, ``DIN 02303922``, ``LU 665``, an URL | the same key in any spelling (evals/run/public_keys.py) |
| a phrase, ``1 service per hospital admission``, ``48 hours``, ``25%`` | its words in order, case, punctuation and a plural ``s`` ignored, numbers compared as numbers (``one service``), units in any usual spelling (``48 h``, ``48-hour``, ``25 percent``, ``100mg``) |
| a list of terms | any one of them |
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

from evals.run.public_keys import public_key

NUMBER_WORDS: dict[str, float] = {
    word: float(n)
    for n, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
NUMBER_WORDS.update(
    {"once": 1.0, "twice": 2.0, "single": 1.0, "thirty": 30.0, "forty": 40.0, "fifty": 50.0}
)

# unit -> its spellings (first is the canonical name); a term's unit is any of them
UNITS: tuple[tuple[str, ...], ...] = (
    ("%", "percent", "per cent", "pct"),
    ("hours", "hour", "hrs", "hr", "h"),
    ("days", "day", "d"),
    ("weeks", "week", "wks", "wk"),
    ("months", "month", "mos", "mo"),
    ("years", "year", "yrs", "yr"),
    ("mg", "milligrams", "milligram"),
    ("mcg", "micrograms", "microgram", "µg", "ug"),
    ("ml", "millilitres", "milliliters", "millilitre", "milliliter"),
    ("minutes", "minute", "mins", "min"),
)
_UNIT_OF = {spelling: names[0] for names in UNITS for spelling in names}
_NUM = r"\d[\d,]*(?:\.\d+)?|\.\d+"
_TOKEN = re.compile(rf"\$?(?:{_NUM})|%|[^\W\d_]+|\d+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    folded = re.sub(r"\bper\s+cent\b", "percent", text.casefold())
    return _TOKEN.findall(folded)


def _number(token: str) -> float | None:
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    cleaned = token.lstrip("$").replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _has_number(tokens: list[str], want: float, tolerance: float) -> bool:
    return any(
        (value := _number(token)) is not None and abs(value - want) <= tolerance for token in tokens
    )


def _same_token(have: str, want: str, tolerance: float) -> bool:
    """Numbers compare as numbers, units by their canonical name, words without a plural s."""
    a, b = _number(have), _number(want)
    if a is not None or b is not None:
        return a is not None and b is not None and abs(a - b) <= tolerance
    unit_a, unit_b = _UNIT_OF.get(have), _UNIT_OF.get(want)
    if unit_a or unit_b:
        return (unit_a or have) == (unit_b or want)
    return _singular(have) == _singular(want)


def _has_phrase(tokens: list[str], want: list[str], tolerance: float) -> bool:
    n = len(want)
    return any(
        all(_same_token(tokens[i + j], want[j], tolerance) for j in range(n))
        for i in range(len(tokens) - n + 1)
    )


def states(text: str, term: Any, tolerance: float = 1e-6) -> bool:
    """Whether ``text`` states ``term``: a number, a public key, or a phrase whose numbers,
    units and words are matched as above. A list of terms is a choice: any one will do."""
    if isinstance(term, list):
        return any(states(text, choice, tolerance) for choice in term)
    tokens = _tokens(text)
    if isinstance(term, int | float) and not isinstance(term, bool):
        return _has_number(tokens, float(term), tolerance)
    term_text = str(term).strip()
    key = public_key(term_text)
    if key is not None:  # a key is the key: a longer URL or another code is not it
        return any(public_key(part) == key for part in _key_spans(text, term_text))
    want = _tokens(term_text)
    return bool(want) and _has_phrase(tokens, want, tolerance)


def _key_spans(text: str, term: str) -> Iterator[str]:
    """Pieces of ``text`` that may spell the key ``term`` names (the whole text, its lines,
    its sentences and each token with the word before it)."""
    yield text
    yield from (line for line in text.splitlines() if line.strip())
    words = [w.strip(".,;:()[]{}\"'*") for w in text.split()]
    yield from words
    yield from (f"{a} {b}" for a, b in itertools.pairwise(words))
    yield from (" ".join(words[i : i + 3]) for i in range(len(words) - 2))
    if term.casefold().startswith("http"):
        yield from re.findall(r"https?://\S+", text)


def text_under(node: Any) -> str:
    """Every string under ``node`` (dicts and lists walked), one per line."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(str(value))
        elif isinstance(value, dict):
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(node)
    return "\n".join(parts)


# the usual ways an answer says something is not so: "not", "no", "nothing", "ineligible",
# "excluded", "won't", "doesn't", "refuse"... (contractions are split by the tokenizer: n't -> t)
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "nothing",
        "none",
        "never",
        "neither",
        "nor",
        "without",
        "cannot",
        "ineligible",
        "excluded",
        "exclusion",
        "excludes",
        "refuse",
        "refuses",
        "refused",
        "denied",
        "deny",
        "t",
    ]
)


def denies(text: str, about: Any = None) -> bool:
    """Whether ``text`` says no (a negation cue anywhere, in any usual wording), and, with
    ``about``, also states that term (so "no fast-track" or "nothing for repairs")."""
    tokens = _tokens(text.replace("\u2019", "'"))
    negated = any(token in NEGATIONS for token in tokens)
    return negated and (about is None or states(text, about))
