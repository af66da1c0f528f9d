"""What a contract diff says about changed text a model reads (titles, descriptions,
examples): every such change is marked for poisoning review, and one that adds
instruction-like wording or invisible characters the old text did not have is suspicious.

The phrases are the ones poisoned tool descriptions use (an instruction tag, "ignore ...",
keeping something from the user, a precondition, "you must", sending data on, a URL or a
file under the home directory); a reworded sentence that adds none of them is only shown.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_I = re.IGNORECASE
MARKERS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, _I), label)
    for pattern, label in (
        (
            r"<\s*/?\s*(important|system|instructions?|hidden|secret|critical|admin)\b[^>]*>",
            "an instruction tag",
        ),
        (
            r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|other|system)\b",
            "an instruction to ignore others",
        ),
        (
            r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|notify)\b",
            "keeping something from the user",
        ),
        (r"\bwithout\s+(telling|informing|asking|notifying)\b", "acting without the user knowing"),
        (r"\b(before|prior\s+to)\s+(using|calling|invoking)\b", "a precondition"),
        (r"\byou\s+(must|should|have\s+to|need\s+to)\b", "an order to the model"),
        (
            r"\b(always|instead)\s+(call|use|include|send|pass|add|read|run)\b",
            "an order to the model",
        ),
        (
            r"\b(send|forward|upload|post|e-?mail|copy)\b[^.\n]{0,60}\b(to|bcc|cc)\b",
            "sending data on",
        ),
        (r"\bhttps?://", "a URL"),
        (
            r"(~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/root)/|\.ssh\b|\.aws\b|/etc/(passwd|shadow)",
            "a file path",
        ),
    )
)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else repr(value)


def _invisible(text: str) -> set[str]:
    return {
        c
        for c in text
        if unicodedata.category(c) in ("Cf", "Co", "Cs") or 0xE0000 <= ord(c) <= 0xE007F
    }


def suspicion(before: Any, after: Any) -> str:
    """Why the new text is suspicious ('' when it is not): the markers it adds."""
    old, new = _text(before), _text(after)
    added = [label for pattern, label in MARKERS if pattern.search(new) and not pattern.search(old)]
    hidden = _invisible(new) - _invisible(old)
    if hidden:
        added.append("invisible characters " + ", ".join(f"U+{ord(c):04X}" for c in sorted(hidden)))
    return "adds " + "; ".join(dict.fromkeys(added)) if added else ""
