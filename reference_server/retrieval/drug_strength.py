"""Drug strengths as prescriptions write them, compared with the formulary's.

The formulary writes '160mg', '50mg & 12.5mg/mL', '50U/Vial', '0.05% w/w', '1000U/10mL';
prescribers write '160 mg', '5/160 mg', '20mg/25mg', '50 units', '100 units/mL', '5%'. Both
become one `Strength` (amounts in canonical units, the denominators that change the product), so
equal strengths compare equal however they are written, and '10mg' never equals '10mg/mL'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Literal

Amount = tuple[Decimal, str]

# unit as written -> (canonical unit, factor to it)
UNITS: dict[str, tuple[str, Decimal]] = {
    "mg": ("mg", Decimal(1)),
    "mcg": ("mg", Decimal("0.001")),
    "ug": ("mg", Decimal("0.001")),
    "g": ("mg", Decimal(1000)),
    "kg": ("mg", Decimal(1_000_000)),
    "ml": ("ml", Decimal(1)),
    "l": ("ml", Decimal(1000)),
    "%": ("%", Decimal(1)),
    "u": ("u", Decimal(1)),
    "iu": ("u", Decimal(1)),
    "unit": ("u", Decimal(1)),
    "units": ("u", Decimal(1)),
    "meq": ("meq", Decimal(1)),
    "mmol": ("mmol", Decimal(1)),
    "kcal": ("kcal", Decimal(1)),
    "cal": ("kcal", Decimal("0.001")),
    "ir": ("ir", Decimal(1)),
    "sqcm": ("sqcm", Decimal(1)),
    "hr": ("hr", Decimal(1)),
    "h": ("hr", Decimal(1)),
    "hour": ("hr", Decimal(1)),
    "hours": ("hr", Decimal(1)),
}
# Denominators naming one unit of use: '50U/Vial' is the same strength as '50 units'.
PER_USE = (
    "metered dose|doses?|actuations?|vials?|blisters?|sachets?|sprays?|puffs?|inhalations?|"
    "applications?|tabs?|tablets?|caps?|capsules?|syringes?|pens?|patch(?:es)?"
)
UNIT_WORDS = (
    r"(?:usp|ldn|ld50|international)\s+units?|units?|mcg|µg|μg|ug|mg|kg|g|iu|u|ml|l|%|meq|mmol|"
    r"kcal|cal|ir|"
    r"sq\.?\s?cm|hours?|hr|h"
)
NUMBER = r"(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)"  # '10,000IU/mL' too
_UNIT = rf"(?:{UNIT_WORDS})(?![a-z0-9])"
_AMOUNT = rf"{NUMBER}(?:\s*{_UNIT})?"
_JOIN = r"\s*(?:&|\+|/|\band\b)\s*"
_DENOM = rf"\s*/\s*(?:{NUMBER}\s*)?(?:{_UNIT}|(?:{PER_USE})(?![a-z]))"
# A strength inside free text: amounts joined by '&', '+', '/' or 'and', each with its
# denominators and qualifier ('50mcg/g & 0.5mg/g', '0.3% w/v & 0.1% w/v').
_EACH = rf"{_AMOUNT}(?:{_DENOM})*(?:\s*w/[wv])?"
IN_TEXT = re.compile(rf"(?<![\w.]){_EACH}(?:{_JOIN}{_EACH})*(?![\w])", re.I)
TOKEN = re.compile(
    rf"(?P<num>{NUMBER})|(?P<unit>{_UNIT})|(?P<use>(?:{PER_USE})(?![a-z]))|(?P<join>&|\+|/|\band\b)",
    re.I,
)
QUALIFIER = re.compile(r"\bw\s*/\s*[wv]\b|\boily\b", re.I)
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# '250 mg per 5 mL' is '250 mg/5 mL': 'per' after a unit, before a volume or a unit of use
PER_WORD = re.compile(rf"(?<=[a-z%])(\s+)per(\s+)(?=(?:{NUMBER}\s*)?(?:ml|l|{PER_USE})\b)", re.I)


def _per_as_slash(text: str) -> str:
    """'per' written as '/' in as many characters, so positions in the text stay the same."""
    return PER_WORD.sub(lambda m: m.group(1) + "/  " + m.group(2), text)


@dataclass(frozen=True)
class Strength:
    """Amounts in canonical units (mg, ml, %, u, ...), in the order written, and the
    denominators that make another product ('/mL', '/10mL', '/g'); per-use ones are dropped and
    time ('/hr') is kept apart, since a patch's '25 mcg' is its '25mcg/hr'."""

    amounts: tuple[Amount, ...]
    per: tuple[Amount, ...] = ()
    per_time: bool = False

    def key(self, ordered: bool = True) -> tuple[object, ...]:
        amounts = self.amounts if ordered else tuple(sorted(self.amounts))
        return (amounts, self.per, self.per_time)


Match = Literal["exact", "close"]


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def _unit(text: str) -> tuple[str, Decimal] | None:
    word = re.sub(r"[\s.]+", "", text.lower()).replace("µg", "ug").replace("μg", "ug")
    word = re.sub(r"^(usp|ldn|ld50|international)", "", word) or word
    return UNITS.get(word)


def _canonical(value: Decimal, unit: tuple[str, Decimal]) -> Amount:
    name, factor = unit
    return ((value * factor).normalize(), name)


def parse(text: str | None) -> Strength | None:
    """One strength ('5/160 mg', '50mg & 12.5mg/mL', '50U/Vial'); None when no amount has a unit."""
    if not text:
        return None
    text = QUALIFIER.sub(" ", THOUSANDS.sub("", _per_as_slash(text)))
    tokens = [(m.lastgroup or "", m.group(0)) for m in TOKEN.finditer(text)]
    amounts: list[tuple[Decimal, tuple[str, Decimal] | None]] = []
    per: list[Amount] = []
    per_time = False
    i = 0
    while i < len(tokens):
        kind, value = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if kind == "num":
            number = _number(value)
            unit = _unit(nxt[1]) if nxt[0] == "unit" else None
            if number is not None:  # '24 hours' or '10 sq cm' is no amount of a drug
                amounts.append((number, None if unit and unit[0] in ("hr", "sqcm") else unit))
            i += 2 if unit else 1
            continue
        if kind == "join" and value == "/" and amounts:
            # '/' then a volume, a mass without a number, a per-use word or a time: a denominator
            count = _number(nxt[1]) if nxt[0] == "num" else None
            after = tokens[i + 2] if count is not None and i + 2 < len(tokens) else nxt
            unit = _unit(after[1]) if after[0] == "unit" else None
            if after[0] == "use":
                i += 3 if count is not None else 2
                continue
            if unit and (unit[0] in ("ml", "sqcm", "hr") or count is None):
                if unit[0] == "hr":
                    per_time = True
                else:
                    per.append(_canonical(count or Decimal(1), unit))
                i += 3 if count is not None else 2
                continue
        i += 1
    if not amounts or all(u is None for _, u in amounts):
        return None
    # a shared unit ('5/160 mg', '20 & 25 mg') is the next unit written, else the previous one
    filled: list[Amount] = []
    for n, (number, written) in enumerate(amounts):
        shared = written or next((u for _, u in amounts[n + 1 :] if u), None)
        shared = shared or next((u for _, u in reversed(amounts[:n]) if u), None)
        if shared is not None:
            filled.append(_canonical(number, shared))
    return Strength(tuple(filled), tuple(dict.fromkeys(per)), per_time)


@dataclass(frozen=True)
class Mention:
    """A strength found in free text, with where it was written."""

    text: str
    start: int
    end: int
    strength: Strength


def find(text: str | None) -> list[Mention]:
    """Every strength written in `text` ('Is Lipitor 20 mg covered?' -> 20 mg)."""
    out = []
    written = text or ""
    for m in IN_TEXT.finditer(_per_as_slash(written)):
        strength = parse(m.group(0))
        if strength is not None:
            out.append(Mention(written[m.start() : m.end()].strip(), m.start(), m.end(), strength))
    return out


def first(text: str | None) -> Mention | None:
    found = find(text)
    return found[0] if found else None


def compare(asked: Strength, listed: Strength) -> Match | None:
    """'exact': the same amounts, in order, and denominators. 'close': the same once the
    ingredients' order, a patch's '/hr' or the volume a concentration is written per is set
    aside ('250mg/5mL' is '50mg/mL'), or a combination written rounded ('24/26 mg' for
    '24.3mg & 25.7mg'). None: another strength."""
    if asked.key() == listed.key():
        return "exact"
    if asked.per_time and not listed.per_time:
        return None
    if sorted(asked.amounts) == sorted(listed.amounts) and asked.per == listed.per:
        return "close"
    concentration = _concentration(asked)
    if concentration is not None and concentration == _concentration(listed):
        return "close"
    if len(asked.amounts) > 1 and asked.per == listed.per and _rounded(asked, listed):
        return "close"
    return None


def _rounded(asked: Strength, listed: Strength) -> bool:
    """Every amount of a combination written as whole numbers, each the listed one rounded."""
    if len(asked.amounts) != len(listed.amounts):
        return False
    for (a, unit_a), (b, unit_b) in zip(asked.amounts, listed.amounts, strict=True):
        if unit_a != unit_b or a != a.to_integral_value() or b < 1:
            return False
        if a != b.quantize(Decimal(1), rounding=ROUND_HALF_UP):
            return False
    return True


def _concentration(s: Strength) -> tuple[object, ...] | None:
    """'1000U/10mL' as '100U/mL': amounts per mL of a volume denominator ('9mg/5 Sq Cm' and
    '18mg/10 Sq Cm' are two patch sizes, two products)."""
    if len(s.per) != 1 or not s.per[0][0] or s.per[0][1] != "ml":
        return None
    count, unit = s.per[0]
    return (tuple(((v / count).normalize(), u) for v, u in s.amounts), unit)


def normal_text(text: str | None) -> str:
    """The fallback comparison for strengths without units ('3 Phase'): case and spaces aside."""
    return re.sub(r"\s+", "", (text or "").lower())


def same_strength(asked_text: str, listed_text: str | None) -> Match | None:
    """Whether a product listed at `listed_text` has the strength asked for."""
    asked, listed = parse(asked_text), parse(listed_text)
    if asked is not None and listed is not None:
        return compare(asked, listed)
    if asked is None and normal_text(asked_text) == normal_text(listed_text):
        return "exact"
    return None
