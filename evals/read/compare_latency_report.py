"""The compare report's paired latency: the verdict's clause on tools that got slower and the
section judging each tool's latency from calls made on A and B alternately."""

from __future__ import annotations

from evals import render
from evals.read import paired_latency
from evals.read.compare import Comparison
from evals.read.compare_format import ms_text, p_text


def latency_verdict(c: Comparison) -> str:
    if c.latency and c.latency.error:
        return f"; {c.latency.error}"
    slower = [
        f"{t.tool} {ms_text(t.a_ms)} -> {ms_text(t.b_ms)} ms ({paired_latency.ratio_text(t)}, "
        f"Holm p {p_text(t.p_slower_holm or 1.0)})"
        for t in c.latency_regressions
    ]
    return "; slower: " + "; ".join(slower) if slower else ""


def latency_section(doc: render.Document, c: Comparison) -> None:
    """Per tool: calls paired, A and B medians, the ratio and its interval, Holm p, verdict."""
    lat = c.latency
    if lat is None:
        return
    tone_of: dict[str, render.Tone] = {"slower": "bad", "faster": "good"}
    if lat.judged:
        how = (
            f"Each tool's distinct golden calls, on A and B alternately on their own open "
            f"sessions (ABBA), {lat.rounds} round(s) after one uncounted warm-up per tool and "
            "target; a call's value is its median over the rounds."
        )
    else:
        how = (
            "The two runs were not interleaved (each ran alone, calls concurrent): one pair per "
            "shared scenario answered on both; the verdicts are reported, not judged."
        )
    rule = (
        f"Wilcoxon signed-rank on the per-call log(B/A), one-sided, exact for n <= "
        f"{paired_latency.EXACT_MAX_N}, Holm across tools; slower when Holm p < {lat.alpha} and "
        f"median ratio >= {lat.min_ratio:g}x and median difference >= {lat.min_diff_ms:g} ms "
        "(faster: the mirror image, never an error). Ratio: median of per-call B/A with its "
        "order-statistic interval (achieved coverage)."
    )
    wall = ""
    if lat.a_calls_s is not None and lat.b_calls_s is not None:
        wall = f" A's calls took {lat.a_calls_s:.1f} s, B's {lat.b_calls_s:.1f} s" + (
            f" (wall clock {lat.wall_s:.1f} s)." if lat.wall_s is not None else "."
        )
    blocks: list[render.Block] = []
    if lat.error:
        blocks.append(render.Paragraph(lat.error, "bad"))
    blocks.append(
        render.Table(
            ["tool", "n calls", "A median ms", "B median ms", "B/A", "p (Holm)", "verdict"],
            [
                [
                    t.tool,
                    str(t.n),
                    ms_text(t.a_ms),
                    ms_text(t.b_ms),
                    paired_latency.ratio_text(t),
                    "-" if t.p_holm is None else p_text(t.p_holm),
                    paired_latency.verdict_text(lat, t)
                    + (f" ({t.reason})" if t.reason and t.verdict != "not measured" else ""),
                ]
                for t in lat.tools
            ],
            tones=[
                tone_of.get(t.verdict, "neutral") if lat.judged else "neutral" for t in lat.tools
            ],
            note=how + " " + rule + wall,
        )
    )
    doc.section(lat.title, *blocks)
