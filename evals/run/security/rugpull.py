"""Rug pull: a tool surface that changes under the client. A user approves a tool by what
``tools/list`` said; a server that later changes a description, a schema or an annotation
(or adds and removes tools) can turn an approved tool into another one. The check lists
the tools twice in a row, calls every tool it may call once, and lists them again, all in
one session, and reports every difference (the contract diff's JSON-pointer paths)."""

from __future__ import annotations

from evals.conformance.grading import grade_of
from evals.contract import diff_surfaces
from evals.contract_change import Change
from evals.run.security.findings import LIST_CHANGED, Finding
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import surface_line
from evals.run.security.surface import surface_map

FAMILY = "rug_pull"


def _findings(changes: list[Change], when: str, ctx: Context) -> list[Finding]:
    by_tool: dict[str, list[Change]] = {}
    for change in changes:
        tool = change.pointer.split("/")[1].replace("~1", "/").replace("~0", "~")
        by_tool.setdefault(tool, []).append(change)
    tools = ctx.session.capabilities.get("tools")
    announced = isinstance(tools, dict) and bool(tools.get("listChanged"))
    note = (
        "the server announced listChanged"
        if announced
        else "the server did not announce tools.listChanged"
    )
    return [
        Finding(
            check="tool_surface_changed",
            family=FAMILY,
            grade=grade_of("tool_surface_changed"),
            level="error",
            message=f"tools/list changed {when} ({note}): "
            + "; ".join(c.describe() for c in items[:3])
            + (f" (+{len(items) - 3} more)" if len(items) > 3 else ""),
            tool=tool,
            where=items[0].pointer,
            evidence=", ".join(c.pointer for c in items)[:300],
            reference=LIST_CHANGED,
            reproduction=surface_line(ctx.spec, FAMILY, items[0].pointer),
        )
        for tool, items in sorted(by_tool.items())
    ]


@family(FAMILY, checks=("tool_surface_changed",), phase="calls")
async def check_rug_pull(ctx: Context) -> list[Finding]:
    """The tool surface is the same in two listings in a row and after one call per tool."""
    first = surface_map(ctx.tools)
    second = surface_map(await ctx.session.list_tools())
    findings = _findings(diff_surfaces(first, second), "between two listings in a row", ctx)
    crashed = False
    for tool in ctx.callable_tools:
        call = await probe_call(ctx.session, tool, {}, "rug_pull")
        crashed |= call.status in ("timeout", "crash")
    if crashed:
        ctx.notes.append(
            "rug_pull: a call timed out or crashed the server, so the listing after the calls "
            "comes from a new session (a change kept in the old process is not seen)"
        )
    after = surface_map(await ctx.session.list_tools())
    n = len(ctx.callable_tools)
    findings += _findings(diff_surfaces(second, after), f"after {n} tool call(s)", ctx)
    return findings
