"""One security run: refuse what must not be probed, connect with the bait in place, list
the tools, decide which may be called, run the families phase by phase within the run's
deadline, and return the report (findings made before a deadline or a lost target stay)."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass

from evals.run.security.findings import SecurityReport
from evals.run.security.probe import counted, reach_rows
from evals.run.security.registry import PHASES, Context, Family, select
from evals.run.security.safety import check_target, plan
from evals.run.security.sandbox import Sandbox
from evals.run.security.session import Session
from evals.run.targets import BEARER_ENV, TargetError
from ocm_common.findings import EventStream

# Families in these phases call tools; one that made no call says so in the report.
CALLING_PHASES = ("calls", "after")


@dataclass(frozen=True)
class Options:
    allow_writes: bool = False
    allow_remote: bool = False
    call_timeout_s: float = 10.0
    deadline_s: float = 600.0
    memory_limit_mb: float = 256.0
    max_result_bytes: int = 1_000_000
    sweep_limit: int = 40
    families: tuple[str, ...] = ()


async def run_security(
    spec: str, options: Options = Options(), events: EventStream | None = None
) -> SecurityReport:
    """Run the chosen families; every finding and skipped tool goes out on ``events`` (the
    report collects them as one more listener)."""
    report = SecurityReport(target=spec)
    events = events or EventStream()
    events.subscribe(lambda e: report.findings.append(e.finding) if e.finding else None)
    started = time.perf_counter()
    try:
        families = select(list(options.families) or None)
        check_target(spec, allow_remote=options.allow_remote)
    except (ValueError, TargetError) as exc:
        report.error = str(exc)
        return report
    report.checks = {check: f.name for f in families for check in f.checks}
    sandbox = Sandbox.create()
    session = Session(spec, sandbox, call_timeout_s=options.call_timeout_s)
    try:
        await asyncio.wait_for(_run(session, families, options, report, events), options.deadline_s)
    except TimeoutError:
        report.error = f"the run did not finish within its {options.deadline_s:g} s deadline"
    except TargetError as exc:
        report.error = str(exc)
        if session.kind in ("http", "https") and not os.environ.get(BEARER_ENV):
            report.error += f" (if the server requires a bearer token, set {BEARER_ENV})"
    finally:
        report.calls = len(session.calls)
        report.call_log = [call.summary() for call in session.calls]
        report.reach = reach_rows(session.calls)
        await session.close()
        sandbox.remove()
        report.duration_s = time.perf_counter() - started
    return report


async def _run(
    session: Session,
    families: list[Family],
    options: Options,
    report: SecurityReport,
    events: EventStream,
) -> None:
    try:
        await session.open()
        tools = await session.list_tools()
    except TargetError:
        # An HTTP endpoint that refuses the session (auth required, no token) can still be
        # checked for its transport rules; the run stays a harness error.
        ctx = Context(session.spec, session, [], [], session.sandbox, notes=report.notes)
        for fam in (f for f in families if f.phase == "http"):
            for finding in await fam.run(ctx):
                events.found(f"security:{fam.name}", finding)
        raise
    callable_tools, skipped = plan(tools, allow_writes=options.allow_writes)
    report.skipped = skipped
    for item in skipped:
        events.skip("security", item)
    if options.allow_writes:
        report.notes.append("--allow-writes: tools that may change state were called too")
    ctx = Context(
        spec=session.spec,
        session=session,
        tools=tools,
        callable_tools=callable_tools,
        sandbox=session.sandbox,
        memory_limit_mb=options.memory_limit_mb,
        max_result_bytes=options.max_result_bytes,
        sweep_limit=options.sweep_limit,
        notes=report.notes,
        skipped=skipped,
    )
    for phase in PHASES:
        for fam in (f for f in families if f.phase == phase):
            before = len(session.calls)
            found = await fam.run(ctx)
            for finding in found:
                events.found(f"security:{fam.name}", finding)
            if phase in CALLING_PHASES:
                # a "calls" family judges its own calls; an "after" family reads every call.
                # Only calls that reached their tool (or were refused for the probe's own
                # value) checked anything.
                own = session.calls[before:] if phase == "calls" else session.calls
                report.family_calls[fam.name] = sum(counted(c) for c in own)
                if report.family_calls[fam.name] == 0:
                    made = (
                        f"made {len(own)} call(s), none of which reached a tool"
                        if own
                        else "made no calls"
                    )
                    report.notes.append(
                        f"{fam.name}: {made} ({len(callable_tools)} tools it may call), so its "
                        "checks found nothing because they checked nothing"
                    )
