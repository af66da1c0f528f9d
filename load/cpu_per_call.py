"""The bench's CPU per distinct call, as a function: per tool and kind, the process CPU of each
call of the distinct-query mix (`make distinct-mix`) through FastMCP's in-memory client, its
median and mean beside one query embedding timed in the same process (load/profile_calls.py's
reference workload), so the figure is tracked run after run as a ratio that holds across
machines.

Each call is the next of the tool's list, so none repeats an earlier one and the query-embedding
cache does not flatter the figure. A tool whose list holds calls with free text (a question) and
calls without (a DIN, a brand and strength, an id) is measured for each kind apart: only a
question runs the embedding model, and a mix of the two would hide either.
"""

from __future__ import annotations

import statistics
import time

from load.distinct_mix import TOOLS
from load.profile_calls import Caller, has_free_text
from load.taskmix import TaskMix
from ocm_common.bench_summary import DistinctCallCpu
from ocm_common.json_types import Arguments

KINDS = ("free_text", "no_free_text")
CALLS = 60


def calls_of_kind(mix: TaskMix, tool: str, kind: str, limit: int = CALLS) -> list[Arguments]:
    """The tool's distinct calls of one kind, in the mix's order, at most `limit`."""
    wanted = kind == "free_text"
    calls = mix.calls.get(tool, [])
    return [c.arguments for c in calls if has_free_text(c.arguments) == wanted][:limit]


def measure(
    server: Caller, mix: TaskMix, reference_ms: float, calls: int = CALLS
) -> tuple[dict[str, DistinctCallCpu], list[str]]:
    """({"<tool> <kind>": figures}, the calls answered with a tool error)."""
    out: dict[str, DistinctCallCpu] = {}
    failed: list[str] = []
    for tool in TOOLS:
        for kind in KINDS:
            listed = calls_of_kind(mix, tool, kind, calls)
            if not listed:
                continue  # the mix has no call of this kind for the tool
            times: list[float] = []
            for args in listed:
                start = time.process_time()
                answered = server.call(tool, args)
                times.append((time.process_time() - start) * 1000)
                if not answered:
                    failed.append(f"{tool} {args}: answered a tool error")
            median = statistics.median(times)
            out[f"{tool} {kind}"] = DistinctCallCpu(
                tool=tool,
                kind=kind,
                calls=len(times),
                median_ms=round(median, 3),
                mean_ms=round(statistics.fmean(times), 3),
                reference_ms=round(reference_ms, 3),
                median_ratio=round(median / reference_ms, 3) if reference_ms else None,
            )
    return out, failed
