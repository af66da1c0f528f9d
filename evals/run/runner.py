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

The runner emits events and never prints; reporters subscribe.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from evals.run import aggregates
from evals.run.check_failures import NotChecked
from evals.run.checks import CheckContext, CheckFailure, CheckSpec, run_check
from evals.run.citations import RESOLVER, CitationEvidence
from evals.run.citations import resolve as resolve_citations
from evals.run.environment import machine
from evals.run.events import (
    CheckFailed,
    EventBus,
    RunFinished,
    RunStarted,
    ScenarioFinished,
    ScenarioStarted,
)
from evals.run.extract import organisation, retrieved_ids
from evals.run.id_lookup import IdLookup, LookupFailed, fill, lookup_failure, pick_ids
from evals.run.metrics import score_records
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.runlog import DEFAULT_MODE, CheckOutcome, RunLog, RunSummary, ScenarioRecord, Status
from evals.run.scenario import Scenario
from evals.run.targets import Target, TargetError
from evals.run.tool_descriptors import ToolDescriptors, builtin
from ocm_common.run_record import git_state

MODES: tuple[str, ...] = ("hybrid", "vector", "keyword")
SEARCH_MODE_ARG = "search_mode"
DEPTH_ARGS: tuple[str, ...] = ("n_results", "top_k")
IMPLICIT_CHECKS: tuple[str, ...] = ("no_tool_error", "schema_valid", "citations_resolve")
# A scenario whose right answer has nothing to cite (nothing found, more information needed):
# with this tag an answer without citations is not checked rather than failed.
NO_CITATIONS_TAG = "no-citations"


@dataclass(frozen=True)
class RunOptions:
    """How to run: concurrency, per-call timeout, ablation, which checks are switched off."""

    concurrency: int = 4
    timeout_s: float = 30.0
    ablation: bool = False
    depth: int = 10
    modes: tuple[str, ...] = MODES
    disabled_checks: frozenset[str] = field(default_factory=frozenset)
    ragas: bool = True
    llm: bool | None = None  # None: LLM-judged ragas metrics iff OPENAI_API_KEY is set
    tool_map: dict[str, str] = field(default_factory=dict)  # golden name -> the target's

    def as_config(self) -> dict[str, Any]:
        config = asdict(self)
        config["modes"] = list(self.modes)
        config["disabled_checks"] = sorted(self.disabled_checks)
        return config


def planned_checks(
    scenario: Scenario, disabled: frozenset[str] = frozenset()
) -> list[tuple[CheckSpec, bool]]:
    """The scenario's checks plus the implicit ones, minus those switched off by name."""
    implicit: list[CheckSpec] = []
    if not scenario.expects_error:
        implicit = [
            CheckSpec(check=name, value=False)
            if name == "citations_resolve" and NO_CITATIONS_TAG in scenario.tags
            else CheckSpec(check=name)
            for name in IMPLICIT_CHECKS
        ]
    planned = [(spec, True) for spec in implicit] + [(spec, False) for spec in scenario.expect]
    return [(spec, flag) for spec, flag in planned if spec.check not in disabled]


def evaluate_checks(
    scenario: Scenario,
    outcome: CallOutcome,
    tool: ToolInfo | None,
    ids: Sequence[str],
    disabled: frozenset[str] = frozenset(),
    citations: CitationEvidence | None = None,
    args: dict[str, Any] | None = None,
) -> list[CheckOutcome]:
    """Run every planned check on one outcome; failures become values, not exceptions."""
    ctx = CheckContext(
        data=outcome.structured,
        outcome=outcome,
        output_schema=tool.output_schema if tool else None,
        retrieved_ids=tuple(ids),
        citations=citations,
        args=dict(args if args is not None else scenario.args),
    )
    results: list[CheckOutcome] = []
    for spec, implicit in planned_checks(scenario, disabled):
        outcome_of = partial(CheckOutcome, check=spec.check, implicit=implicit)
        try:
            run_check(ctx, spec)
        except NotChecked as nothing:
            results.append(
                outcome_of(path=nothing.path, passed=True, checked=False, message=nothing.message)
            )
        except CheckFailure as failure:
            results.append(
                outcome_of(
                    path=failure.path, passed=False, failure=failure.kind, message=failure.message
                )
            )
        else:
            results.append(outcome_of(path=spec.path or "$", passed=True))
    return results


def with_depth(tool: ToolInfo | None, args: dict[str, Any], depth: int) -> dict[str, Any]:
    """``args`` with the tool's result-count argument raised to ``depth`` (within its maximum)."""
    if tool is None or depth <= 0:
        return args
    properties = tool.input_schema.get("properties") or {}
    for name in DEPTH_ARGS:
        if name in properties:
            limit = properties[name].get("maximum", depth)
            wanted = min(depth, int(limit))
            current = args.get(name, properties[name].get("default", 0)) or 0
            if current < wanted:
                return {**args, name: wanted}
    return args


class ScenarioRunner:
    """Runs scenarios through one open target, bounded by a semaphore, emitting events."""

    def __init__(
        self,
        tools: dict[str, ToolInfo],
        options: RunOptions,
        bus: EventBus,
        descriptors: ToolDescriptors | None = None,
    ) -> None:
        self.tools = tools
        self.options = options
        self.bus = bus
        # where each tool's result holds its ids (built-in tools when not given)
        self.descriptors = descriptors if descriptors is not None else builtin()
        self._gate = asyncio.Semaphore(max(1, options.concurrency))

    async def one(
        self, target: Target, scenario: Scenario, mode: str, args: dict[str, Any], with_checks: bool
    ) -> ScenarioRecord:
        self.bus.emit(ScenarioStarted(scenario.id, scenario.tool, mode))
        described = self.descriptors.of(scenario.tool)
        base: dict[str, Any] = {
            "id": scenario.id,
            "title": scenario.title,
            "tool": scenario.tool,
            "version": scenario.version,
            "tags": list(scenario.tags),
            "mode": mode,
            "org": organisation(scenario.tool, scenario.relevant, self.descriptors),
            "args": args,
            "relevant": dict(scenario.relevant),
            "ids_measured": described.measures_ids,
        }
        for lookup in reversed(scenario.lookups):
            try:
                ids = await self._looked_up(target, lookup)
            except LookupFailed as missing:
                record = self._lookup_failed(base, lookup, str(missing), with_checks)
                self.bus.emit(ScenarioFinished(record))
                return record
            tool = self.tools.get(scenario.tool)
            args = fill(args, lookup.into, ids, tool.input_schema if tool else None)
            if lookup.grade is not None:
                base["relevant"] = {**base["relevant"], **dict.fromkeys(ids, lookup.grade)}
        base["args"] = args
        if scenario.lookups and base["org"] == "other":
            # the passage's publisher: the organisation of the tool whose answer named its id
            found = (organisation(lookup.tool, (), self.descriptors) for lookup in scenario.lookups)
            base["org"] = next((org for org in found if org != "other"), "other")
        try:
            async with self._gate:
                outcome = await target.call_tool(
                    scenario.tool, args, timeout_s=self.options.timeout_s
                )
        except TargetError as exc:
            record = ScenarioRecord(**base, status="error", harness_error=str(exc))
            self.bus.emit(ScenarioFinished(record))
            return record
        ids = retrieved_ids(scenario.tool, outcome.structured, self.descriptors)
        tool = self.tools.get(scenario.tool)
        deep_args = with_depth(tool, args, self.options.depth)
        measured = scenario.is_retrieval and described.measures_ids
        if measured and deep_args != args and not outcome.is_error:
            try:
                async with self._gate:
                    deep = await target.call_tool(
                        scenario.tool, deep_args, timeout_s=self.options.timeout_s
                    )
                ids_for_metrics = retrieved_ids(scenario.tool, deep.structured, self.descriptors)
            except TargetError:
                ids_for_metrics = ids
        else:
            ids_for_metrics = ids
        checks: list[CheckOutcome] = []
        status: Status
        evidence: CitationEvidence | None = None
        if with_checks:
            if not outcome.is_error and "citations_resolve" not in self.options.disabled_checks:
                evidence = await self._resolve_citations(target, outcome)
            checks = evaluate_checks(
                scenario, outcome, tool, ids, self.options.disabled_checks, evidence, args
            )
            for check in checks:
                if not check.passed:
                    self.bus.emit(CheckFailed(scenario.id, mode, check))
            status = "passed" if all(c.passed for c in checks) else "failed"
        else:
            status = "failed" if outcome.is_error else "passed"
        record = ScenarioRecord(
            **base,
            status=status,
            latency_ms=round(outcome.latency_ms, 3),
            timings_ms=outcome.timings,
            is_error=outcome.is_error,
            error_text=outcome.text if outcome.is_error else None,
            checks=checks,
            retrieved_ids=ids_for_metrics,
            result=outcome.structured,
            citations=evidence.model_dump() if evidence else None,
        )
        self.bus.emit(ScenarioFinished(record))
        return record

    async def _looked_up(self, target: Target, lookup: IdLookup) -> list[str]:
        """The ids the lookup names, from the same target's own answer to its search."""
        try:
            async with self._gate:
                found = await target.call_tool(
                    lookup.tool, dict(lookup.args), timeout_s=self.options.timeout_s
                )
        except TargetError as exc:
            raise LookupFailed(lookup_failure(lookup, f"the call failed: {exc}")) from None
        if found.is_error:
            reason = f"it answered with a tool error: {found.text.strip()[:200]}"
            raise LookupFailed(lookup_failure(lookup, reason))
        ids = pick_ids(lookup, found.structured)
        if not ids:
            reason = "no object there names it" if lookup.key else "no id there"
            raise LookupFailed(lookup_failure(lookup, reason))
        return ids

    @staticmethod
    def _lookup_failed(
        base: dict[str, Any], lookup: IdLookup, message: str, with_checks: bool
    ) -> ScenarioRecord:
        """One failure, named once: the scenario could not be asked, so nothing else is judged."""
        check = CheckOutcome(
            check="ids_from", path=lookup.path, passed=False, failure="lookup", message=message
        )
        return ScenarioRecord(
            **base, status="failed", checks=[check] if with_checks else [], harness_error=None
        )

    async def _resolve_citations(
        self, target: Target, outcome: CallOutcome
    ) -> CitationEvidence | None:
        """Show-source evidence for the result's citations, from the same target."""
        served = RESOLVER in self.tools
        async with self._gate:
            return await resolve_citations(
                target, outcome.structured, self.options.timeout_s, served=served
            )

    async def run_pass(
        self,
        target: Target,
        scenarios: Sequence[Scenario],
        mode: str,
        *,
        override_mode: bool = False,
    ) -> list[ScenarioRecord]:
        def args_for(scenario: Scenario) -> dict[str, Any]:
            args = dict(scenario.args)
            if override_mode:
                args[SEARCH_MODE_ARG] = mode
            if mode != DEFAULT_MODE:
                args = with_depth(self.tools.get(scenario.tool), args, self.options.depth)
            return args

        with_checks = mode == DEFAULT_MODE
        return list(
            await asyncio.gather(
                *(self.one(target, s, mode, args_for(s), with_checks) for s in scenarios)
            )
        )


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


def git_info(cwd: Path | None = None) -> dict[str, Any]:
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
    extra_config: dict[str, Any] | None = None,
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
