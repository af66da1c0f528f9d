"""What a contract diff says about changed text a model reads (titles, descriptions,
examples, and the names of new arguments): every such change is marked for review, and one
that adds, compared with the old text, any of these is suspicious:

- the security check's poisoning patterns (:data:`evals.run.security.poisoning.HIDDEN`:
  instruction tags, "ignore previous instructions", keeping something from the user, a
  precondition that reads or sends something, a credential file, a role override), imported,
  not copied;
- a request for what a tool has no business receiving (:data:`REQUESTS`): the conversation,
  its history or context; the contents of files; credentials, secrets, tokens or environment
  variables; or hiding something from the user;
- instruction-like wording (:data:`MARKERS`: an order to the model, sending data on, a URL, a
  file under the home directory);
- invisible characters.

A reworded sentence that adds none of them is only shown.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

_I = re.IGNORECASE
Patterns = tuple[tuple[re.Pattern[str], str], ...]


def _compile(*pairs: tuple[str, str]) -> Patterns:
    return tuple((re.compile(pattern, _I), label) for pattern, label in pairs)


# Requests for data: what tool poisoning asks the model to pass in an argument.
ASKS_FOR_CONVERSATION = "a request for the conversation, its history or context"
ASKS_FOR_FILES = "a request for the contents of files"
ASKS_FOR_SECRETS = "a request for credentials, secrets, tokens or environment variables"
ASKS_TO_HIDE = "an instruction to hide something from the user"
REQUESTS: Patterns = _compile(
    (
        r"\b(full|entire|whole|complete)\s+(conversation|chat|dialog(ue)?|context|transcript)\b|"
        r"\b(all\s+)?(previous|prior|earlier)\s+(messages|turns|prompts|conversation|chats?)\b",
        ASKS_FOR_CONVERSATION,
    ),
    (
        r"\b(conversation|chat|dialog(ue)?|message)\s+(history|so\s+far|context|transcript|log)"
        r"\b|\bcontext\s+window\b|\bsystem\s+prompt\b|\byour\s+(instructions|prompt)\b|"
        r"\bwhat\s+the\s+user\s+(has\s+)?(said|wrote|written|typed|asked)\b",
        ASKS_FOR_CONVERSATION,
    ),
    (
        r"\b(contents?|text|source|body)\s+of\s+(any|all|every|each|the|their|your|those|these)?"
        r"\s*(\w+\s+){0,3}(files?|attachments?|directories|folders?)\b|"
        r"\bfiles?['’]?\s+(contents?|text)\b|"
        r"\b(read|open|cat|attach|paste|upload|include)\s+(any|all|every|each|the\s+user'?s?|"
        r"their|your)\s+(\w+\s+){0,2}(files?|attachments?)\b",
        ASKS_FOR_FILES,
    ),
    (
        r"\b(api|access|auth(entication|orization)?|bearer|refresh|session|oauth|github|"
        r"openai|aws|id)[\s_-]?(keys?|tokens?|secrets?)\b|\b(your|the\s+user'?s?|their|my)\s+"
        r"(\w+\s+)?tokens?\b|\b(secrets?|passwords?|passphrases?|passcodes?|credentials?|"
        r"private[\s_-]keys?|ssh[\s_-]keys?|session\s+cookies?|one[\s-]time\s+codes?|2fa\s+"
        r"codes?)\b|\benv(ironment)?[\s_-]?var(iable)?s?\b|\benvironment\b[^.\n]{0,30}"
        r"\b(values?|settings?|contents?)\b|\bos\.environ\b|\bprocess\.env\b|\bprintenv\b|"
        r"(?-i:\$\{?[A-Z][A-Z0-9_]{2,}\}?)",
        ASKS_FOR_SECRETS,
    ),
    (
        r"\b(hide|conceal|withhold|keep)\b[^.\n]{0,40}\bfrom\s+(the\s+)?(user|human|person|"
        r"operator)s?\b|\b(do\s+not|don'?t|never|no\s+need\s+to)\s+(tell|inform|mention|reveal|"
        r"notify|disclose)\b|\b(secretly|covertly)\b|\bwithout\s+(telling|informing|asking|"
        r"notifying|mentioning|alerting)\b|\bwithout\s+the\s+user'?s?\s+(knowing|knowledge|"
        r"noticing|consent)\b",
        ASKS_TO_HIDE,
    ),
)

# Instruction-like wording the security check does not read for (ordinary descriptions carry
# some of it); a diff flags it only where a change adds it.
MARKERS: Patterns = _compile(
    (
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|"
        r"other|system)\b",
        "an instruction to ignore others",
    ),
    (r"\b(before|prior\s+to)\s+(using|calling|invoking)\b", "a precondition"),
    (r"\byou\s+(must|should|have\s+to|need\s+to)\b", "an order to the model"),
    (r"\b(always|instead)\s+(call|use|include|send|pass|add|read|run)\b", "an order to the model"),
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


@functools.cache
def patterns() -> Patterns:
    """Every pattern a new text is read for: the poisoning check's, then the requests, then
    the markers. Imported when first needed: the security package imports the contract diff,
    so importing it while this module loads would be circular."""
    from evals.run.security.poisoning import HIDDEN

    return (*HIDDEN, *REQUESTS, *MARKERS)


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


def _visible(text: str) -> str:
    """The text as a person reads it (invisible characters cannot split a phrase)."""
    hidden = _invisible(text)
    return "".join(c for c in text if c not in hidden) if hidden else text


def name_words(name: str) -> str:
    """An identifier as words: ``conversationHistory``, ``conversation_history`` ->
    ``conversation history`` (what a model reads in an argument's name)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-.\s]+", " ", spaced).strip()


def suspicion(before: Any, after: Any) -> str:
    """Why the new text is suspicious ('' when it is not): what it adds that the old did not."""
    old, new = _visible(_text(before)), _visible(_text(after))
    added = [
        label for pattern, label in patterns() if pattern.search(new) and not pattern.search(old)
    ]
    hidden = _invisible(_text(after)) - _invisible(_text(before))
    if hidden:
        added.append("invisible characters " + ", ".join(f"U+{ord(c):04X}" for c in sorted(hidden)))
    return "adds " + "; ".join(dict.fromkeys(added)) if added else ""
