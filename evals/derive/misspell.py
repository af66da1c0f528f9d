"""Misspellings clinicians make when they type a drug name, by rule and seed, never at random.

Each rule is a habit seen on real prescriptions and in clinical notes: a doubled letter written
once ('amoxicilin'), a single one doubled ('lippitor'), two neighbours swapped ('rampiril'), an
unstressed vowel dropped ('atorvstatin') or written as it sounds ('metforman'), and spellings by
ear ('ozempik', 'fenytoin', 'atorvastatine'). Which rule and where it applies are chosen from a
checksum of the seed and the name, so the same name gets the same misspelling on every run and
machine, and a new seed gives another set.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

VOWELS = "aeiou"


@dataclass(frozen=True)
class Misspelling:
    """A name as typed (``text``) and the rule that made it."""

    text: str
    rule: str


def _choose(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def _interior(word: str) -> range:
    """Positions a typist gets wrong: not the first letter, not the last."""
    return range(1, len(word) - 1)


def drop_double(word: str, key: str) -> str | None:
    spots = [i for i in _interior(word) if word[i] == word[i + 1] and word[i].isalpha()]
    if not spots:
        return None
    i = spots[_choose(key, len(spots))]
    return word[:i] + word[i + 1 :]


def double_single(word: str, key: str) -> str | None:
    spots = [
        i
        for i in _interior(word)
        if word[i].isalpha()
        and word[i].lower() not in VOWELS + "hwyx"
        and word[i] != word[i - 1]
        and word[i] != word[i + 1]
    ]
    if not spots:
        return None
    i = spots[_choose(key, len(spots))]
    return word[: i + 1] + word[i] + word[i + 1 :]


def transpose(word: str, key: str) -> str | None:
    spots = [
        i
        for i in range(1, len(word) - 2)
        if word[i] != word[i + 1] and word[i].isalpha() and word[i + 1].isalpha()
    ]
    if not spots:
        return None
    i = spots[_choose(key, len(spots))]
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def drop_vowel(word: str, key: str) -> str | None:
    spots = [
        i
        for i in range(2, len(word) - 2)
        if word[i].lower() in VOWELS
        and word[i - 1].lower() not in VOWELS
        and word[i + 1].lower() not in VOWELS
    ]
    if not spots:
        return None
    i = spots[_choose(key, len(spots))]
    return word[:i] + word[i + 1 :]


# Spellings by ear: (pattern, replacement) on the lower-cased name; the first that applies at
# the chosen place is used. '-in' names gain an 'e' or lose their 'i' to an 'a' as they are said.
SOUNDS: tuple[tuple[str, str], ...] = (
    (r"ph", "f"),
    (r"(?<=[aeiou])c(?=[aou]|$)", "k"),
    (r"(?<=[aeiou])s(?=[aeiou])", "z"),
    (r"y", "i"),
    (r"in$", "ine"),
    (r"ine$", "in"),
    (r"(?<=[^aeiou])in$", "an"),
    (r"ide$", "id"),
    (r"(?<=[^aeiou])ol$", "ole"),
    (r"x", "cks"),
)


def by_ear(word: str, key: str) -> str | None:
    lower = word.lower()
    options = [
        (m.start(), m.end(), replacement)
        for pattern, replacement in SOUNDS
        for m in re.finditer(pattern, lower)
        if m.start() > 0 or pattern == "ph"
    ]
    if not options:
        return None
    start, end, replacement = options[_choose(key, len(options))]
    return lower[:start] + replacement + lower[end:]


RULES: dict[str, Callable[[str, str], str | None]] = {
    "drop_double": drop_double,
    "double_single": double_single,
    "transpose": transpose,
    "drop_vowel": drop_vowel,
    "by_ear": by_ear,
}


def misspell(name: str, seed: int = 0) -> Misspelling | None:
    """One misspelling of a one-word name, the rule chosen by seed and name (None when no rule
    applies or the result is the name itself)."""
    key = f"{seed}:{name.lower()}"
    order = list(RULES)
    first = _choose(key, len(order))
    for n in range(len(order)):
        rule = order[(first + n) % len(order)]
        text = RULES[rule](name, f"{key}:{rule}")
        if text and text.lower() != name.lower():
            return Misspelling(text, rule)
    return None
