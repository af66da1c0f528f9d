"""The fuzz run's properties: each tool's case families as hypothesis properties (generated
inside ``@given``, shrunk and saved in the example database), each case called once and judged
by the named checks (fuzz_checks.py), the schema's boundary cases first, and one answered call
replayed after the rest.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)
from hypothesis.errors import HypothesisWarning, Unsatisfiable

from evals.run.fuzz_checks import Classified, Context, classify, ending, run_checks
from evals.run.fuzz_models import (
    EDGE_FAMILY,
    KNOWN_FAMILY,
    VALID_FAMILY,
    Case,
    CaseFailed,
    EdgeOutcome,
    ToolStats,
    finding_for,
)
from evals.run.fuzz_recovery import RecoveringSession
from evals.run.fuzz_session import REPLAY
from evals.run.fuzz_strategies import Mutations, arguments_from, invalid_cases, valid_cases
from evals.run.fuzz_survival import NEEDS_RESTART, StopRun, StopTool, rule_for
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.schema_edges import schema_edges
from evals.run.target_contract import UNREADABLE_REPLY, UnreadableReply
from ocm_common.json_types import Arguments, JsonSchema


class Fuzzer(RecoveringSession):
    """Runs every tool's properties against one connected target.

    A property is one tool and one case family; hypothesis draws each case and runs it on the
    target's event loop inside the property, one at a time, so a failing case is shrunk (each
    smaller case is called again) and saved in the example database. Every Nth passing case,
    and every property that failed, is followed by a `tools/list` health check. A case after
    which the server died, stopped answering or hung is the engine's to record, restart and
    shrink (:meth:`_server_failure`); hypothesis sees it pass and goes on."""

    # ------------------------------------------------------------------ one case

    def run_case(self, tool: ToolInfo, case: Case, stats: ToolStats) -> CallOutcome | None:
        """Call the target with one case; raises CaseFailed naming every check it failed."""
        self.ensure_serving()
        out, error, took = self._call(tool.name, case.args)
        self._previous = (tool, case)
        # The periodic tools/list follows random cases only: a boundary case that breaks the
        # server fails the next one (answers), and one that fails is health-checked anyway.
        if not case.edge:
            self._cases_run += 1
        stats.record(case, out.latency_ms if out is not None else took * 1000)
        call = classify(out, error)
        stats.calls[call.kind] = stats.calls.get(call.kind, 0) + 1
        context = Context(
            case.kind,
            case.fields,
            tool,
            self.config.error_limit_ms,
            self.config.canary,
            case.family,
            case.args,
            str(getattr(self.target, "protocol_version", "") or ""),
        )
        how = self._how_failed(call)
        if isinstance(error, UnreadableReply):
            # judged by readable_reply alone; a server left deaf by it is restarted
            if how in NEEDS_RESTART:
                self._needs_restart = True
                self._count_restart(tool.name)
            call = Classified("protocol-error", None, UNREADABLE_REPLY, str(error))
            broken = run_checks(call, context, house_rules=self.config.house_rules)
            problems = [(r.name, message) for r, message in broken if r.name == "readable_reply"]
        elif how is not None:
            self._server_failure(tool, case, how)
            if case.edge:
                stats.edges.append(EdgeOutcome(case.edge, ending(call), [rule_for(how, case.kind)]))
            return None
        else:
            broken = run_checks(call, context, house_rules=self.config.house_rules)
            problems = [(r.name, message) for r, message in broken]
            problems += self._unreadable_lines()
        # A failing case is checked once its property has shrunk it (`check_property`), not
        # at every shrinking step: the step is already a failure, and the call count doubles.
        due = not case.edge and self._cases_run % max(1, self.config.health_every) == 0
        if not problems and due:
            problem, dead = self._answers_list()
            if dead is not None:
                self._server_failure(tool, case, dead, after_reply=True)
                return out
            if problem:
                problems.append(("still_serving", problem))
        if case.edge:
            stats.edges.append(EdgeOutcome(case.edge, ending(call), [name for name, _ in problems]))
        if problems:
            raise CaseFailed(case, problems, call.kind)
        return out

    def _unreadable_lines(self) -> list[tuple[str, str]]:
        """Lines the server wrote during the call that are not UTF-8 JSON-RPC and named no
        request (a reply that named one ended its call with UnreadableReply)."""
        process = self._process()
        if process is None:
            return []
        new = process.unreadable[self._unread_seen :]
        self._unread_seen = len(process.unreadable)
        return [
            (
                "readable_reply",
                f"the server wrote a line that is not valid UTF-8 JSON-RPC during this call: "
                f"{u.reason}, {u.excerpt[:120]}",
            )
            for u in new[:1]
            if u.request_id is None
        ]

    def _database(self, tool: str, family: str) -> ExampleDatabase:
        # One directory per property: the properties share their source, so hypothesis would
        # otherwise key every tool's saved cases alike.
        if self.config.database is None:
            return InMemoryExampleDatabase()
        return DirectoryBasedExampleDatabase(str(Path(self.config.database) / tool / family))

    def check_property(
        self,
        tool: ToolInfo,
        family: str,
        cases: st.SearchStrategy[Case],
        examples: int,
        stats: ToolStats,
        known: list[Case] | None = None,
        *,
        generate: bool = True,
    ) -> list[Arguments]:
        """Run one property; the arguments of the valid calls that answered (for the replay).

        ``known`` cases run first, in hypothesis' explicit phase (known-good inputs, then the
        schema's boundary cases). A boundary case that fails is recorded and the phase goes on,
        so every edge is tried and reported, and random generation still follows; any other
        failing case stops the property and is shrunk. ``generate=False``: the explicit phase
        alone."""
        answered: list[Arguments] = []
        phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink]

        @settings(
            max_examples=max(1, examples),
            database=self._database(tool.name, family),
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=phases if generate else [Phase.explicit],
            report_multiple_bugs=False,
            print_blob=False,
            verbosity=Verbosity.quiet,
        )
        def holds(case: Case) -> None:
            try:
                out = self.run_case(tool, case, stats)
            except CaseFailed as failed:
                if not case.edge:
                    raise
                self._record(tool, failed, family, f"{case.edge}: ", stats)
                return
            if case.kind == "valid" and out is not None and not out.is_error:
                answered.append(case.args)

        for case in reversed(known or []):  # hypothesis runs the last-applied example first
            holds = example(case)(holds)
        holds = seed(self.seed)(given(cases)(holds))

        try:
            with warnings.catch_warnings():  # the repr of a 1 MB case, noted for the report
                warnings.simplefilter("ignore", HypothesisWarning)
                holds()
        except Unsatisfiable:
            pass  # the schema gives this family nothing to break
        except Exception as exc:
            failed = _case_failed(exc)
            if failed is None:
                raise
            self._record(tool, failed, family, "", stats)
        return answered

    def _record(
        self, tool: ToolInfo, failed: CaseFailed, family: str, prefix: str, stats: ToolStats
    ) -> None:
        """One failing case's findings (after a tools/list health check; a server that died
        or stopped answering by then is restarted, counted against the caps)."""
        stats.failures += 1
        serving, how = self._answers_list()
        problems = [*failed.problems, *([("still_serving", serving)] if serving else [])]
        for name, message in problems:
            self._add(
                finding_for(
                    name,
                    tool.name,
                    failed.case.kind,
                    failed.case.family,
                    prefix + message,
                    failed.case.short_args(),
                    self.seed,
                    self.reproduce(tool.name, EDGE_FAMILY if failed.case.edge else family),
                    call=failed.call,
                )
            )
        if how is not None:
            self._needs_restart = True
            self._count_restart(tool.name)

    def edge_cases(
        self, name: str, schema: JsonSchema, stats: ToolStats, known: list[Case]
    ) -> list[Case]:
        """The schema's boundary cases, each a change to the first known-good input (when
        there is one); what was exercised and what was dropped is kept for the report."""
        made = schema_edges(schema, known[0].args if known else None)
        stats.edge_summary = made.summary()
        stats.edges_dropped = made.dropped
        return [Case(name, "valid", EDGE_FAMILY, e.args, edge=e.label) for e in made.edges]

    def fuzz_tool(self, tool: ToolInfo, stats: ToolStats | None = None) -> ToolStats:
        """Invalid families first, then the valid calls, then one answered call once more.
        A cap hit on this tool (StopTool) ends it early, its parts not run listed in
        ``stats.not_run``; a StopRun leaves them listed too and goes up to the run."""
        stats = stats or ToolStats(tool.name)
        self._stats[tool.name] = stats
        schema: JsonSchema = tool.input_schema or {"type": "object"}
        mutations = Mutations(schema)
        self._validity[tool.name] = mutations
        wanted = set(self.config.families or [])
        families = [f for f in mutations.families() if not wanted or f in wanted]
        if not self.config.invalid:
            families = []
        generate = bool(self.config.valid) and (not wanted or VALID_FAMILY in wanted)
        edges_only = EDGE_FAMILY in wanted and not generate
        valid_part = "valid cases" if generate else EDGE_FAMILY
        stats.not_run = [*families, *([valid_part] if generate or edges_only else []), REPLAY]
        try:
            self.ensure_serving()
            answered = self._run_parts(tool, schema, mutations, families, stats, generate)
            if valid_part in stats.not_run:
                stats.not_run.remove(valid_part)
            if answered:  # the server still answers a normal call after all of it
                self._replay(tool, answered[0], stats)
            stats.not_run.remove(REPLAY)
        except StopTool as stop:
            stats.stopped = stop.reason
            self.notes.append(f"{tool.name}: {stop.reason}")
        except StopRun as stop:
            stats.stopped = stop.reason
            raise
        return stats

    def _run_parts(
        self,
        tool: ToolInfo,
        schema: JsonSchema,
        mutations: Mutations,
        families: list[str],
        stats: ToolStats,
        generate: bool,
    ) -> list[Arguments]:
        """The invalid families, then the valid cases; the arguments of the answered ones."""
        wanted = set(self.config.families or [])
        if families:
            valid_args = arguments_from(schema)  # canonicalising a schema is slow: once per tool
            each = math.ceil(self.config.invalid / len(mutations.families()))
            for family in families:
                self.check_time()
                self.check_property(
                    tool,
                    family,
                    invalid_cases(tool.name, mutations, family, valid_args),
                    each,
                    stats,
                )
                stats.not_run.remove(family)
        edges_only = EDGE_FAMILY in wanted and not generate
        if not (generate or edges_only):
            return []
        self.check_time()
        known = [
            Case(tool.name, "valid", KNOWN_FAMILY, dict(args))
            for args in self.config.examples.get(tool.name, [])
            if mutations.is_valid(args)
        ]
        edges = self.edge_cases(tool.name, schema, stats, known) if self.config.edges else []
        return self.check_property(
            tool,
            VALID_FAMILY,
            valid_cases(tool.name, schema, mutations),
            max(self.config.valid, 1),
            stats,
            [*([] if edges_only else known), *edges],
            generate=not edges_only,
        )

    def _replay(self, tool: ToolInfo, args: Arguments, stats: ToolStats) -> None:
        replay = Case(tool.name, "valid", REPLAY, args)
        try:
            self.run_case(tool, replay, stats)
        except CaseFailed as failed:
            stats.failures += 1
            for name, message in failed.problems:
                self._add(
                    finding_for(
                        name,
                        tool.name,
                        "valid",
                        replay.family,
                        message,
                        replay.short_args(),
                        call=failed.call,
                    )
                )


def _case_failed(exc: BaseException) -> CaseFailed | None:
    """The CaseFailed inside what hypothesis raised (itself, or within a flaky-failure group)."""
    if isinstance(exc, CaseFailed):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _case_failed(inner)
        if found is not None:
            return found
    return None
