"""The concurrency conditions of `make bench BASE=`, judged from described samples (no servers).

Samples are seeded draws shaped like what each condition measures on this machine: under
`delay` a tool answers in one 100 ms delay plus its work when its paths run together, two delays
when one after the other; under `lag` a cheap call takes ~25 ms beside slow calls, ~100 ms when
the loop is blocked by their work; under `deadline` a tool answers at the retrieval deadline
(150 ms), or after its 600 ms slow path when the deadline is lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from load import parallel
from load.against_base import judge_condition
from load.base_conditions import DEADLINE, DELAY, DELAY_MS, LAG, ConditionSamples, delay_not_taken
from load.client import Reply
from load.regression import CONDITION_MARGINS, CONDITION_RATIOS, judge, table
from tests.run_records import bench_markdown


def _draw(n: int, seed: int, sigma: float = 0.3, scale: float = 10.0) -> np.ndarray:
    return scale * np.random.default_rng(seed).lognormal(0.0, sigma, n)


def _shared_noise(n: int, seed: int) -> np.ndarray:
    """A busy neighbour: a per-pair slowdown both sides of a pair share (1x-1.5x)."""
    return 1.0 + 0.5 * np.random.default_rng(seed).random(n)


def test_paths_one_after_the_other_are_flagged_under_delay_and_named() -> None:
    n = 20
    work = _draw(n, 1)
    noise = _shared_noise(n, 2)
    together = (DELAY_MS + work) * noise
    serial = (2 * DELAY_MS + work * _draw(n, 3, 0.1, 1.0)) * noise
    clean = (DELAY_MS + work * _draw(n, 4, 0.1, 1.0)) * noise
    measured = ConditionSamples(
        DELAY, {"adp.get": (list(serial), list(together)), "odb.get": (list(clean), list(together))}
    )
    verdict = judge_condition(measured)
    assert [t.tool for t in verdict.slower] == ["adp.get"]
    flagged = verdict.tools[0].ratios
    assert set(flagged) == set(CONDITION_RATIOS) == {"p50", "paired"}
    # two delays plus the work over one delay plus the work: ~(200 + 10) / (100 + 10)
    assert 1.7 < flagged["paired"].ratio < 2.0
    assert flagged["paired"].low > 1 + CONDITION_MARGINS["delay"]
    assert "under delay" in table(verdict, "delay").splitlines()[-1]


def test_a_blocked_loop_is_flagged_under_lag_and_an_equal_server_is_not() -> None:
    n = 20
    noise = _shared_noise(n, 5)
    base = _draw(n, 6, 0.5, 25.0) * noise
    blocked = _draw(n, 7, 0.5, 100.0) * noise
    same = _draw(n, 8, 0.5, 25.0) * noise  # the same distribution, drawn independently
    subject = "opa.get_section beside coverage.answer"
    flagged = judge_condition(ConditionSamples(LAG, {subject: (list(blocked), list(base))}))
    assert flagged.slower and flagged.tools[0].tool == subject
    clean = judge_condition(ConditionSamples(LAG, {subject: (list(same), list(base))}))
    assert not clean.slower
    # heavy tails and independent draws: the interval is wide, and the margin holds it
    paired = clean.tools[0].ratios["paired"]
    assert paired.low < 1 + CONDITION_MARGINS["lag"] and paired.high - paired.low > 0.2


def test_a_lost_deadline_is_flagged_under_deadline() -> None:
    n = 20
    noise = _shared_noise(n, 9)
    at_deadline = (150 + _draw(n, 10, 0.3, 10.0)) * noise
    lost = (600 + _draw(n, 11, 0.3, 30.0)) * noise
    verdict = judge_condition(
        ConditionSamples(DEADLINE, {"schedule.get": (list(lost), list(at_deadline))})
    )
    ratio = verdict.tools[0].ratios["p50"]
    assert verdict.slower and 3.5 < ratio.ratio < 4.5


def test_a_base_that_ignores_the_delay_is_not_judged() -> None:
    # the base answered in ~12 ms although 100 ms were injected on both paths
    pairs = {
        "adp.get": ([210.0] * 20, [12.0] * 20),
        "odb.get": ([111.0] * 20, [108.0] * 20),
    }
    unjudged = delay_not_taken(pairs)
    assert list(unjudged) == ["adp.get"] and "12 ms" in unjudged["adp.get"]
    verdict = judge_condition(ConditionSamples(DELAY, pairs, unjudged))
    assert not verdict.slower
    assert {t.tool: t.note for t in verdict.tools}["adp.get"] == unjudged["adp.get"]


def test_judge_computes_only_the_ratios_asked_for() -> None:
    verdict = judge({"t": ([2.0] * 30, [1.0] * 30)}, ratios=("paired",), margin=0.5)
    assert set(verdict.tools[0].ratios) == {"paired"} and verdict.slower


class _FakeClient:
    """Records which server each call reached; answers in a latency set per server."""

    log: ClassVar[list[tuple[str, str]]] = []
    latency: ClassVar[dict[str, float]] = {"http://w/mcp": 20.0, "http://b/mcp": 10.0}

    def __init__(self, url: str) -> None:
        self.url = url

    def call(self, tool: str, arguments: dict[str, Any], schemas: Any = None) -> Any:
        self.log.append((self.url, tool))
        return Reply(tool, self.latency[self.url], None, {})

    def schemas(self) -> None:
        return None

    def close(self) -> None:
        pass


def test_interleaved_calls_alternate_the_first_server_per_tool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _FakeClient.log = []
    monkeypatch.setattr(parallel, "McpClient", _FakeClient)
    urls = {"working": "http://w/mcp", "base": "http://b/mcp"}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("a", {}),
        ("b", {}),
        ("a", {}),
        ("b", {}),
        ("a", {}),
    ]
    sides = parallel.interleaved_calls(urls, calls)
    firsts = [_FakeClient.log[i][0] for i in range(0, len(_FakeClient.log), 2)]
    # tool a (index 0) starts with the first server, b (index 1) with the second; each flips
    assert firsts == [
        "http://w/mcp",
        "http://b/mcp",
        "http://b/mcp",
        "http://w/mcp",
        "http://w/mcp",
    ]
    assert sides["working"].latencies_ms == {"a": [20.0] * 3, "b": [20.0] * 2}
    assert sides["base"].latencies_ms == {"a": [10.0] * 3, "b": [10.0] * 2}


def test_the_markdown_names_the_condition_and_the_slower_tool() -> None:
    serial = ConditionSamples(
        DELAY, {"adp.get": ([210.0 + i for i in range(20)], [110.0 + i for i in range(20)])}
    )
    verdict = judge_condition(serial)
    summary = {
        "kind": "regression",
        "base_rev": "HEAD",
        "base_sha": "0" * 40,
        "machine": {},
        "exit_code": 1,
        "condition_rounds": 20,
        "regression": judge({}).to_json(),
        "conditions": {
            "delay": {"title": DELAY.title, "env": DELAY.env, "regression": verdict.to_json()}
        },
    }
    text = bench_markdown(summary)
    assert f"## Under delay: {DELAY.title} (margin 25%)" in text
    assert "Slower under delay: adp.get." in text


def test_the_bench_report_shows_each_condition_and_its_verdict(tmp_path: Path) -> None:
    lost = ConditionSamples(
        DEADLINE,
        {"odb.get": ([650.0 + i for i in range(20)], [165.0 + i for i in range(20)])},
        problems={"working": [], "base": ["odb.get: timed out"]},
    )
    summary = {
        "kind": "regression",
        "base_rev": "HEAD",
        "regression": judge({}).to_json(),
        "conditions": {
            "deadline": {
                "title": DEADLINE.title,
                "regression": judge_condition(lost).to_json(),
                "problems": lost.problems,
            }
        },
        "slower_under_conditions": ["odb.get under deadline"],
        "exit_code": 1,
    }
    text = bench_markdown(summary)
    assert "slower under a condition: odb.get under deadline" in text
    assert "Under deadline: whole-tool budget 250 ms" in text and "SLOWER" in text
    assert "under deadline, base (not judged): odb.get: timed out" in text
