"""Text of an exact length for boundary cases: clinical English or random code points, fitted to
a JSON Schema ``pattern`` when the plain text breaks it.

Generated strings rarely reach a schema's ``maxLength`` (a tool that fails on a few hundred
characters of ordinary prose passed every random run), so the edges of a string field are
written here on purpose: deterministic for a given seed, exactly ``length`` code points (JSON
Schema counts code points, as ``len`` does). When the plain text does not match the field's
``pattern``, the pattern itself is walked (Python's regex parser) to build a string of that
length from the same preferred characters; ``None`` when no such string exists.
"""

from __future__ import annotations

import random
import re
import re._constants as sre  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable
from typing import Any, Literal

Style = Literal["words", "codepoints"]

# Sentences are drawn from these words in a fixed pattern: realistic enough that a tool parses
# them as a question (stemming, phrase look-ups, embeddings), plain enough to read in a report.
SUBJECTS = ("The patient", "A resident", "My client", "The physician", "An older adult")
VERBS = ("asked about", "needs", "was referred for", "is eligible for", "missed")
OBJECTS = (
    "cervical screening",
    "a power wheelchair",
    "the discharge day visit",
    "statin coverage",
    "hand hygiene training",
    "virtual care documentation",
    "a CPAP machine",
    "colorectal screening",
    "the renal dose",
    "informed consent",
)
TAILS = ("after surgery", "at home", "in long-term care", "this year", "with diabetes", "")

# Code points outside ASCII that break naive text handling: accented Latin, Greek, Cyrillic,
# Hebrew and Arabic (right-to-left), CJK, combining marks, astral emoji, a non-breaking space.
CODEPOINTS = (
    "\u00e9\u00f1\u00fc\u00df\u0153\u03a9\u03bb\u0416\u044f\u05e9\u05dc\u0645\u0631"
    "\u4e2d\u6587\u3042\u30ab\ud55c\u0301\u0308\u0327\u00a0\u2003"
    "\U0001f489\U0001f3e5\U0001fa7a\U0001f9ea\U0001d11e"
)
WORD_CHARS = "etaoinsrhldcumfpgwybvkxjqzETAOINSRHLDCUMFPGWYBVKXJQZ0123456789 .,-'"
ASCII_DIGITS = "0123456789"


def words(length: int, rng: random.Random) -> str:
    """Clinical English sentences cut to exactly ``length`` characters (no leading or trailing
    space, so a trimming server sees the same length)."""
    parts: list[str] = []
    size = 0
    while size < length + 1:
        tail = rng.choice(TAILS)
        sentence = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        sentence += f" {tail}." if tail else "."
        parts.append(sentence)
        size += len(sentence) + 1
    text = " ".join(parts)[:length]
    if text.endswith(" "):
        text = text[:-1] + "."
    return text


def codepoints(length: int, rng: random.Random) -> str:
    """``length`` code points drawn from CODEPOINTS (combining marks, emoji, right-to-left
    letters); starts with a letter so the text is not all marks or spaces."""
    if length <= 0:
        return ""
    letters = [c for c in CODEPOINTS if c.isalpha()]
    return rng.choice(letters) + "".join(rng.choice(CODEPOINTS) for _ in range(length - 1))


def plain_text(style: Style, length: int, rng: random.Random) -> str:
    return words(length, rng) if style == "words" else codepoints(length, rng)


def preferred(style: Style) -> str:
    """The characters a pattern-built string tries first, in order."""
    return (CODEPOINTS + WORD_CHARS) if style == "codepoints" else WORD_CHARS


def matches(pattern: str | None, text: str) -> bool:
    """JSON Schema's rule: the pattern matches somewhere in the text (not anchored)."""
    return pattern is None or re.search(pattern, text) is not None


def anchored_width(pattern: str) -> tuple[int, int] | None:
    """The (min, max) length of every string the pattern accepts, when it is anchored at both
    ends; None when it is not (an unanchored pattern accepts longer strings around a match)."""
    try:
        tree = sre_parse.parse(pattern)
    except re.error:
        return None
    items = list(tree)
    begins = bool(items) and items[0] == (sre.AT, sre.AT_BEGINNING)
    ends = bool(items) and items[-1] in ((sre.AT, sre.AT_END), (sre.AT, sre.AT_END_STRING))
    if not (begins and ends):
        return None
    low, high = tree.getwidth()
    return int(low), int(min(high, sre.MAXREPEAT))


def fitted(
    pattern: str | None, style: Style, length: int, rng: random.Random
) -> tuple[str, str] | None:
    """A string of exactly ``length`` code points accepted by ``pattern``, and how it was made
    (the style, or ``"from pattern"``); None when the pattern accepts none that long."""
    text = plain_text(style, length, rng)
    if matches(pattern, text):
        return text, style
    if pattern is None:
        return None
    built = from_pattern(pattern, length, preferred(style), rng)
    if built is not None and len(built) == length and matches(pattern, built):
        return built, "from pattern"
    return None


# ----------------------------------------------------------------------------- the pattern walker


class _Unsupported(Exception):
    """A construct the walker does not build (back-references, look-arounds)."""


def from_pattern(pattern: str, length: int, pool: str, rng: random.Random) -> str | None:
    """A string of ``length`` code points matching ``pattern``, characters taken from ``pool``
    first; an unanchored match is padded with pool characters. None when none can be built."""
    try:
        tree = sre_parse.parse(pattern)
    except re.error:
        return None
    flags = tree.state.flags
    items = list(tree)
    low, high = tree.getwidth()
    anchored = anchored_width(pattern) is not None
    core = length if anchored else max(low, min(length, high))
    if not low <= core <= high or core > length:
        return None
    try:
        built = _sequence(items, core, pool, rng, flags)
    except _Unsupported:
        return None
    if built is None:
        return None
    padding = "".join(rng.choice(pool.strip() or "a") for _ in range(length - len(built)))
    return built + padding


def _width(item: tuple[Any, Any]) -> tuple[int, int]:
    sub = sre_parse.SubPattern(sre_parse.State(), [item])
    low, high = sub.getwidth()
    return int(low), int(min(high, sre.MAXREPEAT))


def _sequence(
    items: list[Any], length: int, pool: str, rng: random.Random, flags: int
) -> str | None:
    widths = [_width(i) for i in items]
    out = []
    remaining = length
    for n, item in enumerate(items):
        low_after = sum(w[0] for w in widths[n + 1 :])
        low, high = widths[n]
        size = min(high, remaining - low_after)
        if size < low:
            return None
        part = _item(item, size, pool, rng, flags)
        if part is None:
            return None
        out.append(part)
        remaining -= len(part)
    return "".join(out) if remaining == 0 else None


def _item(item: Any, size: int, pool: str, rng: random.Random, flags: int) -> str | None:
    op, arg = item
    if op == sre.AT:
        return ""
    if op in (sre.LITERAL, sre.NOT_LITERAL, sre.ANY, sre.IN):
        return _char(_accepts(op, arg, flags), pool, rng) if size == 1 else None
    if op == sre.SUBPATTERN:
        _group, add_flags, _del_flags, sub = arg
        return _sequence(list(sub), size, pool, rng, flags | add_flags)
    if op == sre.BRANCH:
        for alternative in arg[1]:
            low, high = sre_parse.SubPattern(sre_parse.State(), list(alternative)).getwidth()
            if low <= size <= high:
                built = _sequence(list(alternative), size, pool, rng, flags)
                if built is not None:
                    return built
        return None
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
        least, most, sub = arg
        sub_items = list(sub)
        low, high = sre_parse.SubPattern(sre_parse.State(), sub_items).getwidth()
        if size == 0:
            return "" if least == 0 or high == 0 else None
        if high == 0:
            return None
        count = max(least, -(-size // high))
        if count > most or count * low > size:
            return None
        out = []
        remaining = size
        for k in range(count):
            share = min(high, remaining - low * (count - k - 1))
            part = _sequence(sub_items, share, pool, rng, flags)
            if part is None:
                return None
            out.append(part)
            remaining -= len(part)
        return "".join(out) if remaining == 0 else None
    if op == getattr(sre, "ATOMIC_GROUP", None):
        return _sequence(list(arg), size, pool, rng, flags)
    raise _Unsupported(str(op))


def _accepts(op: Any, arg: Any, flags: int) -> Callable[[str], bool]:
    """Whether one character matches a LITERAL / NOT_LITERAL / ANY / IN item. Categories are
    read as ECMA-262 reads them (JSON Schema's dialect): \\d and \\w are ASCII only."""
    fold = bool(flags & sre.SRE_FLAG_IGNORECASE)

    def same(a: str, code: int) -> bool:
        b = chr(code)
        return a == b or (fold and a.lower() == b.lower())

    if op == sre.LITERAL:
        return lambda c: same(c, arg)
    if op == sre.NOT_LITERAL:
        return lambda c: not same(c, arg)
    if op == sre.ANY:
        return lambda c: c != "\n" or bool(flags & sre.SRE_FLAG_DOTALL)
    negate = bool(arg) and arg[0][0] == sre.NEGATE
    members = arg[1:] if negate else arg

    def member(c: str) -> bool:
        for kind, value in members:
            if kind == sre.LITERAL and same(c, value):
                return True
            if kind == sre.RANGE:
                lo, hi = value
                if lo <= ord(c) <= hi or (
                    fold and any(lo <= ord(x) <= hi for x in (c.lower(), c.upper()))
                ):
                    return True
            if kind == sre.CATEGORY and _category(value, c):
                return True
        return False

    return (lambda c: not member(c)) if negate else member


def _category(category: Any, c: str) -> bool:
    word = c.isascii() and (c.isalnum() or c == "_")
    table = {
        sre.CATEGORY_DIGIT: c in ASCII_DIGITS,
        sre.CATEGORY_NOT_DIGIT: c not in ASCII_DIGITS,
        sre.CATEGORY_SPACE: c.isspace(),
        sre.CATEGORY_NOT_SPACE: not c.isspace(),
        sre.CATEGORY_WORD: word,
        sre.CATEGORY_NOT_WORD: not word,
    }
    if category not in table:
        raise _Unsupported(str(category))
    return table[category]


def _char(accepts: Callable[[str], bool], pool: str, rng: random.Random) -> str | None:
    """A pool character the item accepts (a random one, so a long run is not one letter
    repeated), else the first printable one in the Basic Multilingual Plane."""
    fits = [c for c in dict.fromkeys(pool) if accepts(c)]
    if fits:
        return rng.choice(fits)
    for code in range(0x20, 0xD800):
        if accepts(chr(code)) and chr(code).isprintable():
            return chr(code)
    return None
