"""The scale bench's verdict: p95 ratios to 1x, their bootstrap intervals, and the table."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from rich.console import Console

from ocm_common.percentiles import pct
from scale.bench_render import render
from scale.bench_targets import ratio_interval, verdict


def _row(samples: np.ndarray) -> dict[str, Any]:
    xs = [float(x) for x in samples]
    return {"p50_ms": float(np.median(xs)), "p95_ms": pct(xs, 95), "samples_ms": xs}


def _scale(factor_10: dict[str, np.ndarray], base: dict[str, np.ndarray]) -> dict[str, Any]:
    return {
        "1": {t: _row(x) for t, x in base.items()},
        "10": {t: _row(x) for t, x in factor_10.items()},
    }


def test_clear_growth_misses_and_its_interval_excludes_the_target() -> None:
    rng = np.random.default_rng(1)
    base = rng.gamma(9.0, 1.0, 200)
    scale = _scale(
        {"slow.tool": base * 3.0, "flat.tool": rng.gamma(9.0, 1.0, 200)},
        {"slow.tool": base, "flat.tool": base},
    )
    out = verdict(scale)["10"]
    assert out["missed"] == ["slow.tool"]
    low, high = out["intervals_95"]["slow.tool"]
    assert 2.0 < low <= out["ratios"]["slow.tool"] <= high
    assert out["intervals_95"]["flat.tool"][0] < 1.0 < out["intervals_95"]["flat.tool"][1]
    assert out["interval_includes_limit"] == []


def test_a_noisy_near_miss_is_flagged_as_within_the_interval() -> None:
    rng = np.random.default_rng(2)
    base = rng.lognormal(2.3, 0.5, 40)
    scaled = rng.lognormal(2.3 + np.log(2.1), 0.5, 40)
    out = verdict(_scale({"near.tool": scaled}, {"near.tool": base}))["10"]
    low, high = out["intervals_95"]["near.tool"]
    assert low <= 2.0 <= high
    assert out["interval_includes_limit"] == ["near.tool"]


def test_too_few_samples_give_no_interval() -> None:
    assert ratio_interval([1.0] * 5, [2.0] * 50) is None
    scale = _scale({"t": np.full(5, 2.0)}, {"t": np.full(5, 1.0)})
    assert verdict(scale)["10"]["intervals_95"] == {}


def test_the_table_shows_the_interval_and_the_miss() -> None:
    rng = np.random.default_rng(3)
    base = rng.gamma(9.0, 1.0, 100)
    scale = _scale({"slow.tool": base * 3.0}, {"slow.tool": base})
    result = {
        "scale": scale,
        "targets": verdict(scale),
        "index": {f: {"chunks": 1, "bytes": 1e6, "build_s": 1.0} for f in ("1", "10")},
    }
    md = render(result, Console(file=io.StringIO(), width=200))
    line = next(row for row in md.splitlines() if row.startswith("| slow.tool"))
    assert "MISSED" in line and "[" in line


def test_the_query_audit_names_the_stages_that_grew_most() -> None:
    """Per tool, the stages both scales ran, most growth first, with their medians."""
    from scale.query_audit import ScaleSamples, summarise

    def samples(tool_ms: float, stages: dict[str, float]) -> ScaleSamples:
        return ScaleSamples(
            tools={"odb.get": [tool_ms] * 3},
            stages={
                "odb.get": {name: [ms, ms, 99.0 * (name == "sql")] for name, ms in stages.items()}
            },
            sql={},
            vector={},
            sql_args={},
        )

    one = samples(4.0, {"sql": 1.0, "vector": 0.9, "merge": 0.1, "embed": 5.0})
    big = samples(7.5, {"sql": 1.4, "vector": 3.9, "merge": 0.1})  # `embed` only at 1x
    row = summarise({"1": one, "10": big}, "10").tools["odb.get"]
    assert (row.p50_1x, row.p50_big) == (4.0, 7.5)
    assert list(row.stages) == ["vector", "sql", "merge"]
    assert row.stages["vector"] == (0.9, 3.9)
    assert row.grew_most() == "vector 0.90->3.90, sql 1.00->1.40"
