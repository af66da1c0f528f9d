"""The server's stage timer: exclusive time per stage, per thread, on a described clock; and the
stage keys a real call of a dual-path tool and of coverage.answer reports."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from fastmcp import Client

from reference_server.retrieval.dual_path import run_blocking
from reference_server.stage_timer import StageTimes, collecting, stage
from tests.test_off_coverage import THREE_DOMAINS


class SteppedClock:
    """A clock that reads the times it is given, in order (one list per thread)."""

    def __init__(self, by_thread: dict[str, list[float]]) -> None:
        self.by_thread = {k: iter(v) for k, v in by_thread.items()}

    def __call__(self) -> float:
        return next(self.by_thread[threading.current_thread().name])


def test_a_nested_stage_is_not_counted_in_its_parent() -> None:
    main = threading.current_thread().name
    # merge opens at 0, score opens at 2 and closes at 5, merge closes at 10: merge 7, score 3.
    times = StageTimes(clock=SteppedClock({main: [0.0, 2.0, 5.0, 10.0]}))
    with collecting(times), stage("merge"), stage("score"):
        pass
    assert times.as_ms() == {"score": 3000.0, "merge": 7000.0}


def test_the_same_stage_twice_adds_up() -> None:
    main = threading.current_thread().name
    times = StageTimes(clock=SteppedClock({main: [0.0, 0.001, 1.0, 1.0025]}))
    with collecting(times):
        for _ in range(2):
            with stage("parse"):
                pass
    assert times.as_ms() == {"parse": 3.5}


def test_outside_a_call_a_stage_records_nothing() -> None:
    with stage("parse"):
        pass  # no accumulator: nothing to fail, nothing kept


def test_stages_in_pool_threads_reach_the_call_and_never_subtract_from_another_thread() -> None:
    """SQL and vector run at once in two pool threads while the loop's thread has `pipeline`
    open: each pool thread's stages are its own; the vector's query embedding nests in vector."""
    barrier = threading.Barrier(2)
    clocks = {
        "main": [0.0, 100.0],  # pipeline open 0..100 on the loop's thread
        "sql": [10.0, 40.0],  # sql 10..40
        "vector": [10.0, 20.0, 26.0, 50.0],  # vector 10..50, embed 20..26 inside it
    }

    def sql() -> None:
        threading.current_thread().name = "sql"
        barrier.wait()
        with stage("sql"):
            pass

    def vector() -> None:
        threading.current_thread().name = "vector"
        barrier.wait()
        with stage("vector"), stage("embed"):
            pass

    async def call() -> StageTimes:
        threading.current_thread().name = "main"
        times = StageTimes(clock=SteppedClock(clocks))
        with collecting(times), stage("pipeline"):
            await asyncio.gather(run_blocking(sql), run_blocking(vector))
        return times

    times = asyncio.run(call())
    assert times.as_ms() == {
        "sql": 30000.0,
        "embed": 6000.0,
        "vector": 34000.0,
        "pipeline": 100000.0,
    }


def test_a_stage_renamed_inside_its_block_is_timed_under_its_new_name() -> None:
    main = threading.current_thread().name
    times = StageTimes(clock=SteppedClock({main: [0.0, 1.0, 1.0, 3.0]}))
    with collecting(times):
        with stage("embed_cached"):
            pass
        with stage("embed_cached") as timed:
            timed.rename("embed")
    assert times.as_ms() == {"embed_cached": 1000.0, "embed": 2000.0}


DUAL_PATH_STAGES = {"validation", "parse", "sql", "vector", "merge", "score", "respond"}


async def _timings(client: Client[Any], tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args, raise_on_error=False)
    assert not result.is_error, result.content
    assert "stages" not in (result.structured_content or {})
    timings: dict[str, Any] = result.meta["timings_ms"]
    return timings


async def test_a_dual_path_call_reports_every_stage(
    client: Client[Any], off_collections: None
) -> None:
    timings = await _timings(client, "odb.get", {"q": "Is Ozempic covered for diabetes?"})
    stages = timings["stages"]
    assert DUAL_PATH_STAGES | {"serialise"} <= set(stages)
    assert {"embed", "embed_cached"} & set(stages)  # the vector path embedded the question
    assert "embed_stored" not in stages  # free text: never a stored vector
    assert all(v >= 0 for v in stages.values())
    assert {"sql", "vector", "total", "handler"} <= set(timings)
    assert timings["handler"] >= timings["total"]


async def test_coverage_answer_reports_its_stages_and_each_sub_calls(
    client: Client[Any], off_collections: None
) -> None:
    args = {"question": THREE_DOMAINS, "patient": {"age": 75}}
    result = await client.call_tool("coverage.answer", args, raise_on_error=False)
    assert not result.is_error, result.content
    stages = result.meta["timings_ms"]["stages"]
    assert {"validation", "parse", "merge", "sub_calls", "respond", "serialise"} <= set(stages)
    assert not {"sql", "vector"} & set(stages)  # those are the sub-calls' own, reported apart
    subs = result.meta["sub_call_timings_ms"]
    assert sorted(s["tool"] for s in subs) == ["adp.get", "odb.get", "schedule.get"]
    for sub in subs:
        assert set(sub["stages"]) >= DUAL_PATH_STAGES, sub
