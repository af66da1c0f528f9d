"""Stage timing: exclusive per stage, coroutines timed only while they run."""

from __future__ import annotations

import asyncio

import pytest

from load.stage_clock import StageClock


class Ticks:
    """A CPU clock that moves only when told to."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def spend(self, seconds: float) -> None:
        self.t += seconds


def test_a_stage_excludes_the_stages_it_calls() -> None:
    ticks = Ticks()
    clock = StageClock(ticks)

    def inner() -> None:
        ticks.spend(2.0)

    def outer() -> None:
        ticks.spend(1.0)
        clock.sync("inner", inner)()
        ticks.spend(0.5)

    clock.sync("outer", outer)()
    assert dict(clock.seconds) == {"outer": 1.5, "inner": 2.0}


def test_a_stage_that_raises_is_still_counted_and_closed() -> None:
    ticks = Ticks()
    clock = StageClock(ticks)

    def failing() -> None:
        ticks.spend(3.0)
        raise KeyError("x")

    with pytest.raises(KeyError):
        clock.sync("failing", failing)()
    clock.sync("after", lambda: ticks.spend(1.0))()
    assert dict(clock.seconds) == {"failing": 3.0, "after": 1.0}


def test_interleaved_coroutines_are_each_timed_only_while_they_run() -> None:
    ticks = Ticks()
    clock = StageClock(ticks)

    async def work(first: float, second: float) -> float:
        ticks.spend(first)
        await asyncio.sleep(0)  # suspended: the other coroutine runs here
        ticks.spend(second)
        return first + second

    async def both() -> list[float]:
        a = clock.coroutine("a", work)(1.0, 2.0)
        b = clock.coroutine("b", work)(10.0, 20.0)
        return list(await asyncio.gather(a, b))

    assert asyncio.run(both()) == [3.0, 30.0]
    assert dict(clock.seconds) == {"a": 3.0, "b": 30.0}


def test_instrumenting_reaches_every_stage_of_a_real_call() -> None:
    """The stage clock patches the tools from outside: a tool refactoring that moves what it
    patches must fail here, not leave the profile silently attributing everything to the MCP
    layer."""
    from load.profile_calls import instrumented_server

    clock = StageClock()
    with instrumented_server(clock) as server:
        clock.seconds.clear()
        assert server.call("odb.get", {"drug": "metformin", "strength": "500 mg"})
        assert server.call(
            "coverage.answer", {"question": "Is metformin covered by the ODB program?"}
        )
    timed = {stage for stage, seconds in clock.seconds.items() if seconds > 0}
    assert {"SQL", "vector search", "merge/score/respond", "pipeline", "validation"} <= timed
    assert {"response dump + JSON", "parse"} <= timed
