"""What copy k of one stored value is, by the role of the column or metadata key holding it:
ids become `synthetic-k-<id>`, titles `synthetic k: <title>`, free text gets copy-specific word
suffixes, JSON blocks keep their keys, categories are kept (`synthetic` describes the rules).

The SQLite and Chroma copiers (`synthetic_sqlite`, `synthetic_chroma`) decide each column's
role and apply the transform `Roles` gives for it, so a value is copied alike wherever it is.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PREFIX = "synthetic"
ROWID_STRIDE = 10**9  # copy k of rowid r gets rowid r + k * stride (base tables and FTS agree)
CATEGORICAL_MAX = 50  # a text column with at most this many distinct values is a category
TITLE = re.compile(r"^(title|heading)$|_(title|heading|name)$")
TAGS = re.compile(r"(^|_)tags$")  # filter tokens (an FTS column): kept, so filters still apply
ID_NAME = re.compile(r"^id$|_(id|ids|uid|by|of)$")
JSON_ID = re.compile(r"^(id|key)$|_(id|key)$")
WORD = re.compile(r"[A-Za-z]{4,}")
BATCH = 2000  # rows per insert, SQLite and Chroma alike


def synthetic_id(value: str, k: int) -> str:
    """Copy k's id; ';'-joined id lists are mapped item by item."""
    return ";".join(f"{PREFIX}-{k}-{part}" if part else part for part in value.split(";"))


def synthetic_title(value: str, k: int) -> str:
    return f"{PREFIX} {k}: {mutate_text(value, k)}"


def _suffix(k: int) -> str:
    letters = ""
    while True:
        k, r = divmod(k, 26)
        letters = chr(ord("a") + r) + letters
        if k == 0:
            return letters


def mutate_text(text: str, k: int) -> str:
    """About half the longer words get copy k's suffix (deterministic: same text, same result)."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        if zlib.crc32(f"{word.lower()}|{k}".encode()) % 2:
            return word + "q" + _suffix(k)
        return word

    return WORD.sub(swap, text)


def _mutate_json(value: Any, k: int, name: str = "") -> Any:
    """Strings under an identifier name (`key`, `id`, `*_id`) become copy k's id, like id
    columns: a program block's `key` names the program, and copies of a document are other
    programs, not ten more documents of the same one (which would change what real queries
    answer instead of what they cost)."""
    if isinstance(value, str):
        if JSON_ID.search(name):
            return synthetic_id(value, k)
        # One-word values are levels, topics and codes that readers compare with fixed sets.
        return mutate_text(value, k) if " " in value.strip() else value
    if isinstance(value, list):
        return [_mutate_json(v, k, name) for v in value]
    if isinstance(value, dict):
        return {key: _mutate_json(v, k, key) for key, v in value.items()}
    return value


def mutate_value(value: Any, k: int) -> Any:
    """Free text mutated; JSON objects/arrays keep their structure and keys."""
    if not isinstance(value, str) or not value:
        return value
    if value[0] in "[{":
        try:
            return json.dumps(_mutate_json(json.loads(value), k))
        except ValueError:
            pass
    return mutate_text(value, k)


Transform = Callable[[Any, int], Any]


def _keep(value: Any, k: int) -> Any:
    return value


def _as_id(value: Any, k: int) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + k * ROWID_STRIDE
    return synthetic_id(value, k) if isinstance(value, str) and value else value


def _as_title(value: Any, k: int) -> Any:
    return synthetic_title(value, k) if isinstance(value, str) and value else value


@dataclass
class Roles:
    """What each column / metadata key is: 'id', 'title', 'category' or 'text'."""

    by_name: dict[str, str]

    def transform(self, name: str) -> Transform:
        role = self.by_name.get(name) or (
            "category" if TAGS.search(name) else "title" if TITLE.search(name) else "text"
        )
        return {"id": _as_id, "title": _as_title, "category": _keep, "text": mutate_value}[role]


def refers_to_id(name: str, ids: set[str]) -> bool:
    """`dins`, `lu_codes`, `lowest_cost_din`: a list of, or a named, reference to an id."""
    return name.removesuffix("s") in ids or any(name.endswith("_" + i) for i in ids)
