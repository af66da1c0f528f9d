"""One-line reproductions: what to run or send to see a finding again."""

from __future__ import annotations

import json
import shlex
from typing import Any

SHOW_LIMIT = 60


def shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHOW_LIMIT:
        return f"<{len(value):,} x {value[:1]!r}>"
    if isinstance(value, list) and len(value) > 5:
        return [shorten(value[0]), f"<... {len(value):,} items>"]
    if isinstance(value, dict):
        return {k: shorten(v) for k, v in value.items()}
    return value


def call_line(spec: str, tool: str, args: dict[str, Any]) -> str:
    """``tools/call`` with the arguments as JSON (huge values abbreviated), against ``spec``."""
    body = json.dumps({"name": tool, "arguments": shorten(args)}, ensure_ascii=True)
    return f"tools/call {body}  # target {spec}"


def surface_line(spec: str, family: str, pointer: str) -> str:
    """Re-run one family of surface checks and look at ``pointer`` in the tools/list answer."""
    return (
        f"python -m evals security --target {shlex.quote(spec)} --family {family}"
        f"  # tools/list {pointer}"
    )
