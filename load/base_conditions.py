"""The concurrency conditions of `make bench BASE=<rev>`: the parallel profile's probes
(load/parallel.py) on both checkouts' servers, the calls interleaved between the two sides.

One call at a time, nothing queues and nothing nears a deadline, so three kinds of defect hardly
move the plain ratios. Each condition below puts both servers (working tree and base) in the
state where one shows, with the same settings on both sides; the working tree's own `OCM_FAULT_*`
(seeded defects) still reach only its server and are overridden only where a condition sets the
same variable:

- `delay`: the same latency on both retrieval paths. Paths run together answer in about one
  delay, one after the other in two.
- `lag`: a cheap call (`opa.get_section`) while slow calls (`coverage.answer`) keep both servers
  busy, their domain tools' paths each doing blocking work (`OCM_FAULT_PATH_WORK_MS`: a sleep
  inside the path's own function, as a slow query takes). On a correct server that work runs
  in the retrieval pool and the cheap call goes on; a path that blocks the event loop makes the
  cheap call wait for it. Sleeping, not computing, keeps the signal clear of CPU noise.
- `deadline`: a small whole-tool budget and a vector path slower than it. The tool answers from
  the SQL path at the deadline; with the deadline lost it waits for the slow path.

Each yields per subject (a tool, or the cheap tool under load) index-aligned pairs of latencies,
judged by load/regression.py with the condition's margin.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field

from load.parallel import CHEAP_TOOL, SLOW_TOOL, interleaved_calls, lag_probe
from load.taskmix import TaskMix

DELAY_MS = 100  # on both paths: a serial pair of paths adds ~100 ms to ~110 ms
DEADLINE_TOOL_TIMEOUT_MS = 250  # the retrieval deadline is 100 ms earlier (its merge reserve)
DEADLINE_VECTOR_DELAY_MS = 600  # past the budget, within the vector path's own 1000 ms timeout
LAG_SLOW_USERS = 1  # per server: both servers are loaded at once, on a 2-core machine
# The slow calls' domain tools (coverage.answer's sub-tools), each path sleeping this long in
# the retrieval pool; the cheap tool is not among them.
LAG_WORK_TOOLS = ("odb.get", "schedule.get", "adp.get")
LAG_WORK_MS = 150
CONDITION_ROUNDS = 20  # calls per tool and side, or cheap calls under load per side
# The loaded cheap calls per side are this many times the rounds: each side's slow caller is at
# its own point of its call when a pair is measured, so pairs share less than in the other
# conditions and a first A/A read 1.47 [1.12, 1.97] from 20 pairs; the calls are cheap.
LAG_ROUNDS_FACTOR = 2
# A base that ignores the injected delay would make every tool look slower: a tool whose base
# median is under this share of the delay is not judged.
DELAY_TAKEN = 0.8


@dataclass(frozen=True)
class Condition:
    name: str
    title: str
    env: dict[str, str]  # set on both servers of the condition's pair (empty: the plain pair)


DELAY = Condition(
    "delay",
    f"{DELAY_MS} ms on both retrieval paths, calls one at a time",
    {"OCM_FAULT_SQL_DELAY_MS": str(DELAY_MS), "OCM_FAULT_VECTOR_DELAY_MS": str(DELAY_MS)},
)
LAG = Condition(
    "lag",
    f"{CHEAP_TOOL} while {LAG_SLOW_USERS} {SLOW_TOOL} caller(s) per server keep both busy, "
    f"{LAG_WORK_MS} ms of blocking work in each path of {', '.join(LAG_WORK_TOOLS)}",
    {
        "OCM_FAULT_PATH_WORK_MS": str(LAG_WORK_MS),
        "OCM_FAULT_WORK_TOOLS": ",".join(LAG_WORK_TOOLS),
    },
)
DEADLINE = Condition(
    "deadline",
    f"whole-tool budget {DEADLINE_TOOL_TIMEOUT_MS} ms, {DEADLINE_VECTOR_DELAY_MS} ms on the "
    "vector path",
    {
        "OCM_TOOL_TIMEOUT_MS": str(DEADLINE_TOOL_TIMEOUT_MS),
        "OCM_FAULT_VECTOR_DELAY_MS": str(DEADLINE_VECTOR_DELAY_MS),
    },
)
CONDITIONS = (LAG, DELAY, DEADLINE)


@dataclass
class ConditionSamples:
    """What one condition measured: per subject (working_ms, base_ms) pairs, subjects the
    samples say nothing about (with why), each side's failed calls, and context numbers."""

    condition: Condition
    pairs: dict[str, tuple[list[float], list[float]]]
    unjudged: dict[str, str] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)
    # {side: {figure: ms}}: the lag condition's cheap call alone and under the slow callers
    measurements: dict[str, dict[str, float]] = field(default_factory=dict)


def measure_calls(
    condition: Condition, urls: Mapping[str, str], rounds: int = CONDITION_ROUNDS, *, seed: int = 1
) -> ConditionSamples:
    """`delay` and `deadline`: every golden tool's calls one at a time, interleaved."""
    mix = TaskMix.from_golden(seed=seed)
    calls = [(tool, mix.pick(tool).arguments) for _ in range(rounds) for tool in mix.tools]
    sides = interleaved_calls(urls, calls)
    working, base = sides["working"], sides["base"]
    pairs = {t: (working.latencies_ms[t], base.latencies_ms[t]) for t in mix.tools}
    unjudged = delay_not_taken(pairs) if condition is DELAY else {}
    return ConditionSamples(
        condition,
        pairs,
        unjudged,
        {"working": working.errors, "base": base.errors},
    )


def delay_not_taken(
    pairs: Mapping[str, tuple[list[float], list[float]]], delay_ms: float = DELAY_MS
) -> dict[str, str]:
    """Tools whose base answered faster than the injected delay allows: that base does not
    read the fault variables, so its side is no reference for this condition."""
    out = {}
    for tool, (_, base) in pairs.items():
        median = statistics.median(base) if base else 0.0
        if median < DELAY_TAKEN * delay_ms:
            out[tool] = f"base median {median:.0f} ms < {DELAY_TAKEN:g} x the {delay_ms:g} ms delay"
    return out


def measure_lag(
    urls: Mapping[str, str], rounds: int = CONDITION_ROUNDS, *, seed: int = 2
) -> ConditionSamples:
    """`lag`: cheap calls alone (context), then under the slow callers (judged, twice `rounds`)."""
    lag = lag_probe(
        urls,
        TaskMix.from_golden(seed=seed),
        alone_calls=max(5, rounds // 2),
        loaded_calls=LAG_ROUNDS_FACTOR * rounds,
        slow_users=LAG_SLOW_USERS,
    )
    working, base = lag["working"], lag["base"]
    subject = f"{CHEAP_TOOL} beside {SLOW_TOOL}"
    return ConditionSamples(
        LAG,
        {subject: (working.loaded_ms, base.loaded_ms)},
        problems={
            side: [f"{SLOW_TOOL}: {e}" for e in lag[side].slow_errors]
            for side in ("working", "base")
        },
        measurements={
            side: {
                "alone_median_ms": round(statistics.median(s.alone_ms), 2),
                "loaded_median_ms": round(statistics.median(s.loaded_ms), 2),
            }
            for side, s in lag.items()
            if s.alone_ms and s.loaded_ms
        },
    )
