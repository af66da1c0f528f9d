"""Latency of B against A, tool by tool, from paired calls: a verdict, or a reported figure.

Input: per tool, the same calls made on A and on B. From an interleaved measurement
(:mod:`evals.run.interleaved`) each call's A and B values are the medians over its rounds; from
two run logs each shared scenario is one pair (not interleaved: reported, never judged).

Per tool, over its ``n`` calls:

- the per-call log-ratios ``log(B / A)``: the exact Wilcoxon signed-rank test
  (``scipy.stats.wilcoxon(..., method="exact")``) when ``n <= 25``, its normal approximation
  above, one-sided each way (B slower: ``alternative="greater"``; B faster: ``"less"``). Zero
  log-ratios are dropped (Wilcoxon's convention); tied ones share their ranks. Log-ratios, so a
  tool's slow calls do not outweigh its fast ones: a fixed fraction slower is one effect;
- the p-values Holm-corrected across the tools tested (each direction its own family);
- medians over the calls: A's and B's latency, the ratio B / A and the difference B - A, and
  the ratio's distribution-free interval from the order statistics of the per-call ratios
  (binomial quantiles; its achieved coverage is reported, below 95 % for five calls or fewer).

**The rule.** B is *slower* on a tool when its Holm-adjusted one-sided p is below ``alpha``
**and** the median ratio is at least :data:`MIN_RATIO` **and** the median difference at least
:data:`MIN_DIFF_MS`; *faster* is the mirror image (reported, never an error); anything else is
*no difference*, with the reason when the test alone would have called it. A tool with fewer
than two answered calls is *not measured*, and says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from statistics import median
from typing import Literal

import numpy as np
from scipy.stats import binom, wilcoxon

from evals.read import stats
from evals.run.interleaved import InterleavedLatency
from evals.run.runlog import ScenarioRecord

# The practical threshold. A significant p on a fast tool is not a regression a user feels:
# 2 ms -> 3 ms is 1.5x and, with a dozen calls interleaved, significant, yet below what any
# caller of an MCP tool notices or any machine reproduces. B is called slower only when the
# typical call is at least this much slower in proportion (25 %: beyond the run-to-run spread
# the bench measures on a shared 2-core machine) ...
MIN_RATIO = 1.25
# ... and in absolute terms (20 ms: below it the difference is scheduler noise on a shared
# machine and a fraction of one network round trip to a real client).
MIN_DIFF_MS = 20.0
ALPHA = 0.05
# Above this many calls the exact null distribution gives way to the normal approximation
# (scipy's own default switch point).
EXACT_MAX_N = 25
CONFIDENCE = 0.95
MIN_CALLS = 2

LatencyVerdict = Literal["slower", "faster", "no difference", "not measured"]
SLOWER: LatencyVerdict = "slower"
FASTER: LatencyVerdict = "faster"
SAME: LatencyVerdict = "no difference"
NOT_MEASURED: LatencyVerdict = "not measured"

INTERLEAVED = "interleaved, paired"
NOT_INTERLEAVED = "not interleaved: reported, not judged"


@dataclass(frozen=True)
class ToolLatency:
    """One tool's paired latencies, its tests and its verdict."""

    tool: str
    n: int  # calls answered on both sides
    a_ms: float | None = None  # median over the calls
    b_ms: float | None = None
    ratio: float | None = None  # median over the calls of B / A
    ratio_low: float | None = None
    ratio_high: float | None = None
    coverage: float | None = None  # achieved coverage of [ratio_low, ratio_high]
    diff_ms: float | None = None  # median over the calls of B - A
    test: str = ""  # "exact" or "normal approximation"
    p_slower: float | None = None
    p_faster: float | None = None
    p_slower_holm: float | None = None
    p_faster_holm: float | None = None
    verdict: LatencyVerdict = NOT_MEASURED
    reason: str = ""
    dropped: int = 0  # pairs dropped because a side failed
    rounds: int | None = None  # rounds per call (interleaved) or None (one pair per scenario)

    @property
    def p_holm(self) -> float | None:
        """The Holm-adjusted p of the verdict's direction (B slower unless it is faster)."""
        return self.p_faster_holm if self.verdict == FASTER else self.p_slower_holm


@dataclass
class LatencyComparison:
    """Every tool's latency verdict, and how it was measured."""

    judged: bool
    method: str
    alpha: float = ALPHA
    min_ratio: float = MIN_RATIO
    min_diff_ms: float = MIN_DIFF_MS
    rounds: int | None = None
    tools: list[ToolLatency] = field(default_factory=list)
    # each side's summed call time and the wall clock of the measurement (seconds)
    a_calls_s: float | None = None
    b_calls_s: float | None = None
    wall_s: float | None = None
    error: str | None = None

    @property
    def title(self) -> str:
        return f"Latency ({self.method})"

    @property
    def regressions(self) -> list[ToolLatency]:
        """Tools B is significantly and materially slower on (none when not judged)."""
        return [t for t in self.tools if self.judged and t.verdict == SLOWER]

    def tool(self, name: str) -> ToolLatency | None:
        return next((t for t in self.tools if t.tool == name), None)


# ----------------------------------------------------------------------------- statistics


def _wilcoxon(log_ratios: np.ndarray, alternative: Literal["greater", "less"]) -> float:
    nonzero = log_ratios[log_ratios != 0]
    if nonzero.size == 0:
        return 1.0  # no call moved: nothing to test
    method: Literal["exact", "approx"] = "exact" if log_ratios.size <= EXACT_MAX_N else "approx"
    result = wilcoxon(log_ratios, alternative=alternative, method=method)
    return float(result.pvalue)


def median_interval(
    values: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """(low, high, coverage): the distribution-free interval of the median from the order
    statistics, [x_(k), x_(n+1-k)] with the largest k whose coverage
    ``1 - 2 P(Binom(n, 1/2) <= k - 1)`` is at least ``confidence`` (k = 1, the range, with its
    lower coverage when n is too small)."""
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError("no values")
    k = 1
    coverage = 1.0 - 2.0 * float(binom.cdf(0, n, 0.5)) if n > 1 else 0.0
    for candidate in range(2, n // 2 + 1):
        cov = 1.0 - 2.0 * float(binom.cdf(candidate - 1, n, 0.5))
        if cov < confidence:
            break
        k, coverage = candidate, cov
    return data[k - 1], data[n - k], coverage


def tool_test(
    tool: str,
    pairs: Sequence[tuple[float, float]],
    *,
    reason: str = "",
    dropped: int = 0,
    rounds: int | None = None,
) -> ToolLatency:
    """One tool's medians, interval and one-sided p-values (not yet Holm-adjusted, no
    verdict) from its per-call (A ms, B ms) pairs."""
    n = len(pairs)
    base = ToolLatency(tool, n, dropped=dropped, rounds=rounds, reason=reason)
    if n == 0:
        return replace(base, reason=reason or "no call answered on both targets")
    a = np.array([max(p[0], 1e-6) for p in pairs])
    b = np.array([max(p[1], 1e-6) for p in pairs])
    ratios = b / a
    figures = replace(
        base,
        a_ms=float(np.median(a)),
        b_ms=float(np.median(b)),
        ratio=float(np.median(ratios)),
        diff_ms=float(np.median(b - a)),
    )
    if n < MIN_CALLS:
        return replace(
            figures,
            reason=reason or "one call: a paired test across calls needs two or more",
        )
    low, high, coverage = median_interval(ratios.tolist())
    log_ratios = np.log(ratios)
    return replace(
        figures,
        ratio_low=low,
        ratio_high=high,
        coverage=coverage,
        test="exact" if n <= EXACT_MAX_N else "normal approximation",
        p_slower=_wilcoxon(log_ratios, "greater"),
        p_faster=_wilcoxon(log_ratios, "less"),
        reason=reason,
    )


def judge(
    tools: Iterable[ToolLatency],
    *,
    alpha: float = ALPHA,
    min_ratio: float = MIN_RATIO,
    min_diff_ms: float = MIN_DIFF_MS,
) -> list[ToolLatency]:
    """Holm across the tested tools (each direction a family), then the rule per tool."""
    tools = list(tools)
    tested = [i for i, t in enumerate(tools) if t.p_slower is not None]
    slower_holm = stats.holm([tools[i].p_slower or 1.0 for i in tested])
    faster_holm = stats.holm([tools[i].p_faster or 1.0 for i in tested])
    for i, p_s, p_f in zip(tested, slower_holm, faster_holm, strict=True):
        tools[i] = _verdict(
            replace(tools[i], p_slower_holm=p_s, p_faster_holm=p_f), alpha, min_ratio, min_diff_ms
        )
    return sorted(tools, key=lambda t: t.tool)


def _verdict(t: ToolLatency, alpha: float, min_ratio: float, min_diff_ms: float) -> ToolLatency:
    assert t.ratio is not None and t.diff_ms is not None
    assert t.p_slower_holm is not None and t.p_faster_holm is not None
    if t.p_slower_holm < alpha:
        if t.ratio >= min_ratio and t.diff_ms >= min_diff_ms:
            return replace(t, verdict=SLOWER)
        return replace(t, verdict=SAME, reason=_under(t, "slower", min_ratio, min_diff_ms))
    if t.p_faster_holm < alpha:
        if t.ratio <= 1.0 / min_ratio and -t.diff_ms >= min_diff_ms:
            return replace(t, verdict=FASTER)
        return replace(t, verdict=SAME, reason=_under(t, "faster", min_ratio, min_diff_ms))
    smallest = 0.5 ** (t.n) if t.test == "exact" else 0.0
    if smallest >= alpha:
        return replace(
            t,
            verdict=SAME,
            reason=t.reason
            or f"{t.n} calls: the exact test cannot reach alpha (its smallest p is {smallest:.3g})",
        )
    return replace(t, verdict=SAME)


def _under(t: ToolLatency, direction: str, min_ratio: float, min_diff_ms: float) -> str:
    assert t.ratio is not None and t.diff_ms is not None
    misses = []
    slower = direction == "slower"
    if (t.ratio if slower else 1.0 / t.ratio) < min_ratio:
        misses.append(f"ratio {t.ratio:.2f}x within {min_ratio:g}x")
    if (t.diff_ms if slower else -t.diff_ms) < min_diff_ms:
        misses.append(f"difference {t.diff_ms:+.1f} ms within {min_diff_ms:g} ms")
    return f"significantly {direction} but under the practical threshold: " + ", ".join(misses)


# ----------------------------------------------------------------------------- sources


def from_interleaved(
    record: InterleavedLatency,
    *,
    alpha: float = ALPHA,
    min_ratio: float = MIN_RATIO,
    min_diff_ms: float = MIN_DIFF_MS,
) -> LatencyComparison:
    """Judged latency from an interleaved measurement: per call the medians over its rounds."""
    per_tool: dict[str, list[tuple[float, float]]] = {}
    dropped: dict[str, list[str]] = {}
    for call in record.calls:
        per_tool.setdefault(call.tool, [])
        dropped.setdefault(call.tool, []).extend(call.dropped)
        if call.a_ms and call.b_ms:
            per_tool[call.tool].append((median(call.a_ms), median(call.b_ms)))
    tools = []
    for tool, pairs in per_tool.items():
        why = record.not_measured.get(tool, "")
        if not pairs and dropped[tool]:
            why = why or f"every pair dropped ({len(dropped[tool])}): {dropped[tool][0][:160]}"
        tools.append(
            tool_test(tool, pairs, reason=why, dropped=len(dropped[tool]), rounds=record.rounds)
        )
    tools += [
        ToolLatency(tool, 0, reason=why)
        for tool, why in record.not_measured.items()
        if tool not in per_tool
    ]
    return LatencyComparison(
        judged=True,
        method=INTERLEAVED,
        alpha=alpha,
        min_ratio=min_ratio,
        min_diff_ms=min_diff_ms,
        rounds=record.rounds,
        tools=judge(tools, alpha=alpha, min_ratio=min_ratio, min_diff_ms=min_diff_ms),
        a_calls_s=record.a_calls_s,
        b_calls_s=record.b_calls_s,
        wall_s=record.wall_s,
    )


def from_runs(
    records_a: Sequence[ScenarioRecord],
    records_b: Sequence[ScenarioRecord],
    shared: set[str],
    *,
    alpha: float = ALPHA,
    min_ratio: float = MIN_RATIO,
    min_diff_ms: float = MIN_DIFF_MS,
) -> LatencyComparison:
    """Reported latency from two run logs: the scenarios both answered, paired by id (the runs
    were not interleaved, so the verdicts are shown, never acted on)."""
    by_id_b = {r.id: r for r in records_b}
    per_tool: dict[str, list[tuple[float, float]]] = {}
    for ra in records_a:
        rb = by_id_b.get(ra.id)
        if ra.id not in shared or rb is None:
            continue
        per_tool.setdefault(ra.tool, [])
        if _answered(ra) and _answered(rb):
            assert ra.latency_ms is not None and rb.latency_ms is not None
            per_tool[ra.tool].append((float(ra.latency_ms), float(rb.latency_ms)))
    tools = [tool_test(tool, pairs) for tool, pairs in per_tool.items()]
    return LatencyComparison(
        judged=False,
        method=NOT_INTERLEAVED,
        alpha=alpha,
        min_ratio=min_ratio,
        min_diff_ms=min_diff_ms,
        tools=judge(tools, alpha=alpha, min_ratio=min_ratio, min_diff_ms=min_diff_ms),
        a_calls_s=_seconds(records_a, shared),
        b_calls_s=_seconds(records_b, shared),
    )


def _answered(record: ScenarioRecord) -> bool:
    return record.status != "error" and not record.is_error and record.latency_ms is not None


def _seconds(records: Sequence[ScenarioRecord], shared: set[str]) -> float:
    return round(sum(r.latency_ms or 0.0 for r in records if r.id in shared) / 1000.0, 3)


# ----------------------------------------------------------------------------- output


def verdict_text(latency: LatencyComparison, t: ToolLatency) -> str:
    """The verdict as shown: 'not measured: why', and '(not judged)' for run logs."""
    if t.verdict == NOT_MEASURED:
        return f"not measured: {t.reason}" if t.reason else NOT_MEASURED
    return t.verdict if latency.judged else f"{t.verdict} (not judged)"


def ratio_text(t: ToolLatency) -> str:
    if t.ratio is None:
        return "-"
    if t.ratio_low is None or t.ratio_high is None or t.coverage is None:
        return f"{t.ratio:.2f}x"
    return f"{t.ratio:.2f}x [{t.ratio_low:.2f}, {t.ratio_high:.2f}] ({t.coverage:.0%})"
