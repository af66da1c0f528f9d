"""The regression verdict of `make bench BASE=`, from synthetic paired samples.

Samples are seeded draws, not timings: a 25 % slower tool is flagged and named, an equal one
is not, a noisy one (same distribution, heavy tails, independent draws) is not.
"""

from __future__ import annotations

import numpy as np
import pytest

from load.regression import MARGIN, judge, percentile, ratio_interval, table


def _base(n: int = 100, sigma: float = 0.15, seed: int = 1) -> np.ndarray:
    return 10.0 * np.random.default_rng(seed).lognormal(0.0, sigma, n)


def test_a_25_percent_slower_tool_is_flagged_and_named() -> None:
    base = _base()
    jitter = np.random.default_rng(2).lognormal(0.0, 0.05, base.size)
    verdict = judge({"odb.get": (base * 1.25 * jitter, base), "adp.get": (base, base)})
    assert [t.tool for t in verdict.slower] == ["odb.get"]
    p50 = verdict.tools[1].ratios["p50"]
    assert 1.2 < p50.ratio < 1.3 and p50.low > 1 + MARGIN
    text = table(verdict)
    last = text.splitlines()[-1]
    assert last.startswith("slower than base by more than 10%: odb.get (") and "adp.get" not in last


def test_an_equal_tool_is_not_flagged() -> None:
    base = _base()
    jitter = np.random.default_rng(3).lognormal(0.0, 0.05, base.size)
    verdict = judge({"opa.get_section": (base * jitter, base)})
    assert not verdict.slower
    assert verdict.tools[0].ratios["p50"].low < 1 < verdict.tools[0].ratios["p50"].high
    assert "no tool slower" in table(verdict)


def test_a_noisy_tool_is_not_flagged() -> None:
    # same distribution, heavy tails, drawn independently: p95 ratios far from 1 by chance
    noisy_base = _base(n=60, sigma=0.8, seed=4)
    noisy_work = _base(n=60, sigma=0.8, seed=5)
    verdict = judge({"coverage.answer": (noisy_work, noisy_base)})
    assert not verdict.slower
    p95 = verdict.tools[0].ratios["p95"]
    assert p95.high - p95.low > 0.5  # wide: the interval is what keeps noise from a verdict


def test_a_small_slowdown_within_the_margin_is_not_flagged() -> None:
    base = _base(n=200, sigma=0.05)
    verdict = judge({"schedule.get": (base * 1.05, base)})
    assert not verdict.slower and verdict.tools[0].ratios["p50"].low > 1.0


def test_too_few_pairs_are_not_judged() -> None:
    verdict = judge({"adp.get": ([1.0] * 5, [1.0] * 5)})
    assert verdict.tools[0].note == "too few pairs" and not verdict.slower


def test_percentile_is_linear_interpolation_by_hand() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    assert float(percentile(x, 50)) == 2.5  # halfway between 2 and 3
    assert float(percentile(x, 95)) == pytest.approx(
        3.85
    )  # 3 + 0.85 x (4 - 3): position 0.95 x 3 = 2.85
    r = ratio_interval([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0], 50, resamples=200)
    assert r.ratio == 2.0 and r.low == r.high == 2.0  # every pair is exactly 2x


def test_the_verdict_is_reproducible() -> None:
    base = _base(sigma=0.4)
    work = _base(sigma=0.4, seed=9)
    first = judge({"t": (work, base)}).to_json()
    assert judge({"t": (work, base)}).to_json() == first


def test_the_paired_ratio_divides_out_drift_between_pairs() -> None:
    # each pair shares a machine-speed factor that swings 3x over the run; the working call
    # is 20 % slower than its base call (+/- 3 %)
    rng = np.random.default_rng(11)
    drift = rng.uniform(1.0, 3.0, 100)
    base = 10.0 * drift * rng.lognormal(0.0, 0.03, 100)
    work = 12.0 * drift * rng.lognormal(0.0, 0.03, 100)
    tool = judge({"opa.policy_check": (work, base)}).tools[0]
    assert tool.slower and 1.15 < tool.ratios["paired"].low < 1.2 < tool.ratios["paired"].high
