"""The corpus-scale bench's verdict: each tool's p95 at a grown corpus against its 1x figure.

A tool misses when its p95 ratio exceeds the factor's limit (`TARGETS`); each ratio carries a
95 % bootstrap interval, so a miss within the noise of the measurement reads as one.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from ocm_common.bootstrap import percentile_interval
from ocm_common.percentiles import percentile

TARGETS = {10: 2.0, 100: 4.0}  # max p95 ratio to 1x, from the issue


class LatencyRow(TypedDict):
    """One tool at one factor, single client: p50/p95 (ms), calls, failed calls, the mean
    answer size (bytes) and every call's latency."""

    p50_ms: float
    p95_ms: float
    calls: int
    errors: int
    answer_bytes: int
    samples_ms: list[float]


class ScaleRow(LatencyRow):
    """A `LatencyRow` with the tool's saturation calls/s and failed calls beside (None: the
    saturation step made no call of it)."""

    rps: float | None
    saturation_errors: int | None


# {factor: {tool: row}}, "1" always there
ScaleFigures = dict[str, dict[str, ScaleRow]]


class IndexInfo(TypedDict):
    """One factor's index: build seconds, size on disk, chunks, and whether a current synthetic
    index was reused."""

    build_s: float | None
    bytes: int
    chunks: int
    reused: NotRequired[bool]


class ScaleVerdict(TypedDict):
    """One factor's verdict: its p95 ratio limit, each tool's ratio to 1x and its 95 % interval,
    the tools over the limit and those whose interval still includes it."""

    limit: float
    ratios: dict[str, float]
    intervals_95: dict[str, tuple[float, float]]
    missed: list[str]
    interval_includes_limit: list[str]


class ScaleResult(TypedDict):
    """The scale bench's result (the body of scale.record.json)."""

    scale: ScaleFigures
    index: dict[str, IndexInfo]
    targets: dict[str, ScaleVerdict]
    # the command's arguments, as given
    settings: dict[str, Any]


def ratio_interval(
    base_ms: list[float], scaled_ms: list[float], *, resamples: int = 2000
) -> tuple[float, float] | None:
    """95 % bootstrap interval of p95(scaled) / p95(base), each side resampled on its own.

    A p95 from a few dozen calls moves by tens of percent between runs (the 1x figures moved
    20-25 % between two runs on this machine), so a ratio near its target is read with this."""
    if min(len(base_ms), len(scaled_ms)) < 10:
        return None
    low, high = percentile_interval(
        (base_ms, scaled_ms),
        lambda a, b, axis=-1: percentile(b, 95, axis) / percentile(a, 95, axis),
        resamples=resamples,
        seed=0,
    )
    return round(low, 2), round(high, 2)


def verdict(scale: ScaleFigures) -> dict[str, ScaleVerdict]:
    """Per factor with a target: each tool's p95 ratio to 1x with its 95 % interval, the tools
    whose ratio exceeds the target, and those whose interval still includes the target."""
    out: dict[str, ScaleVerdict] = {}
    for factor, limit in TARGETS.items():
        if str(factor) not in scale:
            continue
        rows = {
            tool: row
            for tool, row in scale[str(factor)].items()
            if tool in scale["1"] and scale["1"][tool]["p95_ms"] > 0
        }
        ratios = {
            tool: round(row["p95_ms"] / scale["1"][tool]["p95_ms"], 2) for tool, row in rows.items()
        }
        intervals = {
            tool: interval
            for tool, row in rows.items()
            if (
                interval := ratio_interval(
                    scale["1"][tool].get("samples_ms", []), row.get("samples_ms", [])
                )
            )
        }
        out[str(factor)] = {
            "limit": limit,
            "ratios": ratios,
            "intervals_95": intervals,
            "missed": sorted(t for t, r in ratios.items() if r > limit),
            "interval_includes_limit": sorted(
                t for t, (low, high) in intervals.items() if low <= limit <= high
            ),
        }
    return out
