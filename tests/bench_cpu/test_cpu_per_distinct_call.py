"""CPU per distinct call, per tool, in process: `make bench-cpu` (benchmarks are off in `make test`).

Each round is the next call of the tool's list in the distinct-query mix (`make distinct-mix`,
path in OCM_DISTINCT_MIX), so no round repeats an earlier one and the query-embedding cache
does not flatter the figure. Run with `--benchmark-timer time.process_time` (the Makefile does):
the timings are the process's CPU, not wall time. Each result carries, in its extra info, the
same session's reference workload (`load/calibrate.py`: one query embedding, CPU ms) and the
ratio to it, the figure that holds across machines.

A tool whose list holds both calls with free text (a question) and calls without (a DIN, a
brand and strength, an id) is measured for each kind apart: the two cost differently (only a
question runs the embedding model), and a mix of them would hide either.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from load.distinct_mix import TOOLS
from load.profile_calls import InProcessServer, has_free_text, reference_cpu_ms
from load.stage_clock import StageClock
from load.taskmix import TaskMix

pytestmark = pytest.mark.bench
CALLS = int(os.environ.get("OCM_CPU_CALLS", "60"))


@pytest.fixture(scope="module")
def mix() -> TaskMix:
    path = Path(os.environ.get("OCM_DISTINCT_MIX", ""))
    if not path.is_file():
        pytest.fail(
            "no distinct-query mix: run `make bench-cpu` (it builds one) or set OCM_DISTINCT_MIX"
        )
    return TaskMix.from_examples(path)


@pytest.fixture(scope="module")
def reference_ms() -> float:
    return reference_cpu_ms()


@pytest.fixture(scope="module")
def server() -> Iterator[InProcessServer]:
    s = InProcessServer(StageClock())
    yield s
    s.close()


KINDS = ("free_text", "no_free_text")


def calls_of_kind(mix: TaskMix, tool: str, kind: str) -> list[dict[str, Any]]:
    """The tool's distinct calls of one kind, in the mix's order, at most CALLS."""
    wanted = kind == "free_text"
    return [c.arguments for c in mix.calls[tool] if has_free_text(c.arguments) == wanted][:CALLS]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tool", TOOLS)
def test_cpu_per_distinct_call(
    benchmark: Any,
    server: InProcessServer,
    mix: TaskMix,
    reference_ms: float,
    tool: str,
    kind: str,
) -> None:
    listed = calls_of_kind(mix, tool, kind)
    if not listed:
        pytest.skip(f"the mix has no {tool} call of this kind ({kind})")
    calls = iter(listed)
    failed: list[dict[str, Any]] = []

    def one_call() -> None:
        args = next(calls)
        if not server.call(tool, args):
            failed.append(args)

    benchmark.pedantic(one_call, rounds=len(listed), iterations=1)
    assert not failed, f"{len(failed)} calls answered a tool error, e.g. {failed[0]}"
    if benchmark.stats is not None:
        mean_ms = benchmark.stats.stats.mean * 1000
        benchmark.extra_info.update(
            reference_cpu_ms=round(reference_ms, 3),
            mean_cpu_ms=round(mean_ms, 3),
            ratio_to_reference=round(mean_ms / reference_ms, 3),
            kind=kind,
        )
