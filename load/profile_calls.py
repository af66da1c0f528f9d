"""Where a call's CPU goes: distinct calls against golden ones repeated, per tool and stage.

`ocm profile-calls --mix build/mix/distinct-30000-0.json --calls 100` builds the
reference server in this process (warmed as at start-up), then, per tool:

1. golden calls as the bench makes them (the golden mix's picks, free text varied), first
   `GOLDEN_WARM_ROUNDS` x `--calls` of them untimed (the query-embedding cache then holds what
   a bench run's would), then `--calls` timed: the CPU the bench sees;
2. `--calls` distinct calls from the distinct-query mix (the first of each tool's list), timed;
3. the next `--calls` distinct calls under cProfile (top functions by cumulative time).

Calls go through FastMCP's in-memory client as raw MCP results (the MCP layer included; the
client's re-validation and typed parsing of the result, client costs, left out). Stages are timed by `load.stage_clock`, which runs the
paths in the calling thread: CPU per call is what the server spends, not its latency. The same
run times the reference workload (`load/calibrate.py`: one query embedding) before and after,
in CPU ms, so every figure is also a ratio that holds across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

# reference_server first: it limits BLAS to one thread before numpy loads, as in the server
# (numpy loaded first, by load.calibrate, kept OpenBLAS's threads: 0.34 -> 7.1 CPU ms for one
# exact search's product on a busy 2-core machine).
import reference_server  # noqa: F401
from load.calibrate import QUERY
from load.profile_calls_report import (
    FunctionRow,
    ProfileReport,
    SortBy,
    ToolFigures,
    ToolRow,
    tables,
    to_json,
)
from load.stage_clock import STAGES, StageClock, instrument, instrument_embedder
from load.taskmix import FREE_TEXT_ARGS, TaskMix
from ocm_common.client_session import record_results_as_they_come
from ocm_common.json_types import Arguments

NATURAL_LANGUAGE_ARGS = (*FREE_TEXT_ARGS, "specific_item", "condition")
GOLDEN_WARM_ROUNDS = 4  # golden calls made before timing, per timed call: the bench's cache state

REFERENCE_ROUNDS = 40
TOP_FUNCTIONS = 15
# Call-plumbing frames that only pass time through (shown nowhere in the top lists).
PLUMBING = ("asyncio", "stage_clock", "anyio", "contextlib", "profile_calls", "<string>")


def reference_cpu_ms(rounds: int = REFERENCE_ROUNDS) -> float:
    """Median CPU ms of the reference workload: one query embedding with the local model."""
    from reference_server.config import Settings
    from reference_server.embedding import LocalMiniLM

    model = LocalMiniLM.from_settings(Settings.from_env(), threads=1)
    model.embed([QUERY])
    times = []
    for _ in range(rounds):
        start = time.process_time()
        model.embed([QUERY])
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def has_free_text(args: Arguments) -> bool:
    """Whether a call carries words in a sentence (a question, an item, a condition), not only
    names, ids, codes, strengths and options."""
    return any(isinstance(args.get(k), str) for k in NATURAL_LANGUAGE_ARGS)


class Caller(Protocol):
    """What the in-process steps call: one tool call, answered without a tool error or not."""

    def call(self, tool: str, args: Arguments) -> bool: ...


class InProcessServer:
    """The reference server, instrumented, behind FastMCP's in-memory client."""

    def __init__(self, clock: StageClock, **overrides: Any):
        from fastmcp import Client

        from reference_server.config import Settings
        from reference_server.server import build_server

        generous = {"sql_timeout_ms": 60_000, "vector_timeout_ms": 60_000}
        settings = Settings.from_env(**{"tool_timeout_ms": 120_000, **generous, **overrides})
        self.clock = clock
        self.server = build_server(settings)
        self.server.runtime.warm_up()
        instrument_embedder(clock, self.server.runtime)
        self.loop = asyncio.new_event_loop()
        self.client: Any = Client(self.server)
        self.loop.run_until_complete(self.client.__aenter__())
        record_results_as_they_come(self.client)

    def call(self, tool: str, args: Arguments) -> bool:
        """One call; the raw MCP result (`Client.call_tool` would build a Python type from the
        output schema on every call, 5-11 ms of client CPU that no server spends)."""
        result = self.loop.run_until_complete(self.client.call_tool_mcp(tool, args))
        return not result.is_error

    def close(self) -> None:
        self.loop.run_until_complete(self.client.__aexit__(None, None, None))
        self.loop.close()


def bare_tool_cpu_ms(n: int) -> float:
    """Mean CPU ms of a bare FastMCP tool that returns a constant, through the same in-memory
    client: the floor of the MCP layer, which no tool can go below."""
    from fastmcp import Client, FastMCP

    bare = FastMCP("floor")

    @bare.tool
    def constant() -> dict[str, bool]:
        return {"ok": True}

    async def calls() -> list[float]:
        async with Client(bare) as client:
            record_results_as_they_come(client)
            await client.call_tool_mcp("constant", {})
            out = []
            for _ in range(n):
                start = time.process_time()
                await client.call_tool_mcp("constant", {})
                out.append((time.process_time() - start) * 1000)
            return out

    return statistics.fmean(asyncio.run(calls()))


def measure(server: InProcessServer, tool: str, kind: str, calls: list[Arguments]) -> ToolFigures:
    """Each call's CPU ms and the stage split (the MCP layer is what no stage claimed)."""
    clock = server.clock
    clock.reset()
    figures = ToolFigures(tool, kind, calls=len(calls))
    for args in calls:
        before_model = clock.model_texts
        start = time.process_time()
        ok = server.call(tool, args)
        figures.cpu_ms.append((time.process_time() - start) * 1000)
        figures.errors += not ok
        if not has_free_text(args):
            figures.no_text_calls += 1
            figures.no_text_embedded += clock.model_texts > before_model
    total_s = sum(figures.cpu_ms) / 1000
    claimed = sum(clock.seconds.values())
    per_call = {s: clock.seconds.get(s, 0.0) for s in STAGES}
    per_call["MCP layer"] = max(0.0, total_s - claimed)
    figures.stage_ms = {s: round(v * 1000 / max(1, len(calls)), 3) for s, v in per_call.items()}
    figures.embedded_per_call = round(clock.model_texts / max(1, len(calls)), 3)
    if clock.looked_up:
        figures.cache_hit_rate = round(1 - clock.model_texts / clock.looked_up, 4)
    return figures


def profile(server: InProcessServer, tool: str, calls: list[Arguments]) -> pstats.Stats:
    profiler = cProfile.Profile(time.process_time)  # CPU, as every other figure here
    profiler.enable()
    for args in calls:
        server.call(tool, args)
    profiler.disable()
    return pstats.Stats(profiler)


def top_functions(
    stats: pstats.Stats, calls: int, n: int = TOP_FUNCTIONS, by: SortBy = "cum_ms"
) -> list[FunctionRow]:
    """The functions with the most cumulative (or own) time per call, plumbing left out."""
    rows: list[FunctionRow] = []
    for (path, line, name), (_, ncalls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{_short(path)}:{line}({name})"
        if any(p in path for p in PLUMBING) or path == "~":
            continue
        rows.append(
            {
                "function": where,
                "calls_per_call": round(ncalls / max(1, calls), 2),
                "cum_ms": round(cumtime * 1000 / max(1, calls), 3),
                "own_ms": round(tottime * 1000 / max(1, calls), 3),
            }
        )
    rows.sort(key=lambda r: -r[by])
    return rows[:n]


def _short(path: str) -> str:
    for marker in ("site-packages/", "/work/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return path


def golden_calls(mix: TaskMix, tool: str, n: int) -> list[Arguments]:
    return [mix.pick(tool).arguments for _ in range(n)]


@contextmanager
def instrumented_server(clock: StageClock) -> Iterator[InProcessServer]:
    with instrument(clock):
        server = InProcessServer(clock)
        try:
            yield server
        finally:
            server.close()


def run(mix_path: Path, n: int, tools: list[str] | None, seed: int) -> ProfileReport:
    reference_before = reference_cpu_ms()
    distinct = TaskMix.from_examples(mix_path)
    golden = TaskMix.from_golden(seed=seed)
    chosen = tools or sorted(set(distinct.tools) | set(golden.tools))
    rows: dict[str, ToolRow] = {}
    clock = StageClock()
    with instrumented_server(clock) as server:
        for tool in chosen:
            row: ToolRow = {}
            if tool in golden.tools:
                for args in golden_calls(golden, tool, GOLDEN_WARM_ROUNDS * n):
                    server.call(tool, args)
                row["golden"] = measure(server, tool, "golden", golden_calls(golden, tool, n))
            if tool in distinct.tools:
                pool = [c.arguments for c in distinct.calls[tool]]
                row["distinct"] = measure(server, tool, "distinct", pool[:n])
                stats = profile(server, tool, pool[n : 2 * n])
                row["top"] = top_functions(stats, len(pool[n : 2 * n]))
                row["top_own"] = top_functions(stats, len(pool[n : 2 * n]), by="own_ms")
            rows[tool] = row
            print(f"  {tool}: done", file=sys.stderr)
        cache = server.server.runtime.cache_stats()
    bare_ms = round(bare_tool_cpu_ms(n), 3)
    reference_after = reference_cpu_ms()
    return ProfileReport(
        mix=str(mix_path),
        calls_per_tool=n,
        tools=rows,
        bare_tool_cpu_ms=bare_ms,
        reference_cpu_ms={
            "before": round(reference_before, 3),
            "after": round(reference_after, 3),
            "mean": round((reference_before + reference_after) / 2, 3),
        },
        embed_cache=cache,
    )


def build_parser(prog: str = "ocm profile-calls") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--mix", type=Path, required=True, help="the distinct-query mix file")
    parser.add_argument("--calls", type=int, default=100, help="calls per tool and kind")
    parser.add_argument("--tool", action="append", help="only this tool (repeatable)")
    parser.add_argument("--seed", type=int, default=0, help="the golden mix's seed")
    parser.add_argument("--out", type=Path, default=Path("build/profile"))
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Profile the calls, write profile.json and profile.md, print the tables."""
    report = run(args.mix, args.calls, args.tool, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "profile.json").write_text(json.dumps(to_json(report), indent=2) + "\n")
    text = tables(report)
    (args.out / "profile.md").write_text(text)
    print(text)
    return 0
