"""Whether an error answer refuses the call's arguments (so the probe never reached the code
behind them), which arguments it names, and what it says a valid value looks like.

Servers word input refusals their own way: pydantic (``1 validation error for call[x]`` /
``currency`` / ``String should match pattern '^[A-Z]{3}$'``), jsonschema (``'test' does not
match '^[A-Z]{3}$'``), zod (``Invalid arguments ... "path": ["currency"]``), JSON-RPC
``-32602 Invalid params``, or a tool's own ``currency must be a 3-letter code``. An error that
reads as a refusal of the input names an argument by its name (on its own line, quoted, in a
path, as the subject of the sentence) or by its value (quoted, ``input_value=...``); one that
names neither is a refusal of the call as a whole. Any other error ("no such file", "unknown
note") came from the tool's code: the probe reached it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ocm_common.json_types import Arguments, JsonValue

REFUSAL = re.compile(
    r"validation errors? for|invalid (?:arguments?|params|parameters?|input|value|type|enum)|"
    r"input validation|input should|should (?:match|be|have)|does not match|is not one of|"
    r"is a required property|field required|missing (?:required )?(?:argument|parameter|field|"
    r"property)|(?:argument|parameter|field|property) (?:is )?(?:required|missing)|"
    r"is too (?:long|short)|is (?:less|greater) than|is not of type|not valid under|"
    r"expected \w+, received|invalid_(?:type|string|enum_value|union)|too_(?:small|big)|"
    r"must (?:be|match|have|contain|not|start|end|consist)|is required|not allowed|"
    r"unexpected (?:keyword )?argument|unknown (?:argument|parameter|field|property)|"
    r"additional properties|unrecognized key|-32602|not a valid",
    re.I,
)
# "'x' does not match '^[A-Z]{3}$'", "should match pattern '^[A-Z]{3}$'", "must match /^a+$/"
PATTERN_HINT = re.compile(
    r"(?:does not match|should match(?: pattern)?|must match(?: (?:the )?pattern)?|"
    r"pattern(?: is)?:?)\s+(?P<q>['\"`/])(?P<pattern>.+?)(?P=q)(?=[\s,.;)\]]|$)",
    re.I,
)
# "one of: a, b, c", "Input should be 'a', 'b' or 'c'", "Expected 'a' | 'b'", "allowed values: ..."
VALUES_HINT = re.compile(
    r"(?:is not one of|one of|should be|expected|allowed(?: values)?|valid values|"
    r"permitted(?: values)?|possible values|choose from|known \w+|supported(?: values)?|"
    r"accepted(?: values)?)\s*:?\s*(?P<rest>[^\n]{1,300})",
    re.I,
)
QUOTED = re.compile(r"'([^'\n]{1,60})'|\"([^\"\n]{1,60})\"|`([^`\n]{1,60})`")
BARE = re.compile(r"^[A-Za-z0-9_.:@/+\-]{1,40}$")
NOT_VALUES = {"a", "an", "the", "or", "and", "of", "to", "be", "string", "valid", "one"}


@dataclass(frozen=True)
class Refusal:
    """An error that refuses the input: the arguments it names (empty when it names none),
    the first line of its text, and what it says valid values look like."""

    names: frozenset[str]
    reason: str
    patterns: tuple[str, ...] = ()
    values: tuple[str, ...] = field(default=())


def reason_line(text: str) -> str:
    """The error's most telling line, shortened for a report."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    telling = next((ln for ln in lines if REFUSAL.search(ln)), lines[0] if lines else "")
    return telling[:160]


def _names_argument(text: str, name: str) -> bool:
    q = re.escape(name)
    structural = (
        rf"^\s*{q}\s*$|['\"`]{q}['\"`](?!\s*:)|\[\s*['\"]{q}['\"]\s*\]|properties/{q}\b|"
        rf"(?:^|[\s(.])(?:argument|parameter|field|property|arguments?\.)\s*['\"`]?{q}\b|"
        rf"(?:^|\n|: ){q}\s*(?::|=|must|should|is|cannot|may)\b|"
        rf"(?:^|\bthe\s|[\s(])['\"`]?{q}['\"`]?\s+(?:must|should|cannot|may not|"
        rf"is (?:required|invalid|missing|too|not))\b"
    )
    if re.search(structural, text, re.M):
        return True
    return len(name) >= 5 and re.search(rf"\b{q}\b", text) is not None


def _names_value(text: str, value: JsonValue) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        shown = str(value)
        return re.search(rf"input_value={re.escape(shown)}\b", text) is not None
    if not isinstance(value, str) or len(value) < 2:
        return False
    shown = value if len(value) <= 80 else value[:40]
    return any(
        form in text for form in (f"'{shown}", f'"{shown}', f"input_value='{shown}", f"`{shown}")
    )


def _values(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for m in VALUES_HINT.finditer(text):
        rest = m.group("rest")
        quoted = [next(g for g in q.groups() if g is not None) for q in QUOTED.finditer(rest)]
        if quoted:
            out += quoted
            continue
        pieces = re.split(r"\s*(?:,|\||\bor\b|;)\s*", rest.strip().rstrip(".)]}").lstrip("[({"))
        out += [p for p in pieces if BARE.match(p) and p.lower() not in NOT_VALUES]
    return tuple(dict.fromkeys(v for v in out if v))


def refusal(text: str, args: Arguments, names: Iterable[str] = ()) -> Refusal | None:
    """The refusal in an error ``text`` for a call with ``args``, or None when the error is
    not about the input (the tool ran and failed on its own terms). ``names`` are the tool's
    other arguments (one the call left out may be the one refused as missing)."""
    if not text or not REFUSAL.search(text):
        return None
    named = {name for name, value in args.items() if _names_value(text, value)}
    named |= {name for name in {*args, *names} if _names_argument(text, name)}
    patterns = tuple(dict.fromkeys(m.group("pattern") for m in PATTERN_HINT.finditer(text)))
    return Refusal(frozenset(named), reason_line(text), patterns, _values(text))
