"""Property-based contract tests of any MCP backend, from the schemas it publishes.

Strategies are derived from each tool's published ``inputSchema`` (hypothesis-jsonschema for
valid arguments; invalid ones are valid arguments with one or two schema-driven mutations,
each confirmed invalid by a JSON Schema validator), so nothing is written twice by hand and any
backend a :mod:`evals.targets` spec names can be tested (in-process, stdio, HTTP).

Every case runs a fixed list of named checks (schemathesis' shape: a failure names the check,
the tool, the case and the arguments that reproduce it):

- valid arguments: no protocol error, not refused as invalid input (a not-found for a generated
  id is fine), no internal error, ``structuredContent`` valid against ``outputSchema``, the text
  content mirrors it;
- invalid arguments (wrong types, missing required fields, out-of-range numbers, unknown enum
  values, extra fields, blank and whitespace-only text, 1 MB strings, control characters, too
  many items, two problems at once): ``isError`` with every broken field named, the allowed
  values where the schema has some, no stack trace, within the time limit;
- hostile text (right-to-left text, emoji, SQL and FTS5 syntax, path traversal) put into string
  fields: judged as valid or invalid by the schema, like any other case;
- after every case (every Nth in the large profile, and after every failure) the backend still
  answers ``tools/list``; after each tool its first answered valid call is repeated and must
  still answer.

Each (tool, family) is one hypothesis property: the cases are generated and run inside
``@given``, so a failing case is shrunk to a minimal one, saved in the example database
(``.hypothesis/fuzz``, replayed first by the next run) and reported with the run's seed and a
one-line command that reproduces it. A tool without arguments is called with ``{}``.

The run survives the server (fuzz_survival.py): a call after which the server died or stopped
answering is recorded once per tool and case kind as an ``answers`` finding (the exit status and
the last stderr line in it), the server restarted (a fresh process, a new session; capped per
tool and per run), and the case shrunk by the engine against a fresh process per attempt
(bounded), never by hypothesis against the dead one; a call that alone hangs is
``answers_in_time`` for a schema-valid input. A reply that is not UTF-8 JSON-RPC is
``readable_reply``. The run is bounded by ``FuzzConfig.deadline_s``: at the deadline nothing
new starts, a call in flight gets a short grace, and the report is still written, cut short,
naming the tools and parts not reached (SIGINT/SIGTERM the same, as interrupted).

``python -m evals fuzz --target inprocess --profile large`` prints a per-tool table (examples
tried, failures, slowest case), writes ``fuzz.json`` (the run log) and exits 1 on any failing
finding, 3 when it called nothing (fuzz_cli.py). The records are in fuzz_models.py, the case
strategies in fuzz_strategies.py; this module is the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import random
import shlex
import threading
import time
import warnings
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)
from hypothesis.errors import HypothesisWarning, Unsatisfiable
from hypothesis_jsonschema import from_schema

from evals.conformance.canary import planted
from evals.run.fuzz_checks import Classified, Context, classify, ending, run_checks
from evals.run.fuzz_models import (
    EDGE_FAMILY,
    KNOWN_FAMILY,
    PROFILES,
    VALID_FAMILY,
    Case,
    CaseFailed,
    EdgeOutcome,
    FuzzConfig,
    FuzzReport,
    ToolStats,
    finding_for,
)
from evals.run.fuzz_strategies import Mutations, invalid_cases, valid_cases
from evals.run.fuzz_survival import (
    NEEDS_RESTART,
    CutShort,
    FailureHow,
    StopRun,
    StopTool,
    rule_for,
    smaller_args,
)
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.schema_edges import schema_edges
from evals.run.targets import UNREADABLE_REPLY, Target, TargetError, UnreadableReply
from ocm_common.findings import EventStream, Finding, Skipped
from ocm_common.tool_safety import write_risk

__all__ = [
    "PROFILES",
    "FuzzConfig",
    "FuzzReport",
    "Fuzzer",
    "database_checksums",
    "run_fuzz",
]

T = TypeVar("T")
CONNECT_LIMIT_S = 300.0  # start and initialize (a restart too)
CLOSE_LIMIT_S = 20.0  # a session's close: the stdio transport's own waits are bounded below it
REPLAY = "replay_after_fuzzing"


class _LoopThread:
    """An event loop in a thread, so hypothesis (synchronous) can drive an async target."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()  # timed out or interrupted: the coroutine is cancelled on its loop
            raise

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class Fuzzer:
    """Runs every tool's properties against one connected target.

    A property is one tool and one case family; hypothesis draws each case and runs it on the
    target's event loop inside the property, one at a time, so a failing case is shrunk (each
    smaller case is called again) and saved in the example database. Every Nth passing case,
    and every property that failed, is followed by a `tools/list` health check. A case after
    which the server died, stopped answering or hung is the engine's to record, restart and
    shrink (:meth:`_server_failure`); hypothesis sees it pass and goes on."""

    def __init__(
        self,
        target: Target,
        runner: _LoopThread,
        config: FuzzConfig,
        events: EventStream | None = None,
    ):
        self.target = target
        self.runner = runner
        self.config = config
        self.events = events or EventStream()
        self.seed = config.seed if config.seed is not None else random.randrange(2**32)
        self.failures: list[Finding] = []
        self._cases_run = 0
        self.deadline = time.monotonic() + config.deadline_s if config.deadline_s else None
        self.restarts = 0  # counted: the server died or stopped answering
        self.notes: list[str] = []
        self._restarts_by_tool: dict[str, int] = {}
        self._recorded: set[tuple[str, str, str]] = set()  # (tool, how, case kind)
        self._stats: dict[str, ToolStats] = {}
        self._validity: dict[str, Mutations] = {}
        self._previous: tuple[ToolInfo, Case] | None = None
        self._needs_restart = False
        self._unread_seen = 0

    def reproduce(self, tool: str, family: str) -> str:
        kind = "valid" if family in (VALID_FAMILY, EDGE_FAMILY, KNOWN_FAMILY, REPLAY) else "invalid"
        counts = (
            f"--valid {self.config.valid} --invalid 0"
            if kind == "valid"
            else (f"--valid 0 --invalid {self.config.invalid}")
        )
        return (
            f"python -m evals fuzz --target {shlex.quote(self.target.spec)} "
            f"--tool {tool} --family {family} --seed {self.seed} {counts}"
        )

    # ------------------------------------------------------------------ time

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def check_time(self) -> None:
        """Start nothing new once the deadline has passed."""
        if self.past_deadline():
            raise StopRun(f"the {self.config.deadline_s:g} s deadline (--deadline) was reached")

    def limit(self, limit: float) -> float:
        """``limit`` cut to the time left before the deadline plus the grace."""
        return self._limit(limit)[0]

    def _limit(self, limit: float) -> tuple[float, bool]:
        """A call's time limit, cut to the deadline plus the grace; whether it was cut."""
        if self.deadline is None:
            return limit, False
        left = self.deadline - time.monotonic() + self.config.grace_s
        return (max(0.5, left), True) if left < limit else (limit, False)

    # ------------------------------------------------------------------ calls

    def _call(
        self, tool: str, args: dict[str, Any]
    ) -> tuple[CallOutcome | None, Exception | None, float]:
        """One tools/call within its limit: (outcome, error, seconds taken). A call the
        deadline cut short ends the run instead of counting as a hang."""
        self.check_time()
        limit, cut = self._limit(self.config.call_timeout_s)
        out: CallOutcome | None = None
        error: Exception | None = None
        started = time.monotonic()
        try:
            out = self.runner.run(self.target.call_tool(tool, args, timeout_s=limit), limit + 10)
        except (TargetError, TimeoutError) as exc:
            error = exc
        if error is not None and cut and self.past_deadline():
            self.check_time()
        return out, error, time.monotonic() - started

    def _process(self) -> Any:
        """The stdio server process (pid, exit status, stderr), None for other targets."""
        return getattr(self.target, "process", None)

    def _answers_list(self) -> tuple[str | None, FailureHow | None]:
        """tools/list now: (None, None) when answered; else (the problem, how the server is:
        died, stopped answering, or None when it answered with an error)."""
        limit, cut = self._limit(min(self.config.probe_timeout_s, self.config.call_timeout_s))
        try:
            self.runner.run(asyncio.wait_for(self.target.list_tools(), limit), limit + 10)
            return None, None
        except Exception as exc:
            if cut and self.past_deadline():
                self.check_time()
            problem = f"tools/list failed after this case: {exc}"[:300]
            listed = classify(None, exc)
            if listed.kind != "no-answer":  # answered, with an error
                return problem, None
            process = self._process()
            exited = process is not None and process.exited
            return problem, "stopped answering" if listed.timed_out and not exited else "died"

    def _how_failed(self, call: Classified) -> FailureHow | None:
        """How a call that got no answer left the server (fuzz_survival.FailureHow), None
        when it answered (a result or an error)."""
        if call.kind != "no-answer":
            return None
        process = self._process()
        if not call.timed_out or (process is not None and process.exited):
            return "died"
        _, how = self._answers_list()
        return how or "hung"

    def _ended(self) -> str:
        """How the server process ended, with its last stderr line (read before a restart)."""
        process = self._process()
        if process is None:
            return ""
        if not process.exited:
            self.runner.run(process.wait_exit(0.5), 5)
        tail = process.stderr_tail(1)
        last = f"; last stderr line: {tail[-1][:200]!r}" if tail else ""
        return f"the server process {process.ended_text()}{last}"

    # ------------------------------------------------------------------ restarts

    def _reconnect(self) -> None:
        """A fresh process and a new session (for other targets: a new session)."""
        self.check_time()
        with contextlib.suppress(Exception):  # a session that will not close is left behind
            self.runner.run(self.target.__aexit__(None, None, None), CLOSE_LIMIT_S)
        limit, _ = self._limit(CONNECT_LIMIT_S)
        try:
            with planted(self.config.canary):
                self.runner.run(self.target.__aenter__(), limit)
        except (TargetError, TimeoutError) as exc:
            self.check_time()
            why = str(exc) or f"{type(exc).__name__} after {limit:g} s"
            raise StopRun(f"the server could not be started again: {why}"[:2000]) from exc
        self._needs_restart = False
        process = self._process()
        self._unread_seen = len(process.unreadable) if process is not None else 0

    def _count_restart(self, tool: str) -> None:
        """One more restart after a failure on ``tool``; the caps stop the tool or the run."""
        self.restarts += 1
        self._restarts_by_tool[tool] = self._restarts_by_tool.get(tool, 0) + 1
        self._stats[tool].restarts += 1
        if self.restarts > self.config.restarts_per_run:
            raise StopRun(
                f"restart cap: the server died or stopped answering {self.restarts} times in "
                f"this run (cap {self.config.restarts_per_run}, --restarts-per-run)"
            )
        if self._restarts_by_tool[tool] > self.config.restarts_per_tool:
            raise StopTool(
                f"restart cap: the server died or stopped answering {self._restarts_by_tool[tool]} "
                f"times on {tool} (cap {self.config.restarts_per_tool}, --restarts-per-tool); "
                "its remaining cases were not run"
            )

    def ensure_serving(self) -> None:
        """Before a call: restart a server that needs it, and blame a death noticed now on the
        case before (it answered, then the process ended)."""
        process = self._process()
        if not self._needs_restart and process is not None and process.exited:
            if self._previous is not None and self._previous[0].name in self._stats:
                tool, case = self._previous
                self._previous = None
                self._server_failure(tool, case, "died", after_reply=True)
            else:
                self._needs_restart = True
        if self._needs_restart:
            self._reconnect()

    def _server_failure(
        self, tool: ToolInfo, case: Case, how: FailureHow, *, after_reply: bool = False
    ) -> None:
        """The case killed, wedged or hung the server: a restart where needed (counted), one
        finding per tool, failure and case kind, the case shrunk first (a fresh process per
        attempt, bounded)."""
        stats = self._stats[tool.name]
        ended = self._ended() if how in NEEDS_RESTART else ""
        if how in NEEDS_RESTART:
            self._needs_restart = True
        else:
            stats.hangs += 1
        key = (tool.name, how, case.kind)
        stop: BaseException | None = None
        if key not in self._recorded:
            self._recorded.add(key)
            try:
                shrunk, note = self._shrink(tool, case, how, after_reply)
            except (StopRun, KeyboardInterrupt) as exc:  # recorded unshrunk, then the run stops
                shrunk, note, stop = case, f"not shrunk: {exc or type(exc).__name__}", exc
            stats.failures += 1
            self._add(
                finding_for(
                    rule_for(how, case.kind),
                    tool.name,
                    case.kind,
                    case.family,
                    self._failure_text(how, case, ended, note, after_reply),
                    shrunk.short_args(),
                    self.seed,
                    self.reproduce(tool.name, _property_family(case)),
                    call="answered" if after_reply else "no-answer",
                )
            )
        if stop is not None:
            raise stop
        if how in NEEDS_RESTART:
            self._count_restart(tool.name)
        elif stats.hangs > self.config.restarts_per_tool:
            raise StopTool(
                f"hang cap: {stats.hangs} calls to {tool.name} timed out (cap "
                f"{self.config.restarts_per_tool}, --restarts-per-tool); its remaining cases "
                "were not run"
            )
        if self._needs_restart:
            self._reconnect()

    def _failure_text(
        self, how: FailureHow, case: Case, ended: str, note: str, after_reply: bool
    ) -> str:
        limit = f"{self.config.call_timeout_s:g} s"
        valid = " to an input the schema allows" if case.kind == "valid" else ""
        what = {
            "died": (
                f"the server ended after answering this call{valid}"
                if after_reply
                else f"no response{valid}: the server ended on this call"
            ),
            "stopped answering": (
                f"the server answered this call{valid}, then stopped answering (no answer to "
                "tools/list)"
                if after_reply
                else f"no response within {limit}{valid}, and no answer to tools/list after it: "
                "the server stopped answering"
            ),
            "hung": f"no response within {limit}{valid} (the server still answers tools/list)",
        }[how]
        restarted = "; restarted, the run went on" if how in NEEDS_RESTART else ""
        parts = [f"{case.edge}: {what}" if case.edge else what, ended, note]
        return "; ".join(p for p in parts if p) + restarted

    def _shrink(
        self, tool: ToolInfo, case: Case, how: FailureHow, after_reply: bool
    ) -> tuple[Case, str]:
        """The smallest input found that fails the same way, each attempt against a fresh
        process (a restart the caps do not count), at most `shrink_attempts` calls (a quarter
        of them for a hang, each of which costs the whole time limit)."""
        if self._process() is None and how in NEEDS_RESTART:
            return case, "not shrunk (only a stdio server is started again for each attempt)"
        budget = (
            self.config.shrink_attempts
            if how in NEEDS_RESTART
            else max(1, self.config.shrink_attempts // 4)
        )
        if budget < 1 or self.past_deadline():
            return case, ""
        attempts = 1
        if not self._reproduces(tool, case, how, after_reply):
            self.notes.append(
                f"{tool.name}: {how} on {case.short_args(120)}, not alone in a fresh process"
            )
            return (
                case,
                "it did not happen again alone in a fresh process (it may need the calls before it)",
            )
        best = case
        required = set((tool.input_schema or {}).get("required") or [])
        validity = self._validity.get(tool.name)
        progress = True
        while progress and attempts < budget and not self.past_deadline():
            progress = False
            for args in smaller_args(best.args, required):
                if attempts >= budget or self.past_deadline():
                    break
                if validity is not None and validity.is_valid(args) != (case.kind == "valid"):
                    continue
                attempts += 1
                candidate = dataclasses.replace(best, args=args, edge="")
                if self._reproduces(tool, candidate, how, after_reply):
                    best, progress = candidate, True
                    break
        shrunk = f", shrunk in {attempts - 1} more" if attempts > 1 else ""
        return (
            best,
            f"it happened again alone in a fresh process (1 attempt{shrunk}, each in a fresh process)",
        )

    def _reproduces(self, tool: ToolInfo, case: Case, how: FailureHow, after_reply: bool) -> bool:
        """Whether the case fails the same way alone, in a fresh process."""
        if self._needs_restart or self._process() is not None:
            self._reconnect()
        out, error, _ = self._call(tool.name, case.args)
        self._stats[tool.name].shrink_calls += 1
        now = self._how_failed(classify(out, error))
        if now is None and after_reply:  # it answered before: does the server still serve?
            process = self._process()
            if process is not None:
                self.runner.run(process.wait_exit(0.5), 5)
            _, now = self._answers_list()
        if now in NEEDS_RESTART:
            self._needs_restart = True
        return now is not None and (now == how or (now in NEEDS_RESTART and how in NEEDS_RESTART))

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
    ) -> list[dict[str, Any]]:
        """Run one property; the arguments of the valid calls that answered (for the replay).

        ``known`` cases run first, in hypothesis' explicit phase (known-good inputs, then the
        schema's boundary cases). A boundary case that fails is recorded and the phase goes on,
        so every edge is tried and reported, and random generation still follows; any other
        failing case stops the property and is shrunk. ``generate=False``: the explicit phase
        alone."""
        answered: list[dict[str, Any]] = []
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

    def _add(self, finding: Finding) -> None:
        self.failures.append(finding)
        self.events.found("fuzz", finding)

    def edge_cases(
        self, name: str, schema: dict[str, Any], stats: ToolStats, known: list[Case]
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
        schema = tool.input_schema or {"type": "object"}
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
        schema: dict[str, Any],
        mutations: Mutations,
        families: list[str],
        stats: ToolStats,
        generate: bool,
    ) -> list[dict[str, Any]]:
        """The invalid families, then the valid cases; the arguments of the answered ones."""
        wanted = set(self.config.families or [])
        if families:
            valid_args = from_schema(schema)  # canonicalising a schema is slow: once per tool
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

    def _replay(self, tool: ToolInfo, args: dict[str, Any], stats: ToolStats) -> None:
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


def _property_family(case: Case) -> str:
    """The --family that runs this case again: its own for an invalid one, the boundary
    cases for an edge, the generated valid cases (known-good inputs run first) otherwise."""
    if case.edge:
        return EDGE_FAMILY
    return case.family if case.kind == "invalid" else VALID_FAMILY


def _case_failed(exc: BaseException) -> CaseFailed | None:
    """The CaseFailed inside what hypothesis raised (itself, or within a flaky-failure group)."""
    if isinstance(exc, CaseFailed):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _case_failed(inner)
        if found is not None:
            return found
    return None


def not_callable(tool: ToolInfo, *, allow_writes: bool) -> str | None:
    """Why the run must not call ``tool``: a tool that runs only as a task (not checked), or
    one that may change state (destructive, or not declared read-only) without --allow-writes."""
    if tool.execution.get("taskSupport") == "required":
        return "runs only as a task (taskSupport: required); task calls are not checked"
    if allow_writes:
        return None
    reason = write_risk(tool.annotations)
    return f"{reason}; pass --allow-writes to call it" if reason else None


def database_checksums(index_dir: Any) -> dict[str, str]:
    """sha256 of every file under the index directory (SQLite files and the Chroma store)."""
    import hashlib
    from pathlib import Path

    root = Path(index_dir)
    sums: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        sums[str(path.relative_to(root))] = digest.hexdigest()
    return sums


def _connect(fuzzer: Fuzzer) -> None:
    """The first session (the canary planted in the server's environment), within the
    deadline: a launch that fails is a harness error (TargetError, explained)."""
    limit = fuzzer.limit(CONNECT_LIMIT_S)
    try:
        with planted(fuzzer.config.canary):
            fuzzer.runner.run(fuzzer.target.__aenter__(), limit)
    except TimeoutError as exc:
        fuzzer.check_time()
        raise TargetError(
            f"cannot connect to target {fuzzer.target.spec!r}: no session within {limit:g} s"
        ) from exc


def run_fuzz(
    target: Target,
    config: FuzzConfig,
    *,
    profile: str = "custom",
    index_dir: Any = None,
    progress: Callable[[ToolStats, list[Finding]], None] | None = None,
    events: EventStream | None = None,
) -> FuzzReport:
    """Fuzz every tool the target lists (or `config.tools`); compare database checksums when
    `index_dir` is given (before and after the whole run). At the deadline, on a run cap or
    SIGINT the report comes back cut short (``report.cut_short``: why, the tools not reached,
    the parts of started tools not run)."""
    started = time.perf_counter()
    before = database_checksums(index_dir) if index_dir else None
    runner = _LoopThread()
    fuzzer = Fuzzer(target, runner, config, events)
    skipped: list[Skipped] = []
    all_stats: list[ToolStats] = []
    pending = ["(the tools were not listed)"]  # tools not started yet
    cut: CutShort | None = None
    connected = False
    try:
        try:
            _connect(fuzzer)
            connected = True
            limit = fuzzer.limit(60.0)
            tools = runner.run(asyncio.wait_for(target.list_tools(), limit), limit + 10)
            selected = []
            for tool in tools:
                if config.tools and tool.name not in config.tools:
                    continue
                reason = not_callable(tool, allow_writes=config.allow_writes)
                if reason:
                    skipped.append(Skipped(tool.name, reason))
                    if events is not None:
                        events.skip("fuzz", skipped[-1])
                    continue
                selected.append(tool)
            pending = [tool.name for tool in selected]
            for tool in selected:
                fuzzer.check_time()
                pending.remove(tool.name)
                stats = ToolStats(tool.name)
                all_stats.append(stats)
                fuzzer.fuzz_tool(tool, stats)
                if progress:
                    progress(stats, [f for f in fuzzer.failures if f.tool == tool.name])
        except StopRun as stop:
            cut = CutShort(stop.reason, stop.status, pending)
        except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM as the command line raises it
            cut = CutShort(f"interrupted ({exc or 'SIGINT'})", "interrupted", pending)
        finally:
            if connected:
                with contextlib.suppress(Exception):  # one that will not close is left behind
                    runner.run(target.__aexit__(None, None, None), timeout=CLOSE_LIMIT_S)
    finally:
        runner.close()
    if cut is not None:
        cut.unfinished = {t.tool: list(t.not_run) for t in all_stats if t.not_run}
    report = FuzzReport(
        target.spec,
        profile,
        all_stats,
        fuzzer.failures,
        time.perf_counter() - started,
        seed=fuzzer.seed,
        house_rules=config.house_rules,
        skipped=skipped,
        cut_short=cut,
        restarts=fuzzer.restarts,
        notes=fuzzer.notes,
    )
    if before is not None:
        after = database_checksums(index_dir)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        report.databases_unchanged = not changed
        report.database_note = (
            f"{len(before)} files checksummed, unchanged"
            if not changed
            else f"changed: {', '.join(changed[:10])}"
        )
    return report
