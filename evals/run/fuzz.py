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

``python -m evals fuzz --target inprocess --profile large`` prints a per-tool table (examples
tried, failures, slowest case), writes ``fuzz.json`` (the run log) and exits 1 on any failing
finding, 3 when it called nothing (fuzz_cli.py). The records are in fuzz_models.py, the case
strategies in fuzz_strategies.py; this module is the engine.
"""

from __future__ import annotations

import asyncio
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
from evals.run.fuzz_checks import Context, classify, ending, run_checks
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
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.schema_edges import schema_edges
from evals.run.targets import Target, TargetError
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


class _LoopThread:
    """An event loop in a thread, so hypothesis (synchronous) can drive an async target."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class Fuzzer:
    """Runs every tool's properties against one connected target.

    A property is one tool and one case family; hypothesis draws each case and runs it on the
    target's event loop inside the property, one at a time, so a failing case is shrunk (each
    smaller case is called again) and saved in the example database. Every Nth passing case,
    and every property that failed, is followed by a `tools/list` health check."""

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

    def reproduce(self, tool: str, family: str) -> str:
        kind = "valid" if family in (VALID_FAMILY, EDGE_FAMILY) else "invalid"
        counts = (
            f"--valid {self.config.valid} --invalid 0"
            if kind == "valid"
            else (f"--valid 0 --invalid {self.config.invalid}")
        )
        return (
            f"python -m evals fuzz --target {shlex.quote(self.target.spec)} "
            f"--tool {tool} --family {family} --seed {self.seed} {counts}"
        )

    def run_case(self, tool: ToolInfo, case: Case, stats: ToolStats) -> CallOutcome | None:
        """Call the target with one case; raises CaseFailed naming every check it failed."""
        limit = self.config.call_timeout_s
        out: CallOutcome | None = None
        error: BaseException | None = None
        try:
            out = self.runner.run(
                self.target.call_tool(tool.name, case.args, timeout_s=limit), limit + 10
            )
        except (TargetError, TimeoutError) as exc:
            error = exc
        # The periodic tools/list follows random cases only: a boundary case that breaks the
        # server fails the next one (answers), and one that fails is health-checked anyway.
        if not case.edge:
            self._cases_run += 1
        stats.record(case, out.latency_ms if out is not None else limit * 1000)
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
        broken = run_checks(call, context, house_rules=self.config.house_rules)
        problems = [(r.name, message) for r, message in broken]
        # A failing case is checked once its property has shrunk it (`check_property`), not
        # at every shrinking step: the step is already a failure, and the call count doubles.
        due = not case.edge and self._cases_run % max(1, self.config.health_every) == 0
        if not problems and due:
            problem = self._still_serving()
            if problem:
                problems.append(("still_serving", problem))
        if case.edge:
            stats.edges.append(EdgeOutcome(case.edge, ending(call), [name for name, _ in problems]))
        if problems:
            raise CaseFailed(case, problems, call.kind)
        return out

    def _still_serving(self) -> str | None:
        try:
            self.runner.run(self.target.list_tools(), self.config.call_timeout_s + 10)
            return None
        except Exception as exc:
            return f"tools/list failed after this case: {exc}"[:300]

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
        """One failing case's findings (after a tools/list health check)."""
        stats.failures += 1
        serving = self._still_serving()
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

    def fuzz_tool(self, tool: ToolInfo) -> ToolStats:
        """Invalid families first, then the valid calls, then one answered call once more."""
        stats = ToolStats(tool.name)
        schema = tool.input_schema or {"type": "object"}
        mutations = Mutations(schema)
        wanted = set(self.config.families or [])
        families = [f for f in mutations.families() if not wanted or f in wanted]
        if self.config.invalid and families:
            valid_args = from_schema(schema)  # canonicalising a schema is slow: once per tool
            each = math.ceil(self.config.invalid / len(mutations.families()))
            for family in families:
                self.check_property(
                    tool,
                    family,
                    invalid_cases(tool.name, mutations, family, valid_args),
                    each,
                    stats,
                )
        answered: list[dict[str, Any]] = []
        generate = bool(self.config.valid) and (not wanted or VALID_FAMILY in wanted)
        edges_only = EDGE_FAMILY in wanted and not generate
        if generate or edges_only:
            known = [
                Case(tool.name, "valid", KNOWN_FAMILY, dict(args))
                for args in self.config.examples.get(tool.name, [])
                if mutations.is_valid(args)
            ]
            edges = self.edge_cases(tool.name, schema, stats, known) if self.config.edges else []
            answered = self.check_property(
                tool,
                VALID_FAMILY,
                valid_cases(tool.name, schema, mutations),
                max(self.config.valid, 1),
                stats,
                [*([] if edges_only else known), *edges],
                generate=not edges_only,
            )
        if answered:  # the server still answers a normal call after all of it
            replay = Case(tool.name, "valid", "replay_after_fuzzing", answered[0])
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
        return stats


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
    `index_dir` is given (before and after the whole run)."""
    started = time.perf_counter()
    before = database_checksums(index_dir) if index_dir else None
    runner = _LoopThread()
    skipped: list[Skipped] = []
    with planted(config.canary):
        runner.run(target.__aenter__(), timeout=300)
    try:
        try:
            tools = runner.run(target.list_tools(), timeout=60)
            fuzzer = Fuzzer(target, runner, config, events)
            all_stats = []
            for tool in tools:
                if config.tools and tool.name not in config.tools:
                    continue
                reason = not_callable(tool, allow_writes=config.allow_writes)
                if reason:
                    skipped.append(Skipped(tool.name, reason))
                    if events is not None:
                        events.skip("fuzz", skipped[-1])
                    continue
                stats = fuzzer.fuzz_tool(tool)
                all_stats.append(stats)
                if progress:
                    progress(stats, [f for f in fuzzer.failures if f.tool == tool.name])
        finally:
            runner.run(target.__aexit__(None, None, None), timeout=60)
    finally:
        runner.close()
    report = FuzzReport(
        target.spec,
        profile,
        all_stats,
        fuzzer.failures,
        time.perf_counter() - started,
        seed=fuzzer.seed,
        house_rules=config.house_rules,
        skipped=skipped,
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
