"""Interleaved latency: the golden calls of every tool both targets serve, on A and on B in turn.

Two run logs measured one after the other cannot judge speed: the machine drifts between the
runs (another process, a warmer cache, thermal throttling) and the runs call concurrently. This
module measures what ``evals compare`` judges instead:

- both targets are opened at once, each on its own session (its own transport: an in-process
  server, a subprocess, an HTTP endpoint), and kept open for the whole measurement;
- per tool both serve, its **distinct golden calls**: the tool and the arguments each target's
  golden run sent (its main-pass call, not the depth-raised retrieval call; an argument a
  scenario looks up from the backend's own answer differs between A and B and is kept per side),
  or the scenario's own arguments when no run is given. Scenarios that expect a tool error, and
  calls either golden run did not answer, are left out: an error path is not the latency a user
  waits for;
- one warm-up call per tool per target, not counted (a warm-up the transport failed, a
  timeout or a dead server, leaves the tool not measured rather than wait out every round);
- ``rounds`` rounds; in each, every call once on A and once on B, one after the other, never
  concurrently, the order alternating from pair to pair (A B, B A, A B, ...: ABBA) and each
  call's order flipping from one round to the next, so a drift during the measurement weighs on
  both sides alike and no call always goes first on the same side;
- a pair where either side failed (a tool error, a timeout, a transport error) is dropped and
  its reason kept; the analysis never mixes an error's latency with an answer's.

The result is a plain record (:class:`InterleavedLatency`, written as ``interleaved.json`` beside
the comparison); the statistics that read it live on the read side
(:mod:`evals.read.paired_latency`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from evals.run.runlog import DEFAULT_MODE, RunLog
from evals.run.scenario import Scenario
from evals.run.targets import Target, TargetError
from ocm_common.json_types import Arguments

VERSION = 1
Side = Literal["a", "b"]


class PairedCall(BaseModel):
    """One distinct golden call, measured on both targets round after round."""

    tool: str
    args: Arguments  # as sent to A
    args_b: Arguments | None = None  # as sent to B when they differ from A's
    scenarios: list[str]  # the golden scenarios that make this call
    # per counted round: (A ms, B ms) and which side went first; failed rounds dropped
    a_ms: list[float] = Field(default_factory=list)
    b_ms: list[float] = Field(default_factory=list)
    first: list[Side] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)  # why a round's pair was dropped

    def sent(self, side: Side) -> Arguments:
        """The arguments this call sends to ``side``."""
        return dict(self.args_b if side == "b" and self.args_b is not None else self.args)


class InterleavedLatency(BaseModel):
    """Every paired call of one interleaved measurement, and what was not measured and why."""

    version: int = VERSION
    a: str
    b: str
    rounds: int
    order: str = "ABBA"
    calls: list[PairedCall] = Field(default_factory=list)
    not_measured: dict[str, str] = Field(default_factory=dict)  # tool -> reason
    # client-measured time of each target's calls, warm-ups included, and the whole wall clock
    a_calls_s: float = 0.0
    b_calls_s: float = 0.0
    wall_s: float = 0.0

    def write(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _key(args: Arguments) -> str:
    return json.dumps(args, sort_keys=True, default=str)


def golden_calls(
    scenarios: Sequence[Scenario],
    sent_a: Mapping[str, Arguments] | None = None,
    sent_b: Mapping[str, Arguments] | None = None,
) -> dict[str, list[PairedCall]]:
    """Per tool, its distinct golden calls (first seen first), without the error scenarios.

    ``sent_a`` / ``sent_b``: scenario id -> the arguments that target's golden run sent, for
    the calls it answered (:func:`answered_args`); a scenario missing from either is left out.
    Without them, the scenarios' own arguments go to both, except where an argument is an id
    the backend gives (``ids_from``): such a call cannot be made as written, so it is left out."""
    calls: dict[str, dict[str, PairedCall]] = {}
    for scenario in scenarios:
        if scenario.expects_error:
            continue
        if sent_a is None or sent_b is None:
            if scenario.lookups:
                continue
            args_a = args_b = dict(scenario.args)
        elif scenario.id in sent_a and scenario.id in sent_b:
            args_a, args_b = dict(sent_a[scenario.id]), dict(sent_b[scenario.id])
        else:
            continue
        by_args = calls.setdefault(scenario.tool, {})
        key = _key(args_a) + "\n" + _key(args_b)
        if key in by_args:
            by_args[key].scenarios.append(scenario.id)
        else:
            by_args[key] = PairedCall(
                tool=scenario.tool,
                args=args_a,
                args_b=None if args_b == args_a else args_b,
                scenarios=[scenario.id],
            )
    return {tool: list(by_args.values()) for tool, by_args in sorted(calls.items())}


def answered_args(log: RunLog) -> dict[str, Arguments]:
    """Scenario id -> the arguments of its main-pass call, for the calls the run answered
    (no tool error, no harness error, a latency measured: a failed id lookup has none)."""
    return {
        r.id: dict(r.args)
        for r in log.by_mode(DEFAULT_MODE)
        if r.status != "error" and not r.is_error and r.latency_ms is not None
    }


class _Clock:
    """Each side's summed call time (warm-ups included), and whether its last failure was the
    transport's (a timeout, a dead server) rather than a tool error."""

    def __init__(self) -> None:
        self.spent = {"a": 0.0, "b": 0.0}
        self.unreachable = False

    async def call(
        self, side: Side, target: Target, tool: str, args: Arguments, timeout_s: float
    ) -> tuple[float | None, str | None]:
        """(latency ms, None) for an answer, (None, why) for a failure of any kind."""
        started = time.perf_counter()
        self.unreachable = False
        try:
            outcome = await target.call_tool(tool, dict(args), timeout_s=timeout_s)
        except TargetError as exc:
            self.spent[side] += time.perf_counter() - started
            self.unreachable = True
            return None, f"{side.upper()}: {exc}"
        self.spent[side] += time.perf_counter() - started
        if outcome.is_error:
            return None, f"{side.upper()}: tool error: {outcome.text[:200]}"
        return outcome.latency_ms, None


async def measure(
    a: Target,
    b: Target,
    scenarios: Sequence[Scenario],
    *,
    rounds: int = 3,
    timeout_s: float = 30.0,
    sent_a: Mapping[str, Arguments] | None = None,
    sent_b: Mapping[str, Arguments] | None = None,
) -> InterleavedLatency:
    """Open both targets, warm each tool up once per target, then ``rounds`` interleaved
    rounds of every distinct golden call (see the module docstring; ``sent_a`` / ``sent_b``
    as for :func:`golden_calls`). Raises ``TargetError`` when a target cannot be opened or
    listed."""
    record = InterleavedLatency(a=a.spec, b=b.spec, rounds=rounds)
    clock = _Clock()
    started = time.perf_counter()
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(a)
        await stack.enter_async_context(b)
        tools_a = {t.name for t in await a.list_tools()}
        tools_b = {t.name for t in await b.list_tools()}
        targets: dict[Side, Target] = {"a": a, "b": b}
        for tool, calls in golden_calls(scenarios, sent_a, sent_b).items():
            if tool not in tools_a or tool not in tools_b:
                lacking = " and ".join(
                    name for name, tools in (("A", tools_a), ("B", tools_b)) if tool not in tools
                )
                record.not_measured[tool] = f"not served by {lacking}"
                continue
            failed_warm_up = []
            for side in ("a", "b"):
                _, why = await clock.call(side, targets[side], tool, calls[0].sent(side), timeout_s)
                if why and clock.unreachable:
                    failed_warm_up.append(why)
            if failed_warm_up:
                # a timeout or a dead server: every round would wait out the same failure
                record.not_measured[tool] = "warm-up failed: " + "; ".join(failed_warm_up)
                continue
            for round_ in range(rounds):
                for index, call in enumerate(calls):
                    # AB, BA, AB, ... within a round, each call's order flipping from round to
                    # round: a drift weighs on both sides, and every call goes first on both
                    even = (round_ + index) % 2 == 0
                    order: tuple[Side, Side] = ("a", "b") if even else ("b", "a")
                    got = {
                        side: await clock.call(
                            side, targets[side], tool, call.sent(side), timeout_s
                        )
                        for side in order
                    }
                    (a_ms, a_why), (b_ms, b_why) = got["a"], got["b"]
                    if a_ms is None or b_ms is None:
                        call.dropped.append("; ".join(w for w in (a_why, b_why) if w))
                        continue
                    call.a_ms.append(round(a_ms, 3))
                    call.b_ms.append(round(b_ms, 3))
                    call.first.append(order[0])
            record.calls.extend(calls)
    record.a_calls_s = round(clock.spent["a"], 3)
    record.b_calls_s = round(clock.spent["b"], 3)
    record.wall_s = round(time.perf_counter() - started, 3)
    return record
