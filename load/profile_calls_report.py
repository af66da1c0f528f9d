"""What one `ocm profile-calls` run found, and how it is written out: the per-tool figures and
top functions (`ProfileReport`), profile.json's shapes and key order, and profile.md's tables
(CPU per call and ratios to the reference workload, the stage split, the top functions)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from load.stage_clock import STAGES


class FiguresSummary(TypedDict):
    """One tool's figures as profile.json writes them: the fields, less the calls' CPU times,
    then their median, mean and 90th percentile (None below three calls)."""

    tool: str
    kind: str
    calls: int
    stage_ms: dict[str, float]
    embedded_per_call: float
    cache_hit_rate: float | None
    no_text_calls: int
    no_text_embedded: int
    errors: int
    median_ms: float
    mean_ms: float
    p90_ms: float | None


class FunctionRow(TypedDict):
    """One function in a cProfile top list, per call made: where, how often, cum and own ms."""

    function: str
    calls_per_call: float
    cum_ms: float
    own_ms: float


SortBy = Literal["cum_ms", "own_ms"]


class ToolRow(TypedDict, total=False):
    """One tool's part of the report: the golden and distinct figures (a kind the tool has no
    calls of is absent) and, with distinct calls, the top functions by cumulative and own time."""

    golden: ToolFigures
    distinct: ToolFigures
    top: list[FunctionRow]
    top_own: list[FunctionRow]


class ToolRowJson(TypedDict, total=False):
    """A `ToolRow` as profile.json writes it (figures as their summaries)."""

    golden: FiguresSummary
    distinct: FiguresSummary
    top: list[FunctionRow]
    top_own: list[FunctionRow]


class ReferenceCpu(TypedDict):
    """The reference workload's median CPU ms before and after the calls, and their mean."""

    before: float
    after: float
    mean: float


@dataclass
class ProfileReport:
    """What one profiling run found (`to_json`: as profile.json holds it)."""

    mix: str
    calls_per_tool: int
    tools: dict[str, ToolRow]
    bare_tool_cpu_ms: float
    reference_cpu_ms: ReferenceCpu
    # the server's query-embedding cache counts at the end (Runtime.cache_stats)
    embed_cache: dict[str, int | str]


class ProfileJson(TypedDict):
    """profile.json, in its key order."""

    mix: str
    calls_per_tool: int
    bare_tool_cpu_ms: float
    reference_cpu_ms: ReferenceCpu
    embed_cache: dict[str, int | str]
    tools: dict[str, ToolRowJson]


@dataclass
class ToolFigures:
    """One tool's calls of one kind (distinct or golden): CPU per call and its stages."""

    tool: str
    kind: str
    calls: int = 0
    cpu_ms: list[float] = field(default_factory=list)
    stage_ms: dict[str, float] = field(default_factory=dict)  # per call, mean
    embedded_per_call: float = 0.0  # texts the model embedded (cache misses) per call
    cache_hit_rate: float | None = None  # of the query embedder's look-ups in these calls
    no_text_calls: int = 0
    no_text_embedded: int = 0  # calls without free text that still ran the model
    errors: int = 0

    @property
    def median_ms(self) -> float:
        return statistics.median(self.cpu_ms) if self.cpu_ms else 0.0

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.cpu_ms) if self.cpu_ms else 0.0

    def summary(self) -> FiguresSummary:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "calls": self.calls,
            "stage_ms": dict(self.stage_ms),
            "embedded_per_call": self.embedded_per_call,
            "cache_hit_rate": self.cache_hit_rate,
            "no_text_calls": self.no_text_calls,
            "no_text_embedded": self.no_text_embedded,
            "errors": self.errors,
            "median_ms": round(self.median_ms, 3),
            "mean_ms": round(self.mean_ms, 3),
            "p90_ms": (
                round(statistics.quantiles(self.cpu_ms, n=10)[-1], 3)
                if len(self.cpu_ms) > 2
                else None
            ),
        }


def _row_json(row: ToolRow) -> ToolRowJson:
    out: ToolRowJson = {}
    if "golden" in row:
        out["golden"] = row["golden"].summary()
    if "distinct" in row:
        out["distinct"] = row["distinct"].summary()
    if "top" in row:
        out["top"] = row["top"]
    if "top_own" in row:
        out["top_own"] = row["top_own"]
    return out


def to_json(report: ProfileReport) -> ProfileJson:
    return {
        "mix": report.mix,
        "calls_per_tool": report.calls_per_tool,
        "bare_tool_cpu_ms": report.bare_tool_cpu_ms,
        "reference_cpu_ms": report.reference_cpu_ms,
        "embed_cache": report.embed_cache,
        "tools": {tool: _row_json(row) for tool, row in report.tools.items()},
    }


def tables(report: ProfileReport) -> str:
    """Markdown: CPU per call and ratios, the stage split, the top functions."""
    ref = report.reference_cpu_ms["mean"]
    lines = [
        f"Reference workload (one query embedding, CPU): {ref:.2f} ms "
        f"(before {report.reference_cpu_ms['before']:.2f}, after "
        f"{report.reference_cpu_ms['after']:.2f}); {report.calls_per_tool} calls per "
        "tool and kind; CPU ms per call, median (mean). A bare FastMCP tool returning a "
        f"constant: {report.bare_tool_cpu_ms:.2f} ms "
        f"({report.bare_tool_cpu_ms / ref:.2f} x the reference).",
        "",
        "| tool | golden, repeated | distinct | distinct / golden | golden / ref | "
        "distinct / ref | model texts per distinct call | no-text calls that embedded | "
        "embedding cache hits: golden, distinct |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tool, row in report.tools.items():
        g, d = row.get("golden"), row.get("distinct")
        gm = f"{g.median_ms:.2f} ({g.mean_ms:.2f})" if g else "-"
        dm = f"{d.median_ms:.2f} ({d.mean_ms:.2f})" if d else "-"
        ratio = f"{d.mean_ms / g.mean_ms:.2f}x" if g and d and g.mean_ms else "-"
        gr = f"{g.mean_ms / ref:.2f}" if g else "-"
        dr = f"{d.mean_ms / ref:.2f}" if d else "-"
        emb = f"{d.embedded_per_call:.2f}" if d else "-"
        nt = f"{d.no_text_embedded}/{d.no_text_calls}" if d else "-"
        hits = ", ".join(_rate(f.cache_hit_rate if f else None) for f in (g, d))
        lines.append(f"| `{tool}` | {gm} | {dm} | {ratio} | {gr} | {dr} | {emb} | {nt} | {hits} |")
    kinds: tuple[Literal["distinct", "golden"], ...] = ("distinct", "golden")
    for kind in kinds:
        lines += ["", f"Stage split, {kind} calls (CPU ms per call, mean):", ""]
        lines.append("| tool | " + " | ".join(STAGES) + " |")
        lines.append("|---|" + "---:|" * len(STAGES))
        for tool, row in report.tools.items():
            fig = row.get(kind)
            if fig:
                cells = " | ".join(f"{fig.stage_ms.get(s, 0):.2f}" for s in STAGES)
                lines.append(f"| `{tool}` | {cells} |")
    tops: tuple[tuple[Literal["top", "top_own"], str], ...] = (
        ("top", "cumulative"),
        ("top_own", "own"),
    )
    for tool, row in report.tools.items():
        for key, what in tops:
            if not row.get(key):
                continue
            lines += ["", f"`{tool}`, distinct calls (cProfile, CPU): top functions by {what}", ""]
            lines += ["| function | calls per call | cum ms | own ms |", "|---|---:|---:|---:|"]
            lines += [
                f"| `{r['function']}` | {r['calls_per_call']} | {r['cum_ms']} | {r['own_ms']} |"
                for r in row[key]
            ]
    return "\n".join(lines) + "\n"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"
