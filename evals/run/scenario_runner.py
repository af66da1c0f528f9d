"""One pass of golden scenarios through one open target: each scenario's id lookups, its call
(bounded by the run's concurrency), a second call at the metric depth where its own arguments
ask for fewer results, its checks and citations, one record and its events. The options of the
run (:class:`RunOptions`) live here, as the runner of each pass reads them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from evals.run.citations import RESOLVER, CitationEvidence
from evals.run.citations import resolve as resolve_citations
from evals.run.events import CheckFailed, EventBus, ScenarioFinished, ScenarioStarted
from evals.run.extract import organisation, retrieved_ids
from evals.run.id_lookup import IdLookup, LookupFailed, fill, lookup_failure, pick_ids
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.public_keys import only_private_ids
from evals.run.runlog import DEFAULT_MODE, CheckOutcome, ScenarioRecord, Status
from evals.run.scenario import Scenario
from evals.run.scenario_checks import evaluate_checks
from evals.run.target_contract import Target, TargetError
from evals.run.tool_descriptors import ToolDescriptors, builtin
from ocm_common.json_types import Arguments

MODES: tuple[str, ...] = ("hybrid", "vector", "keyword")
SEARCH_MODE_ARG = "search_mode"
DEPTH_ARGS: tuple[str, ...] = ("n_results", "top_k")


class RunConfig(TypedDict):
    """The run options as the run summary records them (``RunSummary.config``)."""

    concurrency: int
    timeout_s: float
    ablation: bool
    depth: int
    modes: list[str]
    disabled_checks: list[str]
    ragas: bool
    llm: bool | None
    tool_map: dict[str, str]
    golden: NotRequired[str]  # the golden folder, when the run was asked for one


class RecordBase(TypedDict):
    """What a scenario's record says before its call: the scenario and the arguments sent."""

    id: str
    title: str
    tool: str
    version: int
    tags: list[str]
    mode: str
    org: str
    args: Arguments
    relevant: dict[str, int]
    ids_measured: bool


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

    def as_config(self) -> RunConfig:
        return {
            "concurrency": self.concurrency,
            "timeout_s": self.timeout_s,
            "ablation": self.ablation,
            "depth": self.depth,
            "modes": list(self.modes),
            "disabled_checks": sorted(self.disabled_checks),
            "ragas": self.ragas,
            "llm": self.llm,
            "tool_map": dict(self.tool_map),
        }


def with_depth(tool: ToolInfo | None, args: Arguments, depth: int) -> Arguments:
    """``args`` with the tool's result-count argument raised to ``depth`` (within its maximum)."""
    if tool is None or depth <= 0:
        return args
    properties = tool.input_schema.get("properties") or {}
    for name in DEPTH_ARGS:
        if name in properties:
            limit = properties[name].get("maximum", depth)
            wanted = min(depth, int(limit))
            current = args.get(name, properties[name].get("default", 0)) or 0
            if not isinstance(current, int | float):  # as `<` would: not a number
                raise TypeError(
                    f"'<' not supported between instances of '{type(current).__name__}' and 'int'"
                )
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
        self, target: Target, scenario: Scenario, mode: str, args: Arguments, with_checks: bool
    ) -> ScenarioRecord:
        self.bus.emit(ScenarioStarted(scenario.id, scenario.tool, mode))
        described = self.descriptors.of(scenario.tool)
        base: RecordBase = {
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
                scenario,
                outcome,
                tool,
                ids,
                self.options.disabled_checks,
                evidence,
                args,
                described.extensions,
            )
            for check in checks:
                if not check.passed:
                    self.bus.emit(CheckFailed(scenario.id, mode, check))
            status = "passed" if all(c.passed for c in checks) else "failed"
        else:
            status = "failed" if outcome.is_error else "passed"
        if only_private_ids(ids_for_metrics, base["relevant"]):
            base["ids_measured"] = False
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
        base: RecordBase, lookup: IdLookup, message: str, with_checks: bool
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
        def args_for(scenario: Scenario) -> Arguments:
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
