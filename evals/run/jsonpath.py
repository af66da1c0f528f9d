"""The small path language used by scenario checks: ``a.b[0].c``, ``items[*].code``, ``$``.

Kept deliberately tiny (keys, ``[N]`` indexes, ``[*]`` wildcards) so a golden file reads like
the JSON it describes; anything else is a syntax error reported at load time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class PathSyntaxError(ValueError):
    """A check path that cannot be parsed."""


@dataclass(frozen=True)
class Key:
    name: str


@dataclass(frozen=True)
class Index:
    position: int


@dataclass(frozen=True)
class Wildcard:
    pass


Step = Key | Index | Wildcard


def parse(path: str) -> tuple[Step, ...]:
    """Parse ``path`` into steps; ``""`` and ``"$"`` mean the whole result."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
        if text.startswith("."):
            text = text[1:]
    steps: list[Step] = []
    pos = 0
    expect_key = True
    while pos < len(text):
        char = text[pos]
        if char == "[":
            end = text.find("]", pos)
            if end < 0:
                raise PathSyntaxError(f"unclosed '[' in path {path!r}")
            inner = text[pos + 1 : end].strip()
            if inner == "*":
                steps.append(Wildcard())
            else:
                try:
                    steps.append(Index(int(inner)))
                except ValueError:
                    raise PathSyntaxError(
                        f"index {inner!r} in path {path!r} is neither an integer nor '*'"
                    ) from None
            pos = end + 1
            expect_key = False
        elif char == ".":
            if expect_key:
                raise PathSyntaxError(f"empty key in path {path!r}")
            pos += 1
            expect_key = True
        elif char == "]":
            raise PathSyntaxError(f"unexpected ']' in path {path!r}")
        else:
            if not expect_key:
                raise PathSyntaxError(f"missing '.' before key at offset {pos} in path {path!r}")
            end = pos
            while end < len(text) and text[end] not in ".[]":
                end += 1
            steps.append(Key(text[pos:end]))
            pos = end
            expect_key = False
    if expect_key and steps:
        raise PathSyntaxError(f"path {path!r} ends with '.'")
    return tuple(steps)


def is_multi(path: str) -> bool:
    """True when the path has a wildcard, i.e. it selects a list of matches."""
    return any(isinstance(step, Wildcard) for step in parse(path))


def resolve(data: Any, path: str) -> list[Any]:
    """All values ``path`` selects in ``data`` (empty when it selects nothing)."""
    current: list[Any] = [data]
    for step in parse(path):
        following: list[Any] = []
        for node in current:
            if isinstance(step, Key):
                if isinstance(node, dict) and step.name in node:
                    following.append(node[step.name])
            elif isinstance(step, Index):
                if isinstance(node, list) and -len(node) <= step.position < len(node):
                    following.append(node[step.position])
            elif isinstance(node, list):
                following.extend(node)
        current = following
    return current
