"""Reach every tool, with every value its schema offers: each callable tool is called with the
boundary calls fuzz makes first (:mod:`evals.run.schema_edges`: every enum and const value and
both booleans, strings fitted to their ``pattern`` and ``format`` at ``minLength`` and
``maxLength``, numbers at their bounds, arrays at ``minItems`` / ``maxItems``, optional
arguments absent and present, each ``anyOf`` set), the plain call and every enum value first,
at most ``--sweep-limit`` calls per tool. A call the server refuses for any of its arguments
(the edge's values are no probe of their own) is retried with other valid ones
(:func:`.probe.probe_call`). The family finds nothing itself: the ``results``, ``effects``,
``secrets`` and ``unbounded`` families read these calls like every other. A tool that no call
reached is ``tool_unreachable`` (a warning: its checks checked nothing), with the reason its
server gave.
"""

from __future__ import annotations

import json

from evals.conformance.grading import grade_of, reference_of
from evals.run.schema_edges import Edge
from evals.run.security.findings import Finding
from evals.run.security.probe import COUNTED, edges, probe_call, valid_args
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.session import Call
from evals.run.security.surface import ToolSurface
from ocm_common.json_types import Arguments

FAMILY = "reach"
UNREACHABLE = "tool_unreachable"
MAX_EDGE_BYTES = 64 * 1024  # larger edges are the unbounded family's (its extreme values)


def _order(edge: Edge) -> int:
    """The plain call first (it holds every enum's first value), then every other enum value
    (the choices rounds, or one field's value at a time), then the other field edges, then
    optional arguments and anyOf sets."""
    if edge.field == "(optional)" and edge.what == "none":
        return 0
    if edge.field == "(choices)" or edge.what.startswith("value "):
        return 1
    if edge.field.startswith("("):
        return 3
    return 2


def sweep(tool: ToolSurface, limit: int) -> tuple[list[Arguments], int]:
    """The arguments of each call, and how many edges were left out."""
    built = sorted(edges(tool.input_schema).edges, key=_order)
    small = [e for e in built if len(json.dumps(e.args, default=str)) <= MAX_EDGE_BYTES]
    calls = [dict(e.args) for e in small] or [valid_args(tool.input_schema)]
    return calls[:limit], max(0, len(calls) - limit) + len(built) - len(small)


def _unreachable(ctx: Context, tool: ToolSurface, calls: list[Call]) -> Finding:
    last = calls[-1]
    reasons = sorted({c.reach_reason for c in calls if c.reach_reason})
    return Finding(
        check=UNREACHABLE,
        family=FAMILY,
        grade=grade_of(UNREACHABLE),
        message=f"no probe reached the tool ({len(calls)} probe(s), each refused for its "
        "arguments after every retry): its checks checked nothing",
        tool=tool.name,
        where="arguments",
        evidence="; ".join(reasons)[:300] or last.text[:300],
        reference=reference_of(UNREACHABLE),
        reproduction=call_line(ctx.spec, tool.name, last.args),
    )


@family(FAMILY, checks=(UNREACHABLE,), phase="calls")
async def check_reach(ctx: Context) -> list[Finding]:
    """Every tool called at every boundary of its schema, every enum value first."""
    findings: list[Finding] = []
    for tool in ctx.callable_tools:
        planned, left_out = sweep(tool, ctx.sweep_limit)
        made: list[Call] = []
        for args in planned:
            # every value is filler here: a refusal of any of them is retried with others
            made.append(await probe_call(ctx.session, tool, {}, FAMILY, base=args))
        if left_out:
            ctx.notes.append(
                f"{FAMILY}: {tool.name}: {left_out} boundary call(s) not made (--sweep-limit "
                f"{ctx.sweep_limit}, or arguments over {MAX_EDGE_BYTES // 1024} KB)"
            )
        if made and not any(c.reach in COUNTED for c in made):
            findings.append(_unreachable(ctx, tool, made))
    return findings
