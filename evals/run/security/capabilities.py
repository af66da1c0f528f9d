"""Capability probes: what a tool can be made to do, proven by its effect rather than read
from its description. Only tools the run may call are probed (read-only by their
annotations, or every tool with ``--allow-writes``); each probe is harmless and bounded:

- ``command_execution`` (:mod:`.commands`): a shell command whose output only execution
  produces;
- ``outbound_request`` (:mod:`.outbound`): a URL of the harness's loopback canary listener;
- ``undeclared_recipient`` (:mod:`.recipients`): destinations in a sending tool's result
  that no argument named;
- ``annotation_contradicted``: a tool annotated read-only or closed-world that did one of
  these (:func:`.capability.annotation_findings`).
"""

from __future__ import annotations

from evals.run.security import commands, outbound, recipients
from evals.run.security.canary_listener import CanaryListener
from evals.run.security.capability import FAMILY, annotation_findings
from evals.run.security.findings import Finding
from evals.run.security.registry import Context, family


@family(
    FAMILY,
    checks=(commands.CHECK, outbound.CHECK, recipients.CHECK, "annotation_contradicted"),
    phase="calls",
)
async def check_capabilities(ctx: Context) -> list[Finding]:
    """Commands run, URLs fetched, recipients added: each proven by a harmless probe."""
    proven: list[Finding] = []
    counts = {commands.CHECK: 0, outbound.CHECK: 0, recipients.CHECK: 0}
    with CanaryListener() as listener:
        for tool in ctx.callable_tools:
            found, n = await commands.probe(ctx, tool)
            proven += found
            counts[commands.CHECK] += n
            found, n = await outbound.probe(ctx, tool, listener)
            proven += found
            counts[outbound.CHECK] += n
            found, n = await recipients.probe(ctx, tool)
            proven += found
            counts[recipients.CHECK] += n
    for check, n in counts.items():
        if n == 0:
            ctx.notes.append(
                f"{FAMILY}: {check}: 0 calls: no callable tool has an argument to probe"
            )
    if ctx.skipped:
        ctx.notes.append(
            f"{FAMILY}: {len(ctx.skipped)} tool(s) that may change state were not probed "
            "(pass --allow-writes to probe them)"
        )
    return proven + annotation_findings(ctx, proven)
