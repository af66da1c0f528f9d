"""Plots for the reports, drawn with matplotlib and returned as SVG text (inline in HTML).

Every function takes plain numbers (no run logs, no pandas) and returns one SVG document, so
the same plot serves the eval, gate, compare and bench reports. The Agg backend is used:
nothing needs a display, and text stays text (``svg.fonttype = none``) so pages stay small.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure as MplFigure

from ocm_common.percentiles import percentile

plt.rcParams.update(
    {
        "svg.fonttype": "none",
        "svg.hashsalt": "evals",  # stable ids: the same data gives the same SVG
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
)
COLOURS = ("#3b6fb6", "#e08a2e", "#4c9a5b", "#b84a4a", "#7a5fa8", "#6b7a8f")
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
GOOD, BAD, NEUTRAL = "#2f8a4c", "#b84a4a", "#7a8496"
# matplotlib's tab10, for plots with one line per tool
TEN_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip


@dataclass(frozen=True)
class Estimate:
    """A mean with its confidence interval (``low``/``high`` None when not computed)."""

    value: float
    low: float | None = None
    high: float | None = None


def _svg(fig: MplFigure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    # The RDF metadata block only names its vocabularies; drop it so a page holds no URL but
    # the SVG namespace.
    return _METADATA.sub("", buffer.getvalue())


def _errors(estimates: Sequence[Estimate]) -> np.ndarray | None:
    if not any(e.low is not None and e.high is not None for e in estimates):
        return None
    lower = [e.value - e.low if e.low is not None else 0.0 for e in estimates]
    upper = [e.high - e.value if e.high is not None else 0.0 for e in estimates]
    return np.array([np.maximum(lower, 0.0), np.maximum(upper, 0.0)])


def grouped_bars(
    groups: Mapping[str, Mapping[str, Estimate]],
    series: Sequence[str],
    *,
    title: str,
    ylabel: str = "score",
    bounded: bool = True,
) -> str:
    """Bars per group (a tool, a mode) and series (a metric, a backend) with CI whiskers."""
    names = list(groups)
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) * max(1, len(series)) ** 0.5), 3.4))
    x = np.arange(len(names))
    for i, name in enumerate(series):
        estimates = [groups[g].get(name, Estimate(float("nan"))) for g in names]
        values = [e.value for e in estimates]
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            values,
            width,
            label=name,
            color=COLOURS[i % len(COLOURS)],
            yerr=_errors(estimates),
            capsize=2,
            error_kw={"elinewidth": 0.8, "ecolor": "#333"},
        )
    ax.set_xticks(
        x, names, rotation=25 if len(names) > 4 else 0, ha="right" if len(names) > 4 else "center"
    )
    ax.set_ylabel(ylabel)
    if bounded:
        ax.set_ylim(0, 1.05)
    ax.set_title(title, loc="left")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", alpha=0.3)
    return _svg(fig)


def latency_distribution(
    samples: Mapping[str, Sequence[float]],
    *,
    title: str,
    targets: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> str:
    """Per tool: every call as a dot, a box of the middle half, p50 and p95 marked, and the
    tool's p50/p95 targets as ticks when given (log scale: latencies span decades)."""
    tools = [t for t in samples if samples[t]]
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * max(3, len(tools)) + 1.0))
    rng = np.random.default_rng(0)
    for row, tool in enumerate(tools):
        values = np.asarray(samples[tool], dtype=float)
        y = row + rng.uniform(-0.18, 0.18, len(values))
        ax.scatter(values, y, s=6, alpha=0.45, color=COLOURS[0], linewidths=0)
        q1, p50, q3, p95 = percentile(values, [25, 50, 75, 95])
        ax.plot([q1, q3], [row, row], color="#1d2433", linewidth=4, alpha=0.35)
        ax.plot([p50], [row], marker="|", markersize=14, color="#1d2433", mew=2)
        ax.plot([p95], [row], marker="|", markersize=14, color=COLOURS[1], mew=2)
        target = (targets or {}).get(tool)
        if target:
            for value, colour in zip(target, ("#1d2433", COLOURS[1]), strict=True):
                if value:
                    ax.plot([value], [row], marker="v", markersize=6, color=colour, alpha=0.7)
    ax.set_yticks(range(len(tools)), tools)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("latency per call (ms, log scale)")
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3, which="both")
    handles = [
        plt.Line2D(
            [], [], marker="|", linestyle="", markersize=10, mew=2, color="#1d2433", label="p50"
        ),
        plt.Line2D(
            [], [], marker="|", linestyle="", markersize=10, mew=2, color=COLOURS[1], label="p95"
        ),
    ]
    if targets:
        handles.append(
            plt.Line2D([], [], marker="v", linestyle="", color="#555", label="target p50 / p95")
        )
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="lower right")
    return _svg(fig)


def percentile_bars(
    rows: Mapping[str, Mapping[str, float]],
    *,
    title: str,
    targets: Mapping[str, tuple[float | None, float | None]] | None = None,
    keys: Sequence[str] = ("p50_ms", "p95_ms", "p99_ms"),
) -> str:
    """Per tool p50/p95/p99 bars (recorded percentiles, e.g. from a load run) with targets."""
    tools = list(rows)
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * max(3, len(tools)) + 1.0))
    height = 0.8 / len(keys)
    y = np.arange(len(tools))
    for i, key in enumerate(keys):
        values = [rows[t].get(key, float("nan")) for t in tools]
        ax.barh(
            y + (i - (len(keys) - 1) / 2) * height,
            values,
            height,
            label=key.replace("_ms", ""),
            color=COLOURS[i % len(COLOURS)],
        )
    for row, tool in enumerate(tools):
        target = (targets or {}).get(tool)
        if target and target[1]:
            ax.plot([target[1], target[1]], [row - 0.45, row + 0.45], color=BAD, linewidth=1.2)
    ax.set_yticks(y, tools)
    ax.invert_yaxis()
    ax.set_xscale("log")  # targets can sit two decades above the measured values
    ax.set_xlabel("ms (log scale)")
    ax.set_title(title + (" (red line: p95 target)" if targets else ""), loc="left")
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    ax.grid(axis="x", alpha=0.3, which="both")
    return _svg(fig)


def time_series(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    ylabel: str,
    xlabel: str = "seconds since start",
) -> str:
    """Lines over time (throughput, latency percentiles of a load run)."""
    fig, ax = plt.subplots(figsize=(7.5, 3.0))
    for i, (name, (xs, ys)) in enumerate(series.items()):
        ax.plot(list(xs), list(ys), label=name, color=COLOURS[i % len(COLOURS)], linewidth=1.3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, loc="left")
    ax.grid(alpha=0.3)
    if len(series) > 1:
        ax.legend(fontsize=8, frameon=False)
    return _svg(fig)


def deltas(
    rows: Sequence[tuple[str, float, float | None, float | None, str]],
    *,
    title: str,
    xlabel: str = "B - A (positive: B higher)",
) -> str:
    """A forest plot: one row per (label, difference, CI low, CI high, verdict) with the
    interval as a line; colour says better / worse / no significant difference."""
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * max(4, len(rows)) + 1.0))
    colour = {"better": GOOD, "worse": BAD}
    for row, (_, value, low, high, verdict) in enumerate(rows):
        c = colour.get(verdict, NEUTRAL)
        if low is not None and high is not None:
            ax.plot([low, high], [row, row], color=c, linewidth=2, alpha=0.8)
        ax.plot([value], [row], marker="o", color=c, markersize=4)
    ax.axvline(0, color="#333", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3)
    handles = [
        plt.Line2D([], [], color=GOOD, linewidth=2, label="B better"),
        plt.Line2D([], [], color=BAD, linewidth=2, label="B worse"),
        plt.Line2D([], [], color=NEUTRAL, linewidth=2, label="no significant difference"),
    ]
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="lower right")
    return _svg(fig)


def reliability(
    panels: Mapping[str, Sequence[tuple[float, float, int]]], *, title: str, columns: int = 4
) -> str:
    """Reliability diagrams, one panel per scope: each equal-count bin as (mean confidence,
    accuracy, count), a dot sized by its count on a line, against the diagonal of a perfectly
    calibrated confidence."""
    names = list(panels)
    cols = max(1, min(columns, len(names)))
    rows = max(1, -(-len(names) // cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.3 * cols + 0.4, 2.3 * rows + 0.5), squeeze=False
    )
    for index, ax in enumerate(axes.flat):
        if index >= len(names):
            ax.set_visible(False)
            continue
        bins = panels[names[index]]
        ax.plot([0, 1], [0, 1], color=NEUTRAL, linewidth=0.8, linestyle="--")
        if bins:
            conf, acc, count = (np.asarray(v, dtype=float) for v in zip(*bins, strict=True))
            ax.plot(conf, acc, color=COLOURS[0], linewidth=1.0)
            ax.scatter(conf, acc, s=12 + 60 * count / count.max(), color=COLOURS[0], zorder=3)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.05)
        ax.set_title(names[index], loc="left", fontsize=8)
        ax.grid(alpha=0.3)
        if index % cols == 0:
            ax.set_ylabel("accuracy")
        if index + cols >= len(names):  # nothing drawn below it
            ax.set_xlabel("mean confidence")
    fig.suptitle(title, x=0.01, ha="left", fontsize=9)
    fig.tight_layout()
    return _svg(fig)


def risk_coverage(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    title: str,
    highlight: str | None = None,
) -> str:
    """Accuracy of the most confident answers kept (y) against the share kept (x), one line per
    scope; ``highlight`` (the overall curve) drawn thicker."""
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    palette = TEN_COLOURS  # twelve tools need more than six colours
    for i, (name, (coverage, accuracy)) in enumerate(curves.items()):
        bold = name == highlight
        ax.plot(
            list(coverage),
            list(accuracy),
            label=name,
            color="#1d2433" if bold else palette[i % len(palette)],
            linewidth=2.2 if bold else 1.1,
            alpha=1.0 if bold else 0.85,
        )
    ax.set_xlim(0, 1.01)
    ax.set_xlabel("coverage (share of answers kept, most confident first)")
    ax.set_ylabel("accuracy of the kept answers")
    ax.set_title(title, loc="left")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _svg(fig)
