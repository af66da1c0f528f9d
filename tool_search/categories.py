"""Categories and tool types from the rules in `categories.yaml` (or a file of the same shape):
id patterns first, then the category whose description words the tool's description shares
most, then `general`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from tool_search.records import TOOL_TYPES, ToolRecord
from tool_search.text import terms

DEFAULT_RULES = Path(__file__).with_name("categories.yaml")
FALLBACK_CATEGORY = "general"


@dataclass(frozen=True)
class CategoryRule:
    name: str
    description: str
    ids: tuple[re.Pattern[str], ...]
    words: frozenset[str]


@dataclass(frozen=True)
class Rules:
    categories: tuple[CategoryRule, ...]
    tool_types: tuple[tuple[re.Pattern[str], str], ...]

    def description_of(self, category: str) -> str:
        for rule in self.categories:
            if rule.name == category:
                return rule.description
        return "Tools no category rule claims"


def load_rules(path: Path = DEFAULT_RULES) -> Rules:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    categories = tuple(
        CategoryRule(
            name=str(name),
            description=str(body.get("description", "")),
            ids=tuple(re.compile(p, re.IGNORECASE) for p in body.get("ids") or ()),
            words=frozenset(terms(str(body.get("words", "")))),
        )
        for name, body in (data.get("categories") or {}).items()
    )
    types = []
    for rule in data.get("tool_types") or ():
        kind = str(rule["type"])
        if kind not in TOOL_TYPES:
            raise ValueError(f"{path}: tool type {kind!r} is not one of {TOOL_TYPES}")
        types.append((re.compile(str(rule["servers"]), re.IGNORECASE), kind))
    return Rules(categories, tuple(types))


def categorise(tool: ToolRecord, rules: Rules) -> tuple[str, str]:
    """(category, tool_type) for one tool."""
    category = next(
        (r.name for r in rules.categories if any(p.search(tool.tool_id) for p in r.ids)), None
    )
    if category is None:
        said = set(terms(f"{tool.name} {tool.title or ''} {tool.description}"))
        overlap = [(len(said & r.words), r.name) for r in rules.categories]
        best = max(overlap, default=(0, FALLBACK_CATEGORY))
        category = best[1] if best[0] >= 2 else FALLBACK_CATEGORY
    tool_type = next((k for p, k in rules.tool_types if p.search(tool.server)), "third_party")
    return category, tool_type


def assign(tools: list[ToolRecord], rules: Rules) -> None:
    for tool in tools:
        tool.category, tool.tool_type = categorise(tool, rules)
