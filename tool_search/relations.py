"""How tools relate: alternatives (a similar purpose: the closest whole-tool embeddings in the
same category or server) and complements (used together: a tool whose description names
another, or whose output carries a field another tool requires as input)."""

from __future__ import annotations

import re
from typing import Any

from tool_search.engine import ToolIndex
from tool_search.models import Relationships
from tool_search.records import ToolRecord
from tool_search.text import split_name, stem, words


def _names_in(text: str, tools: list[ToolRecord]) -> list[ToolRecord]:
    """Tools of the catalogue named in `text` as their full name (`odb.get`, `search_trials`)."""
    found = []
    for tool in tools:
        if len(tool.name) >= 5 and re.search(rf"(?<![\w.]){re.escape(tool.name)}(?![\w])", text):
            found.append(tool)
    return found


def _output_fields(node: Any, out: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in (node.get("properties") or {}).items():
            out.add(" ".join(stem(w) for w in split_name(str(key)).split()))
            _output_fields(value, out)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                _output_fields(node[key], out)
        for key in ("anyOf", "oneOf", "allOf"):
            for option in node.get(key) or ():
                _output_fields(option, out)
        for value in (node.get("$defs") or {}).values():
            _output_fields(value, out)
    return out


def _singular_key(name: str) -> str:
    return " ".join(stem(w) for w in split_name(name).split())


def _provides(producer: ToolRecord, consumer: ToolRecord) -> list[str]:
    """The consumer's required inputs that the producer gives back: fields of its output
    schema, or (for definitions without one) named in its description, when the producer
    does not itself require them."""
    needs = {_singular_key(r) for r in consumer.required}
    own = {_singular_key(r) for r in producer.required}
    produced = _output_fields(producer.output_schema or {}, set())
    said = " " + " ".join(stem(w) for w in words(producer.description)) + " "
    return sorted(n for n in needs - own if n in produced or (not produced and f" {n} " in said))


def relationships(index: ToolIndex, row: int, limit: int = 3) -> Relationships:
    tool = index.tools[row]
    same_server = [t for t in index.tools if t.server == tool.server and t is not tool]
    reasons: dict[str, str] = {}
    complements: list[str] = []
    for other in _names_in(tool.description, same_server):
        complements.append(other.tool_id)
        reasons[other.tool_id] = f"{tool.name}'s description names it (it uses or routes to it)"
    for other in same_server:
        if other.tool_id not in reasons and _names_in(other.description, [tool]):
            complements.append(other.tool_id)
            reasons[other.tool_id] = f"its description names {tool.name}"
    for other in same_server:
        if other.tool_id in reasons:
            continue
        given = _provides(tool, other)
        taken = _provides(other, tool)
        if given:
            complements.append(other.tool_id)
            reasons[other.tool_id] = f"{tool.name} gives {', '.join(given)}, which it requires"
        elif taken:
            complements.append(other.tool_id)
            reasons[other.tool_id] = f"it gives {', '.join(taken)}, which {tool.name} requires"
    sims = index.semantic.tool_similarities(row)
    order = sorted(range(len(index.tools)), key=lambda i: (-round(float(sims[i]), 4), i))
    alternatives: list[str] = []
    for i in order:
        other = index.tools[i]
        if i == row or other.tool_id in reasons:
            continue
        if other.category != tool.category and other.server != tool.server:
            continue
        alternatives.append(other.tool_id)
        reasons[other.tool_id] = f"a similar purpose (similarity {float(sims[i]):.2f})"
        if len(alternatives) >= limit:
            break
    return Relationships(
        alternatives=alternatives, complements=complements[: limit * 2], reasons=reasons
    )
