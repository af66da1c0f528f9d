"""Run golden scenarios against a target and write one run log.

Main pass: every scenario once, through the target as given, with its checks (plus the
implicit ``no_tool_error`` and ``schema_valid`` unless the scenario expects a tool error).
Ablation (``--ablation``): the retrieval scenarios again per search mode. The in-process
reference server is rebuilt with ``Settings(mode=...)``; other targets are only ablated for
tools whose inputSchema accepts ``search_mode``, by overriding that argument. Ablation passes
record retrieved ids and metrics, not checks (expected values may legitimately depend on the
mode, e.g. ``provenance``).

Retrieval metrics are measured at a fixed depth (``RunOptions.depth``, default 10), as in
BEIR: when a scenario's own arguments ask for fewer results (``n_results``/``top_k``), its
checks run on that call and its metrics on a second call with the depth argument raised
(capped at the maximum the tool publishes). Ablation passes call at depth directly.

Scenarios whose tool the target does not publish are not run (a call could only fail): the
summary names those tools (``missing_tools``) and counts the scenarios left out
(``counts.not_run_missing_tool``); the command line turns that into a non-zero exit unless
missing tools are allowed. With a tool map (``RunOptions.tool_map``, golden name -> the
target's) the target is called under its own names and everything recorded under the golden
ones (:mod:`evals.run.tool_map`).

The runner emits events and never prints; reporters subscribe. One pass through a target is
scenario_runner.py's, the checks of one scenario scenario_checks.py's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.run import aggregates
from evals.run.environment import machine
from evals.run.events import EventBus, RunFinished, RunStarted, ScenarioFinished
from evals.run.metrics import score_records
from evals.run.outcome import ToolInfo
from evals.run.runlog import DEFAULT_MODE, GitInfo, RunLog, RunSummary, ScenarioRecord
from evals.run.scenario import Scenario
from evals.run.scenario_runner import SEARCH_MODE_ARG, RunOptions, ScenarioRunner
from evals.run.target_contract import Target
from evals.run.tool_descriptors import ToolDescriptors
from ocm_common.run_record import git_state


def ablation_plan(
    target: Target, scenarios: Sequence[Scenario], tools: dict[str, ToolInfo], modes: Sequence[str]
) -> list[tuple[str, Target | None, list[Scenario]]]:
    """Per mode: the reconfigured target (or None: override the argument) and its scenarios."""
    retrieval = [s for s in scenarios if s.is_retrieval]
    plan: list[tuple[str, Target | None, list[Scenario]]] = []
    for mode in modes:
        reconfigured = target.for_mode(mode)
        if reconfigured is not None:
            plan.append((mode, reconfigured, retrieval))
        else:
            eligible = [
                s for s in retrieval if s.tool in tools and tools[s.tool].accepts(SEARCH_MODE_ARG)
            ]
            plan.append((mode, None, eligible))
    return plan


async def run_scenarios(
    target: Target,
    scenarios: Sequence[Scenario],
    options: RunOptions,
    bus: EventBus,
    descriptors: ToolDescriptors | None = None,
) -> tuple[list[ScenarioRecord], list[ToolInfo]]:
    """Main pass (and the ablation passes) through ``target``; returns records and tools."""
    async with target:
        listed = await target.list_tools()
        tools = {tool.name: tool for tool in listed}
        scenarios = [s for s in scenarios if s.tool in tools]  # the others could only fail
        plan = ablation_plan(target, scenarios, tools, options.modes) if options.ablation else []
        total = len(scenarios) + sum(len(group) for _, _, group in plan)
        bus.emit(RunStarted(target.spec, total, tuple(mode for mode, _, _ in plan)))
        runner = ScenarioRunner(tools, options, bus, descriptors)
        records = await runner.run_pass(target, scenarios, DEFAULT_MODE)
        for mode, reconfigured, group in plan:
            if not group:
                continue
            if reconfigured is None:
                records += await runner.run_pass(target, group, mode, override_mode=True)
            else:
                async with reconfigured:
                    mode_tools = {t.name: t for t in await reconfigured.list_tools()}
                    mode_runner = ScenarioRunner(mode_tools, options, bus, descriptors)
                    records += await mode_runner.run_pass(reconfigured, group, mode)
    return records, listed


def git_info(cwd: Path | None = None) -> GitInfo:
    """The commit the run measured (None outside a repository or before the first commit)."""
    commit, dirty = git_state(cwd)
    return {"commit": commit, "dirty": dirty}


def run_environment(target: Target) -> dict[str, Any]:
    """The model and index the backend used (where known) and the machine that ran it."""
    identity = getattr(target, "identity", None)
    known = identity() if callable(identity) else {}
    return {**known, "machine": machine()}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


async def finalize(
    records: list[ScenarioRecord],
    scenarios: Sequence[Scenario],
    options: RunOptions,
    descriptors: ToolDescriptors | None = None,
) -> list[ScenarioRecord]:
    """Attach per-query retrieval metrics and (optionally) ragas scores to the records."""
    scored = score_records(records)
    if options.ragas:
        from evals.run import ragas_metrics

        use_llm = ragas_metrics.llm_enabled() if options.llm is None else options.llm
        judges = ragas_metrics.build_judges() if use_llm else None
        by_id = {s.id: s for s in scenarios}
        scored = await ragas_metrics.score_records(
            scored,
            by_id,
            judges=judges,
            concurrency=options.concurrency,
            descriptors=descriptors,
        )
    return scored


async def execute(
    target: Target,
    scenarios: Sequence[Scenario],
    out: Path,
    *,
    options: RunOptions | None = None,
    bus: EventBus | None = None,
    extra_config: dict[str, str] | None = None,
    descriptors: ToolDescriptors | None = None,
) -> RunLog:
    """Run everything and write the run log to ``out``.

    ``descriptors`` say where each tool's result holds its ids, answer and passages: those of
    the golden set (:func:`evals.run.tool_descriptors.golden_descriptors`); the built-in tools'
    when not given.

    If the harness itself fails, an ``aborted`` log is still written (with the error and the
    records gathered so far) so the gate reports a harness error, then the exception is raised.
    """
    options = options or RunOptions()
    bus = bus or EventBus()
    if options.tool_map:
        from evals.run.tool_map import MappedTarget

        target = MappedTarget(target, options.tool_map)
    started_at, clock = _now(), time.perf_counter()
    config = {**options.as_config(), **(extra_config or {})}
    records: list[ScenarioRecord] = []
    listed: list[ToolInfo] = []
    error: BaseException | None = None
    finished: list[ScenarioRecord] = []
    keep = bus.subscribe(
        lambda e: finished.append(e.record) if isinstance(e, ScenarioFinished) else None
    )
    try:
        records, listed = await run_scenarios(target, scenarios, options, bus, descriptors)
        if records:
            records = await finalize(records, scenarios, options, descriptors)
    except Exception as exc:
        error = exc
        records = records or finished
    finally:
        bus.unsubscribe(keep)
    names = sorted(t.name for t in listed)
    listed_ok = bool(listed) or error is None  # a server may publish no tools at all
    missing = sorted({s.tool for s in scenarios} - set(names)) if listed_ok else []
    counts = aggregates.counts(records)
    if missing:
        counts["not_run_missing_tool"] = sum(s.tool in missing for s in scenarios)
    summary = RunSummary(
        status="aborted" if error else "complete",
        error=f"{type(error).__name__}: {error}" if error else None,
        target=target.spec,
        started_at=started_at,
        finished_at=_now(),
        duration_s=round(time.perf_counter() - clock, 3),
        git=git_info(),
        environment=run_environment(target),
        config=config,
        tools=names,
        missing_tools=missing,
        modes=sorted({r.mode for r in records}),
        counts=counts,
        aggregates=aggregates.build(records) if records else {},
    )
    surface = {
        t.name: {"inputSchema": t.input_schema, "outputSchema": t.output_schema} for t in listed
    }
    log = RunLog(summary=summary, records=records, surface=surface if listed else None)
    log.write(out)
    bus.emit(RunFinished(summary))
    if error is not None:
        raise error
    return log
