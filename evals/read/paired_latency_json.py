"""The ``latency`` part of compare.json: the TypedDict shapes of the per-tool latency verdicts
and :func:`to_json`, which writes a :class:`evals.read.paired_latency.LatencyComparison`."""

from __future__ import annotations

from typing import TypedDict

from evals.read import stats
from evals.read.paired_latency import EXACT_MAX_N, LatencyComparison, LatencyVerdict


class LatencyRuleJson(TypedDict):
    alpha: float
    min_ratio: float
    min_diff_ms: float
    test: str


class ToolLatencyJson(TypedDict):
    tool: str
    n: int
    rounds: int | None
    a_median_ms: float | None
    b_median_ms: float | None
    ratio: float | None
    ratio_low: float | None
    ratio_high: float | None
    ratio_coverage: float | None
    diff_ms: float | None
    test: str | None
    p_slower: float | None
    p_faster: float | None
    p_slower_holm: float | None
    p_faster_holm: float | None
    verdict: LatencyVerdict
    reason: str | None
    dropped: int


class LatencyJson(TypedDict):
    """The ``latency`` part of compare.json."""

    method: str
    judged: bool
    rounds: int | None
    order: str | None
    rule: LatencyRuleJson
    a_calls_s: float | None
    b_calls_s: float | None
    wall_s: float | None
    error: str | None
    regressions: list[str]
    tools: list[ToolLatencyJson]


def to_json(latency: LatencyComparison) -> LatencyJson:
    return {
        "method": latency.method,
        "judged": latency.judged,
        "rounds": latency.rounds,
        "order": "ABBA" if latency.judged else None,
        "rule": {
            "alpha": latency.alpha,
            "min_ratio": latency.min_ratio,
            "min_diff_ms": latency.min_diff_ms,
            "test": "Wilcoxon signed-rank on per-call log(B/A), one-sided, exact for n <= "
            f"{EXACT_MAX_N} (normal approximation above), Holm across tools",
        },
        "a_calls_s": latency.a_calls_s,
        "b_calls_s": latency.b_calls_s,
        "wall_s": latency.wall_s,
        "error": latency.error,
        "regressions": [t.tool for t in latency.regressions],
        "tools": [
            {
                "tool": t.tool,
                "n": t.n,
                "rounds": t.rounds,
                "a_median_ms": stats.finite(t.a_ms),
                "b_median_ms": stats.finite(t.b_ms),
                "ratio": stats.finite(t.ratio),
                "ratio_low": stats.finite(t.ratio_low),
                "ratio_high": stats.finite(t.ratio_high),
                "ratio_coverage": t.coverage,
                "diff_ms": stats.finite(t.diff_ms),
                "test": t.test or None,
                "p_slower": t.p_slower,
                "p_faster": t.p_faster,
                "p_slower_holm": t.p_slower_holm,
                "p_faster_holm": t.p_faster_holm,
                "verdict": t.verdict,
                "reason": t.reason or None,
                "dropped": t.dropped,
            }
            for t in latency.tools
        ],
    }
