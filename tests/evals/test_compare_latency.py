"""compare's latency verdict: interleaved paired calls, Wilcoxon on log-ratios, Holm across tools,
a practical threshold; run logs alone are reported, never judged."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from evals_testkit import record

from evals.read import paired_latency as pl
from evals.read.compare import EXIT_HARNESS, EXIT_OK, EXIT_REGRESSION, compare_logs
from evals.run.interleaved import InterleavedLatency, PairedCall, golden_calls, measure
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.runlog import RunLog
from evals.run.scenario import Scenario
from evals.run.targets import TargetError
from ocm_cli.program import main

# ----------------------------------------------------------------------------- inputs


def _interleaved(
    per_tool: dict[str, list[tuple[float, float]]], rounds: int = 1
) -> InterleavedLatency:
    """A measurement where every round of call i gave the same (A ms, B ms)."""
    calls = [
        PairedCall(
            tool=tool,
            args={"q": f"call {i}"},
            scenarios=[f"{tool}-{i}"],
            a_ms=[a] * rounds,
            b_ms=[b] * rounds,
            first=["a"] * rounds,
        )
        for tool, pairs in per_tool.items()
        for i, (a, b) in enumerate(pairs)
    ]
    return InterleavedLatency(a="A", b="B", rounds=rounds, calls=calls)


def _same_logs(make_log: Callable[..., Path], n: int = 3) -> tuple[RunLog, RunLog]:
    """Two run logs that agree on everything: any verdict comes from latency alone."""
    records = [record(f"s{i}", tool="adp.get") for i in range(n)]
    return RunLog.read(make_log(records)), RunLog.read(make_log(records))


A_12 = [10.0 + i for i in range(12)]  # 10 .. 21 ms


# ----------------------------------------------------------------------------- the rule


def test_twelve_calls_300_ms_slower_is_a_named_regression(
    make_log: Callable[..., Path],
) -> None:
    record_ = _interleaved({"adp.get": [(a, a + 300.0) for a in A_12]}, rounds=3)
    latency = pl.from_interleaved(record_)
    t = latency.tool("adp.get")
    assert t is not None and t.verdict == "slower" and t.test == "exact"
    # every log-ratio positive: the exact one-sided p is 1 / 2^12; one tool, so Holm keeps it
    assert t.p_slower == pytest.approx(1 / 4096) and t.p_slower_holm == pytest.approx(1 / 4096)
    # medians over the calls: A (15 + 16) / 2, B + 300, every difference exactly 300 ms
    assert (t.a_ms, t.b_ms, t.diff_ms) == (15.5, 315.5, 300.0)
    # per-call ratios (a + 300) / a; the median of twelve is the mean of a = 15 and a = 16
    assert t.ratio == pytest.approx((315 / 15 + 316 / 16) / 2)
    # order statistics of twelve: k = 3 covers 1 - 2 P(Binom(12, .5) <= 2) = 0.9614
    assert t.coverage == pytest.approx(1 - 2 * (1 + 12 + 66) / 4096)
    assert t.ratio_low == pytest.approx(319 / 19) and t.ratio_high == pytest.approx(312 / 12)
    a, b = _same_logs(make_log)
    comparison = compare_logs(a, b, interleaved=record_)
    assert comparison.exit_code == EXIT_REGRESSION
    assert [x.tool for x in comparison.latency_regressions] == ["adp.get"]
    assert compare_logs(a, b).exit_code == EXIT_OK  # the same logs without it: no regression


def test_one_ms_slower_on_a_2_ms_tool_is_under_the_practical_threshold(
    make_log: Callable[..., Path],
) -> None:
    record_ = _interleaved({"source.passages": [(2.0 + i / 100, 3.0 + i / 100) for i in range(12)]})
    t = pl.from_interleaved(record_).tool("source.passages")
    assert t is not None
    # significant (p = 1/4096) and ~1.5x, but one millisecond: not a verdict
    assert t.p_slower_holm == pytest.approx(1 / 4096) and t.ratio is not None and t.ratio > 1.4
    assert t.verdict == "no difference"
    assert "practical threshold" in t.reason and "within 20 ms" in t.reason
    a, b = _same_logs(make_log)
    assert compare_logs(a, b, interleaved=record_).exit_code == EXIT_OK
    # a stricter threshold in ms (an option of compare) makes the same figures a regression
    assert compare_logs(a, b, interleaved=record_, min_diff_ms=0.5).exit_code == EXIT_REGRESSION


def test_faster_is_reported_never_an_error(make_log: Callable[..., Path]) -> None:
    record_ = _interleaved({"adp.get": [(a + 300.0, a) for a in A_12]})
    t = pl.from_interleaved(record_).tool("adp.get")
    assert t is not None and t.verdict == "faster" and t.p_holm == pytest.approx(1 / 4096)
    a, b = _same_logs(make_log)
    assert compare_logs(a, b, interleaved=record_).exit_code == EXIT_OK


def test_zero_differences_and_ties() -> None:
    same = pl.from_interleaved(_interleaved({"adp.get": [(a, a) for a in A_12]}))
    t = same.tool("adp.get")
    assert t is not None and t.verdict == "no difference"
    assert (t.p_slower, t.p_faster, t.ratio, t.diff_ms) == (1.0, 1.0, 1.0, 0.0)
    # six calls unchanged (zeros dropped, Wilcoxon's convention), three 50 ms slower: the exact
    # test sees three positive log-ratios, p = 1/8, whatever the medians say
    pairs = [(a, a) for a in A_12[:6]] + [(100.0, 150.0)] * 3
    t = pl.from_interleaved(_interleaved({"adp.get": pairs})).tool("adp.get")
    assert t is not None and t.p_slower == pytest.approx(1 / 8) and t.verdict == "no difference"
    # tied log-ratios share their ranks: five calls all exactly 2x slower, p = 1/32
    t = pl.tool_test("adp.get", [(100.0, 200.0)] * 5)
    assert t.p_slower == pytest.approx(1 / 32) and t.coverage == pytest.approx(1 - 2 / 32)


def test_too_few_calls() -> None:
    latency = pl.from_interleaved(_interleaved({"adp.get": [(10.0, 400.0)]}))
    t = latency.tool("adp.get")
    assert t is not None and t.verdict == "not measured" and "one call" in t.reason
    assert t.p_slower is None and t.ratio == 40.0  # the figures are still shown
    assert pl.verdict_text(latency, t).startswith("not measured: one call")
    assert latency.regressions == []
    # four calls, all 40x slower: the exact test's smallest p is 1/16 > alpha, and it says so
    t = pl.judge([pl.tool_test("adp.get", [(10.0, 400.0)] * 4)])[0]
    assert t.verdict == "no difference" and "cannot reach alpha" in t.reason


def test_holm_across_tools() -> None:
    # two tools, five calls each, every one slower: p = 1/32 each; Holm: 2/32 and 1/32 -> both
    # 0.0625, neither below 0.05. The same tool alone is a regression.
    five = [(10.0 + i, 100.0 + i) for i in range(5)]
    two = pl.from_interleaved(_interleaved({"adp.get": five, "odb.get": five}))
    assert [(t.tool, t.p_slower_holm, t.verdict) for t in two.tools] == [
        ("adp.get", 0.0625, "no difference"),
        ("odb.get", 0.0625, "no difference"),
    ]
    one = pl.from_interleaved(_interleaved({"adp.get": five}))
    assert [t.verdict for t in one.tools] == ["slower"]


def test_normal_approximation_above_25_calls() -> None:
    t = pl.tool_test("adp.get", [(10.0, 10.0 + i) for i in range(1, 31)])
    # all 30 positive: T+ = 465, mean 232.5, sd sqrt(30 * 31 * 61 / 24); z = 4.78
    z = (465 - 232.5) / math.sqrt(30 * 31 * 61 / 24)
    assert t.test == "normal approximation"
    assert t.p_slower == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)), rel=1e-6)


def test_median_interval_order_statistics() -> None:
    # n = 10: k = 2 covers 1 - 2 (1 + 10) / 1024 = 0.9785; k = 3 only 0.8906
    assert pl.median_interval([float(v) for v in range(10, 0, -1)]) == (
        2.0,
        9.0,
        pytest.approx(1 - 22 / 1024),
    )


def test_median_over_rounds_then_pairs_across_calls() -> None:
    call = PairedCall(
        tool="adp.get",
        args={},
        scenarios=["x"],
        a_ms=[10.0, 50.0, 12.0],  # a drift spike on A in round 2: its median is 12
        b_ms=[40.0, 41.0, 90.0],  # median 41
        first=["a", "b", "a"],
    )
    other = call.model_copy(update={"a_ms": [20.0], "b_ms": [60.0]})
    latency = pl.from_interleaved(InterleavedLatency(a="A", b="B", rounds=3, calls=[call, other]))
    t = latency.tool("adp.get")
    assert t is not None and t.n == 2
    assert (t.a_ms, t.b_ms, t.diff_ms) == (16.0, 50.5, (29.0 + 40.0) / 2)


def test_tools_not_measured_say_why() -> None:
    record_ = InterleavedLatency(
        a="A",
        b="B",
        rounds=3,
        calls=[
            PairedCall(
                tool="adp.get", args={}, scenarios=["x"], dropped=["B: tool error: boom"] * 3
            )
        ],
        not_measured={"odb.get": "not served by B"},
    )
    latency = pl.from_interleaved(record_)
    reasons = {t.tool: (t.verdict, t.reason) for t in latency.tools}
    assert reasons["odb.get"] == ("not measured", "not served by B")
    assert reasons["adp.get"][0] == "not measured" and "boom" in reasons["adp.get"][1]


# ----------------------------------------------------------------------------- run logs only


def test_two_run_logs_are_paired_per_scenario_reported_not_judged(
    make_log: Callable[..., Path], tmp_path: Path
) -> None:
    a_records = [
        record(f"s{i}", tool="adp.get").model_copy(update={"latency_ms": 10.0 + i})
        for i in range(8)
    ]
    b_records = [r.model_copy(update={"latency_ms": (r.latency_ms or 0) + 300}) for r in a_records]
    a_dir, b_dir = make_log(a_records), make_log(b_records)
    comparison = compare_logs(RunLog.read(a_dir), RunLog.read(b_dir))
    latency = comparison.latency
    assert latency is not None and not latency.judged and latency.method == pl.NOT_INTERLEAVED
    t = latency.tool("adp.get")
    assert t is not None and t.n == 8 and t.verdict == "slower" and t.p_slower == 1 / 256
    assert pl.verdict_text(latency, t) == "slower (not judged)"
    assert latency.regressions == [] and comparison.exit_code == EXIT_OK
    out = tmp_path / "out"
    assert main(["compare", "--run-a", str(a_dir), "--run-b", str(b_dir), "--out", str(out)]) == 0
    md = (out / "compare.md").read_text()
    assert "## Latency (not interleaved: reported, not judged)" in md
    assert "| adp.get | 8 | 13.5 | 313.5 |" in md and "slower (not judged)" in md
    data = json.loads((out / "compare.json").read_text())["latency"]
    assert data["judged"] is False and data["tools"][0]["verdict"] == "slower"


# ----------------------------------------------------------------------------- calling


class _Fake:
    """A target that answers every call at once, logging (spec, tool, args)."""

    def __init__(self, spec: str, log: list[tuple[str, str, dict[str, Any]]], **kw: Any) -> None:
        self.spec = spec
        self.log = log
        self.tools = kw.get("tools", ("adp.get", "odb.get"))
        self.error_on = kw.get("error_on")

    async def __aenter__(self) -> _Fake:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def list_tools(self) -> list[ToolInfo]:
        return [ToolInfo(name=t, input_schema={}) for t in self.tools]

    async def call_tool(
        self, name: str, args: dict[str, Any], *, timeout_s: float | None = None
    ) -> CallOutcome:
        self.log.append((self.spec, name, args))
        if args.get("q") == self.error_on:
            raise TargetError("timed out")
        return CallOutcome(structured={}, is_error=False, text="", latency_ms=5.0)

    def for_mode(self, mode: str) -> None:
        return None


def _scenario(sid: str, tool: str, q: str, *, error: bool = False) -> Scenario:
    return Scenario.model_validate(
        {
            "id": sid,
            "title": sid,
            "tool": tool,
            "args": {"q": q},
            "expect": [{"check": "tool_error", "field": "q"}] if error else [],
            "version": 1,
            "source": "test",
        }
    )


async def test_measure_alternates_abba_after_one_uncounted_warm_up() -> None:
    log: list[tuple[str, str, dict[str, Any]]] = []
    scenarios = [
        _scenario("a1", "adp.get", "one"),
        _scenario("a2", "adp.get", "two"),
        _scenario("a3", "adp.get", "one"),  # the same call again: measured once, both ids kept
        _scenario("a4", "adp.get", "bad", error=True),  # expects a tool error: left out
        _scenario("o1", "odb.get", "x1"),
        _scenario("o2", "odb.get", "x2"),
        _scenario("s1", "schedule.get", "y"),  # served by neither
    ]
    a = _Fake("A", log)
    b = _Fake("B", log, tools=("adp.get", "odb.get"), error_on="x2")
    result = await measure(a, b, scenarios, rounds=2)
    adp = [(spec, args["q"]) for spec, tool, args in log if tool == "adp.get"]
    # warm-up A then B (first call, not counted), then AB BA in round 1 and BA AB in round 2
    assert adp == [
        ("A", "one"),
        ("B", "one"),
        ("A", "one"),
        ("B", "one"),
        ("B", "two"),
        ("A", "two"),
        ("B", "one"),
        ("A", "one"),
        ("A", "two"),
        ("B", "two"),
    ]
    calls = {(c.tool, c.args["q"]): c for c in result.calls}
    one, two = calls["adp.get", "one"], calls["adp.get", "two"]
    assert one.scenarios == ["a1", "a3"] and one.a_ms == [5.0, 5.0] == two.b_ms
    assert one.first == ["a", "b"] and two.first == ["b", "a"]
    # B times out on one odb.get call: its pairs dropped with the reason, the other call kept
    assert calls["odb.get", "x2"].a_ms == [] and len(calls["odb.get", "x2"].dropped) == 2
    assert "B: timed out" in calls["odb.get", "x2"].dropped[0]
    assert calls["odb.get", "x1"].b_ms == [5.0, 5.0]
    assert result.not_measured == {"schedule.get": "not served by A and B"}
    # a warm-up the transport fails leaves the tool not measured, no rounds waited out
    log.clear()
    dead = _Fake("B", log, error_on="x1")
    result = await measure(_Fake("A", log), dead, scenarios, rounds=2)
    assert result.not_measured["odb.get"] == "warm-up failed: B: timed out"
    assert [q for _, tool, q in log if tool == "odb.get"] == [{"q": "x1"}, {"q": "x1"}]
    assert result.a_calls_s >= 0 and result.wall_s >= 0


def test_golden_calls_use_what_each_run_sent() -> None:
    scenarios = [_scenario("p1", "source.passages", "ids"), _scenario("p2", "adp.get", "z")]
    # p1's ids were looked up from each backend's own answer: A and B got different arguments;
    # p2 was not answered by B's run: left out
    calls = golden_calls(scenarios, {"p1": {"ids": ["a:1"]}, "p2": {}}, {"p1": {"ids": ["b-1"]}})
    assert list(calls) == ["source.passages"]
    (call,) = calls["source.passages"]
    assert (call.sent("a"), call.sent("b")) == ({"ids": ["a:1"]}, {"ids": ["b-1"]})


def test_without_the_runs_a_call_whose_ids_come_from_a_search_is_left_out() -> None:
    looked_up = Scenario.model_validate(
        {
            **_scenario("p3", "source.passages", "x").model_dump(exclude={"ids_from"}),
            "ids_from": {"tool": "adp.get", "args": {"q": "walker"}, "path": "citations[*]",
                         "key": "walker", "id": "chunk_id", "into": "chunk_ids"},
        }
    )  # fmt: skip
    calls = golden_calls([looked_up, _scenario("p4", "adp.get", "z")])
    assert list(calls) == ["adp.get"]


# ----------------------------------------------------------------------------- end to end

SLOW_TOOL = "adp.get"
FAULT = f"faults.path_work_ms=150,faults.work_tools={SLOW_TOOL}"


def test_compare_names_the_tool_a_fault_slows(tmp_path: Path, settings: object) -> None:
    """Two in-process reference servers on the ADP scenarios (adp.get and source.passages);
    B sleeps 150 ms in each retrieval path of adp.get only."""
    out = tmp_path / "cmp"
    code = main(
        [
            "compare",
            "--a",
            "inprocess:hybrid",
            "--b",
            f"inprocess:hybrid,{FAULT}",
            "--overrides",
            "sql_timeout_ms=5000,vector_timeout_ms=5000,tool_timeout_ms=10000",
            "--only",
            "adp",
            "--latency-rounds",
            "2",
            "--no-ragas",
            "--routing-cases",
            "none",
            "--no-latest",
            "--quiet",
            "--out",
            str(out),
        ]
    )
    data = json.loads((out / "compare.json").read_text())
    latency = data["latency"]
    tools = {t["tool"]: t for t in latency["tools"]}
    assert code == EXIT_REGRESSION, data
    assert latency["judged"] and latency["regressions"] == [SLOW_TOOL]
    slow = tools[SLOW_TOOL]
    assert slow["verdict"] == "slower" and slow["n"] >= 10 and slow["diff_ms"] > 100
    assert tools["source.passages"]["verdict"] != "slower"
    # the latency rule is what failed B: its answers are the same
    assert not [m for m in data["metrics"] if m["verdict"] == "worse"]
    assert data["flips"]["newly_failing"] == []
    assert (out / "interleaved.json").is_file()
    md = (out / "compare.md").read_text()
    assert "## Latency (interleaved, paired)" in md and f"slower: {SLOW_TOOL}" in md


def test_a_failed_measurement_is_a_harness_error(make_log: Callable[..., Path]) -> None:
    a, b = _same_logs(make_log)
    comparison = compare_logs(a, b, latency_error="TargetError: cannot connect")
    assert comparison.exit_code == EXIT_HARNESS
    assert comparison.latency is not None and "cannot connect" in (comparison.latency.error or "")
