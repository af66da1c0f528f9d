"""Unbounded work: each numeric, string and array argument at its extreme (the declared
maximum, ``maxLength`` or ``maxItems`` when the schema bounds it, otherwise far past any
sensible size), one argument at a time, each call bounded in time. Reported:

- ``unbounded_time``: no answer within the call bound;
- ``unbounded_memory``: the server process (stdio targets) grew by more than the memory
  bound while answering;
- ``server_crash``: the call ended the server process or its connection.

Servers MUST validate tool inputs and rate-limit invocations (specification, tools,
security considerations); a bounded argument is how a tool keeps one call from taking the
whole server.
"""

from __future__ import annotations

from evals.conformance.grading import grade_of
from evals.run.security.findings import TOOLS_SECURITY, Finding
from evals.run.security.inputs import extreme
from evals.run.security.probe import probe_call
from evals.run.security.registry import Context, family
from evals.run.security.reproduce import call_line
from evals.run.security.session import Call

FAMILY = "unbounded"


def judge(call: Call, name: str, how: str, spec: str, memory_limit_mb: float) -> list[Finding]:
    """The findings one probing call deserves: a crash or a timeout, and memory growth past
    the bound (measured until the answer or the timeout)."""
    found: list[tuple[str, str]] = []
    if call.status == "crash":
        detail = call.detail or call.text[:80]
        found.append(("server_crash", f"the server process or connection died on {how} ({detail})"))
    elif call.status == "timeout":
        found.append(("unbounded_time", f"no answer within the bound for {how}"))
    if call.peak_rss_growth_mb is not None and call.peak_rss_growth_mb > memory_limit_mb:
        found.append(
            (
                "unbounded_memory",
                f"the server grew by {call.peak_rss_growth_mb:.0f} MB (bound "
                f"{memory_limit_mb:.0f} MB) on {how}",
            )
        )
    return [
        Finding(
            check=check,
            family=FAMILY,
            grade=grade_of(check),
            level="error",
            message=message,
            tool=call.tool,
            where=f"arguments/{name}" if name else None,
            evidence=f"{call.status} after {call.latency_ms / 1000:.1f} s",
            reference=TOOLS_SECURITY,
            reproduction=call_line(spec, call.tool, call.args),
        )
        for check, message in found
    ]


@family(FAMILY, checks=("unbounded_time", "unbounded_memory", "server_crash"), phase="calls")
async def check_unbounded(ctx: Context) -> list[Finding]:
    """Extreme numbers and sizes, one argument at a time, time and memory bounded."""
    findings: list[Finding] = []
    for tool in ctx.callable_tools:
        for name, schema in tool.properties.items():
            probe = extreme(schema)
            if probe is None:
                continue
            value, how = probe
            call = await probe_call(ctx.session, tool, {name: value}, "unbounded")
            findings += judge(call, name, f"{name} = {how}", ctx.spec, ctx.memory_limit_mb)
    # Calls made by other families count too (a crash on an ordinary call is still a crash).
    crashed: set[str] = set()
    for call in ctx.session.calls:
        if call.purpose != "unbounded" and call.status == "crash" and call.tool not in crashed:
            crashed.add(call.tool)  # one finding per tool, however many ordinary calls
            findings += judge(call, "", "an ordinary call", ctx.spec, ctx.memory_limit_mb)
    return findings
