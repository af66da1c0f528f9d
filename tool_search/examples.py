"""Examples of calls from known-good inputs: golden scenarios' arguments (for the tools of the
server they were written for) and the examples a tool-definition file carries. They are shown
in answers, never indexed for ranking (the routing evaluation asks golden questions)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tool_search.records import ToolCallExample, ToolRecord

MAX_EXAMPLES = 3

# libyaml's parser when built (much faster on the golden files), else the Python one
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def golden_examples(root: Path) -> dict[str, list[ToolCallExample]]:
    """tool name -> [{arguments, source}], the first scenarios of each tool with distinct
    argument names (so the examples show different ways to call it)."""
    out: dict[str, list[ToolCallExample]] = {}
    shapes: dict[str, set[tuple[str, ...]]] = {}
    for path in sorted(root.glob("**/*.yaml")):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
        for scenario in data.get("scenarios") or ():
            tool, args = scenario.get("tool"), scenario.get("args")
            if not tool or not isinstance(args, dict) or not args:
                continue
            shape = tuple(sorted(args))
            seen = shapes.setdefault(tool, set())
            if shape in seen or len(out.get(tool, [])) >= MAX_EXAMPLES:
                continue
            seen.add(shape)
            out.setdefault(tool, []).append(
                {"arguments": args, "source": f"golden scenario {scenario.get('id')}"}
            )
    return out


def attach_examples(tools: list[ToolRecord], golden: Path | None, server: str) -> None:
    """File examples as they are (`sources.tool_from_definition` reads them); golden examples
    for the tools of `server` that have none."""
    found = golden_examples(golden) if golden is not None and golden.is_dir() else {}
    for tool in tools:
        tool.examples = tool.examples[:MAX_EXAMPLES]
        if tool.server == server and not tool.examples:
            tool.examples = found.get(tool.name, [])
