"""The fuzz run's plain-text views, written into fuzz.json and printed by the command as they
are: the per-tool table (cases tried, edges passed, crashes, restarts, failures, the slowest
case) and, per tool, the boundary cases run and how they ended.
"""

from __future__ import annotations

from evals.run.fuzz_models import FuzzReport, ToolStats


def render_table(report: FuzzReport) -> str:
    """The per-tool table (plain text, so logs and reports quote it as is)."""
    rows: list[tuple[str, ...]] = [
        (
            "tool",
            "valid",
            "invalid",
            "tried",
            "edges ok",
            "crashes",
            "restarts",
            "failures",
            "slowest ms",
            "slowest case",
        )
    ]
    for t in report.tools:
        rows.append(
            (
                t.tool,
                str(t.valid),
                str(t.invalid),
                str(t.tried),
                _edges_ok(t),
                str(t.calls.get("crash", 0)),
                str(t.restarts),
                str(t.failures),
                f"{t.slowest_ms:.0f}",
                t.slowest_case[:70],
            )
        )
    total = [
        "TOTAL",
        str(sum(t.valid for t in report.tools)),
        str(sum(t.invalid for t in report.tools)),
        str(sum(t.tried for t in report.tools)),
        f"{sum(_passed(t) for t in report.tools)}/{sum(len(t.edges) for t in report.tools)}",
        str(sum(t.calls.get("crash", 0) for t in report.tools)),
        str(sum(t.restarts for t in report.tools)),
        str(sum(t.failures for t in report.tools)),
        f"{max((t.slowest_ms for t in report.tools), default=0):.0f}",
        "",
    ]
    rows.append(tuple(total))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _passed(stats: ToolStats) -> int:
    return sum(not e.failed for e in stats.edges)


def _edges_ok(stats: ToolStats) -> str:
    """Boundary cases that passed every check, of those run."""
    return f"{_passed(stats)}/{len(stats.edges)}"


def render_edges(report: FuzzReport) -> str:
    """Per tool: the boundary cases run and how they ended, the edges exercised per field,
    each failing or dropped edge with its reason."""
    lines = []
    for t in report.tools:
        if not t.edges and not t.edges_dropped:
            continue
        ended = ", ".join(f"{n} {kind}" for kind, n in sorted(t.edge_counts().items()))
        dropped = f", {len(t.edges_dropped)} dropped" if t.edges_dropped else ""
        lines.append(f"{t.tool}: {len(t.edges)} edge cases ({ended}){dropped}")
        lines.append(f"  {t.edge_summary}")
        for e in t.edges:
            if e.failed:
                lines.append(f"  FAILED {e.edge}: ended {e.ended}; broke {', '.join(e.failed)}")
        for d in t.edges_dropped:
            lines.append(f"  DROPPED {d.label}: {d.reason}")
    return "\n".join(lines)
