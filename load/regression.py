"""The regression verdict of `make bench BASE=<rev>`: per tool, is the working tree slower than
the base by more than a margin, beyond the noise?

Input: per tool, paired latency samples (the same call sent to the working tree's server and the
base's, back to back, the order alternating), so machine drift hits both sides of a pair alike.
Per tool three ratios working / base, each with a 95 % percentile-bootstrap interval from
resampling the pairs jointly (`ocm_common.bootstrap`, seeded; the pairs keep the mix of arguments
the same on both sides of every resample):
- `p50`, `p95`: the percentile of the working side's calls over the base side's;
- `paired`: the median over pairs of (working call / its base call). This is the one that uses
  the interleaving: a pair is measured within milliseconds, so a slow minute on a shared
  machine divides out. In the first `make bench BASE=` run here (opa.policy_check made 25 %
  slower server-side, 100 pairs per tool, load average 3-5 from other jobs) the p50 ratio read
  1.147 [1.089, 1.258] and missed the margin, the paired ratio 1.225 [1.124, 1.277] cleared it;
  the other eleven tools' paired lower bounds were 0.93-1.03.

A tool is flagged when the interval's lower bound of any ratio is above 1 + `MARGIN`: slower
by more than 10 % with 97.5 % one-sided confidence. Why 10 %: on this shared 2-core machine
two servers of the same code measured p50 ratios within a few % of 1 and p95 ratios within
~10 %, so a smaller margin would read the machine; a 25 % regression clears it. Why the lower
bound and not the point estimate: a p95 of a hundred calls moves by tens of percent, and a
verdict a CI trusts must not flag noise. Twelve tools x two ratios are 24 tests; a tool whose
true ratio is 1 clears a 10 % margin at 97.5 % confidence far less often than 2.5 % of the
time, so no multiple-testing correction is applied.

Percentiles: linear interpolation between order statistics (numpy's default, as in
`ocm_common/latency_records.py`), for the point estimates and inside the bootstrap alike.

The concurrency conditions (load/base_conditions.py: latency on both paths, a cheap call beside
slow ones, calls near the whole-tool budget) are judged the same way on their own pairs, with
the p50 and paired ratios only (a p95 of twenty pairs says little) and a margin per condition,
`CONDITION_MARGINS`. Their defects change a latency several-fold (paths one after the other
~1.8x under the delay, a blocked loop ~3-4x for the cheap call, a lost deadline ~4x), while the
conditions themselves make the noise larger than the plain calls' (a loaded 2-core machine, a
deadline racing the scheduler), so their margins sit between the two: see the A/A runs on
docs/history/2026-11-27-base-concurrency.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from ocm_common.bootstrap import percentile_interval
from ocm_common.percentiles import METHOD, percentile

MARGIN = 0.10
CONFIDENCE = 0.95
RESAMPLES = 4000
SEED = 20260523
MIN_PAIRS = 20
PERCENTILES = {"p50": 50.0, "p95": 95.0}
RATIOS = (*PERCENTILES, "paired")
PERCENTILE_METHOD = METHOD
CONDITION_RATIOS = ("p50", "paired")
CONDITION_MARGINS = {"delay": 0.25, "lag": 0.5, "deadline": 0.5}


class RatioJson(TypedDict):
    """A `Ratio` as the record holds it."""

    working_ms: float
    base_ms: float
    ratio: float
    low: float
    high: float


class ToolVerdictJson(TypedDict):
    """A `ToolVerdict` as the record holds it, under its tool's name."""

    pairs: int
    ratios: dict[str, RatioJson]
    slower: bool
    note: str


class VerdictJson(TypedDict):
    """A `Verdict` as the record holds it: margin, confidence, how the figures were made, the
    tools judged slower and every tool's verdict."""

    margin: float
    confidence: float
    percentile: str
    bootstrap: str
    slower: list[str]
    tools: dict[str, ToolVerdictJson]


@dataclass(frozen=True)
class Ratio:
    """One percentile of one tool: working / base with its bootstrap interval."""

    working_ms: float
    base_ms: float
    ratio: float
    low: float
    high: float

    def to_json(self) -> RatioJson:
        return {
            "working_ms": self.working_ms,
            "base_ms": self.base_ms,
            "ratio": self.ratio,
            "low": self.low,
            "high": self.high,
        }


@dataclass(frozen=True)
class ToolVerdict:
    tool: str
    pairs: int
    ratios: dict[str, Ratio]
    slower: bool
    note: str = ""

    @property
    def worst(self) -> tuple[str, Ratio] | None:
        """The percentile whose interval sits highest (the one a flag is about)."""
        if not self.ratios:
            return None
        return max(self.ratios.items(), key=lambda kv: kv[1].low)


@dataclass
class Verdict:
    margin: float
    confidence: float
    tools: list[ToolVerdict] = field(default_factory=list)

    @property
    def slower(self) -> list[ToolVerdict]:
        return [t for t in self.tools if t.slower]

    def to_json(self) -> VerdictJson:
        return {
            "margin": self.margin,
            "confidence": self.confidence,
            "percentile": f"{PERCENTILE_METHOD} interpolation",
            "bootstrap": f"paired percentile bootstrap, {RESAMPLES} resamples, seed {SEED}",
            "slower": [t.tool for t in self.slower],
            "tools": {
                t.tool: {
                    "pairs": t.pairs,
                    "ratios": {name: r.to_json() for name, r in t.ratios.items()},
                    "slower": t.slower,
                    "note": t.note,
                }
                for t in self.tools
            },
        }


def ratio_interval(
    working_ms: Sequence[float],
    base_ms: Sequence[float],
    q: float,
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Ratio:
    """percentile_q(working) / percentile_q(base) and its paired percentile-bootstrap interval."""
    w = np.asarray(working_ms, dtype=float)
    b = np.asarray(base_ms, dtype=float)
    if w.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {w.size} vs {b.size}")
    point = float(percentile(w, q) / percentile(b, q))
    interval = percentile_interval(
        (w, b),
        lambda ws, bs, axis=-1: percentile(ws, q, axis) / percentile(bs, q, axis),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        paired=True,
    )
    return _ratio(float(percentile(w, q)), float(percentile(b, q)), point, interval)


def _ratio(working: float, base: float, point: float, interval: tuple[float, float]) -> Ratio:
    low, high = interval
    return Ratio(
        round(working, 3),
        round(base, 3),
        round(point, 4),
        round(low, 4),
        round(high, 4),
    )


def paired_interval(
    working_ms: Sequence[float],
    base_ms: Sequence[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Ratio:
    """The median over pairs of working / base, with its percentile-bootstrap interval
    (`working_ms`/`base_ms` of the result are the two sides' medians, for reading)."""
    w = np.asarray(working_ms, dtype=float)
    b = np.asarray(base_ms, dtype=float)
    if w.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {w.size} vs {b.size}")
    r = w / b
    interval = percentile_interval(
        (r,),
        lambda rs, axis=-1: percentile(rs, 50, axis),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
    point = float(percentile(r, 50))
    return _ratio(float(percentile(w, 50)), float(percentile(b, 50)), point, interval)


def judge(
    samples: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    margin: float = MARGIN,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    ratios: Sequence[str] = RATIOS,
    unjudged: Mapping[str, str] | None = None,
) -> Verdict:
    """Per tool, (working_ms, base_ms) paired samples -> which tools are slower, by how much.

    `ratios` names the ratios computed and judged; `unjudged` maps a tool to the reason its
    samples say nothing (it is listed with that note, never flagged)."""
    verdict = Verdict(margin, confidence)
    for tool, (working, base) in sorted(samples.items()):
        n = min(len(working), len(base))
        note = (unjudged or {}).get(tool) or ("too few pairs" if n < MIN_PAIRS else "")
        if note:
            verdict.tools.append(ToolVerdict(tool, n, {}, False, note))
            continue
        chosen = {
            name: ratio_interval(working, base, q, confidence=confidence, resamples=resamples)
            for name, q in PERCENTILES.items()
            if name in ratios
        }
        if "paired" in ratios:
            chosen["paired"] = paired_interval(
                working, base, confidence=confidence, resamples=resamples
            )
        slower = any(r.low > 1 + margin for r in chosen.values())
        verdict.tools.append(ToolVerdict(tool, len(working), chosen, slower))
    return verdict


def table(verdict: Verdict, condition: str = "") -> str:
    """Plain text: every tool's ratios with intervals, flagged ones marked; `condition` names
    the concurrency condition the pairs were measured under (none: one call at a time)."""
    under = f" under {condition}" if condition else ""
    head = (
        f"regression verdict{under}: working / base, {verdict.confidence:.0%} paired bootstrap "
        f"intervals; flagged when a lower bound > {1 + verdict.margin:g}"
    )
    lines = [
        head,
        f"  {'tool':24} {'pairs':>5} {'p50 w/b ms':>15} {'p50 ratio [CI]':>22} "
        f"{'p95 w/b ms':>15} {'p95 ratio [CI]':>22} {'paired ratio [CI]':>22}  verdict",
    ]
    for t in verdict.tools:
        cells = []
        for name in RATIOS:
            r = t.ratios.get(name)
            cells += (
                [
                    f"{r.working_ms:.1f}/{r.base_ms:.1f}",
                    f"{r.ratio:.3f} [{r.low:.3f}, {r.high:.3f}]",
                ]
                if r
                else ["-", "-"]
            )
        mark = "SLOWER" if t.slower else (t.note or "ok")
        lines.append(
            f"  {t.tool:24} {t.pairs:5d} {cells[0]:>15} {cells[1]:>22} {cells[2]:>15} "
            f"{cells[3]:>22} {cells[5]:>22}  {mark}"
        )
    slower = verdict.slower
    if slower:
        named = ", ".join(
            f"{t.tool} ({w[0]} x{w[1].ratio:.2f}, CI low {w[1].low:.2f})"
            for t in slower
            if (w := t.worst)
        )
        lines.append(f"slower than base by more than {verdict.margin:.0%}{under}: {named}")
    else:
        lines.append(f"no tool slower than base by more than {verdict.margin:.0%}{under}")
    return "\n".join(lines)
