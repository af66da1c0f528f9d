"""One-line reproductions: what to run or send to see a finding again."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING

from evals.conformance.grading import grade_of, reference_of
from ocm_common.findings import Finding
from ocm_common.json_types import Arguments, JsonObject, JsonValue

if TYPE_CHECKING:
    from evals.run.security.session import Call

SHOW_LIMIT = 60


def shorten(value: JsonValue) -> JsonValue:
    if isinstance(value, str) and len(value) > SHOW_LIMIT:
        return f"<{len(value):,} x {value[:1]!r}>"
    if isinstance(value, list) and len(value) > 5:
        return [shorten(value[0]), f"<... {len(value):,} items>"]
    if isinstance(value, dict):
        return {k: shorten(v) for k, v in value.items()}
    return value


def shorten_args(args: Arguments) -> JsonObject:
    """A call's arguments with huge values abbreviated (:func:`shorten` of each)."""
    return {k: shorten(v) for k, v in args.items()}


def call_line(spec: str, tool: str, args: Arguments) -> str:
    """``tools/call`` with the arguments as JSON (huge values abbreviated), against ``spec``."""
    body = json.dumps({"name": tool, "arguments": shorten(args)}, ensure_ascii=True)
    return f"tools/call {body}  # target {spec}"


def surface_line(spec: str, family: str, pointer: str) -> str:
    """Re-run one family of surface checks and look at ``pointer`` in the tools/list answer."""
    return f"ocm security --target {shlex.quote(spec)} --family {family}  # tools/list {pointer}"


def call_finding(
    spec: str, family: str, check: str, call: Call, message: str, evidence: str
) -> Finding:
    """The finding one call of a tool gave: graded by its check, with the call to send again."""
    return Finding(
        check=check,
        family=family,
        grade=grade_of(check),
        message=message,
        tool=call.tool,
        where=f"{call.purpose} call ({call.status})",
        evidence=evidence[:300],
        reference=reference_of(check),
        reproduction=call_line(spec, call.tool, call.args),
    )
