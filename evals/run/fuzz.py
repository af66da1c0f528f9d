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

``ocm fuzz --target inprocess --profile large`` prints a per-tool table (examples
tried, failures, slowest case), writes ``fuzz.json`` (the run log) and exits 1 on any failing
finding, 3 when it called nothing (fuzz_cli.py). The records are in fuzz_models.py, the case
strategies in fuzz_strategies.py, the properties in fuzz_engine.py (the session under them in
fuzz_session.py, surviving the server in fuzz_recovery.py); this module runs them over every tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from evals.conformance.canary import planted
from evals.run.fuzz_engine import Fuzzer
from evals.run.fuzz_models import PROFILES, FuzzConfig, FuzzReport, ToolStats
from evals.run.fuzz_session import CLOSE_LIMIT_S, CONNECT_LIMIT_S, LoopThread
from evals.run.fuzz_survival import CutShort, StopRun
from evals.run.outcome import ToolInfo
from evals.run.target_contract import Target, TargetError
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
    runner = LoopThread()
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
