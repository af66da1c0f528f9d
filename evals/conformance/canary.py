"""The one canary: a random secret planted in the server's environment (stdio servers inherit
it, the in-process server reads it), and the search for it and for credential-shaped strings in
anything the server sends back. Finding the canary is proof of a leak, with no guessing about
what a secret looks like."""

from __future__ import annotations

import math
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

CANARY_ENV = "OCM_CANARY_SECRET"

KEY_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("AWS access key id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}"),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        ("private key", r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----"),
    )
)
ASSIGNMENT = re.compile(
    r"(?i)\b(api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|password|passwd|"
    r"client[_-]?secret|aws_secret_access_key)\b[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+_\-.=]{16,})"
)
MIN_ENTROPY = 3.5  # bits per character: random base64/hex keys are above, words below


def new_canary() -> str:
    return f"ocm-canary-{secrets.token_hex(16)}"


@contextmanager
def planted(value: str | None, name: str = CANARY_ENV) -> Iterator[None]:
    """``name=value`` in this process's environment while a target connects (and back after)."""
    if value is None:
        yield
        return
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def key_matches(text: str) -> list[tuple[str, str]]:
    """(label, matched text) for every credential-looking string in ``text``."""
    found = [(label, m.group(0)) for label, p in KEY_FORMATS for m in p.finditer(text)]
    for m in ASSIGNMENT.finditer(text):
        value = m.group(2)
        if entropy(value) >= MIN_ENTROPY and any(c.isdigit() for c in value):
            found.append((f"{m.group(1)} assignment", m.group(0)))
    return found
