"""The compare report's account of scenarios that flipped between A and B: the verdict's clause on
them, the exact test per scope, the flipped scenarios by tool and the facts that changed."""

from __future__ import annotations

import json

from evals import render
from evals.read.compare import OVERALL, Comparison
from evals.read.compare_format import p_text


def flip_verdict(c: Comparison) -> str:
    parts = []
    critical = c.flips.critical_failing
    if critical:
        parts.append(f"critical scenarios newly failing: {', '.join(f.scenario for f in critical)}")
    for t in c.flips.significant:
        parts.append(
            f"{t.scope}: {t.newly_failing} newly failing, {t.newly_passing} newly passing "
            f"(McNemar exact p {p_text(t.p_adjusted)})"
        )
    return "; " + "; ".join(parts) if parts else ""


# The changed facts shown in the report (all of them are in compare.json)
FACTS_SHOWN = 60


def flip_sections(doc: render.Document, c: Comparison) -> None:
    """Newly failing scenarios by tool, the exact test per scope, and the facts that changed."""
    f = c.flips
    bad: render.Tone = "bad"
    good: render.Tone = "good"
    flip_tones = [bad] * len(f.newly_failing) + [good] * len(f.newly_passing)
    doc.section(
        "Scenarios that flipped",
        render.Table(
            ["scope", "pass -> fail", "fail -> pass", "McNemar exact p (one-sided)", "verdict"],
            [
                [
                    t.scope,
                    str(t.newly_failing),
                    str(t.newly_passing),
                    p_text(t.p_adjusted) + (" (Holm)" if t.scope != OVERALL else ""),
                    "worse" if t.significant else "-",
                ]
                for t in f.tests
            ],
            tones=["bad" if t.significant else "neutral" for t in f.tests],
            note="Exact for few scenarios: a binomial test on the scenarios whose outcome "
            "differs. Overall at alpha; tools Holm-corrected among themselves. Any newly "
            "failing critical scenario is a regression on its own.",
        ),
        render.Table(
            ["tool", "scenario", "critical", "what B failed"],
            [
                [x.tool, x.scenario, "yes" if x.critical else "", "; ".join(x.failures) or "-"]
                for x in f.newly_failing
            ]
            + [
                [x.tool, x.scenario, "yes" if x.critical else "", "(now passes)"]
                for x in f.newly_passing
            ],
            tones=flip_tones,
        )
        if f.newly_failing or f.newly_passing
        else render.Paragraph("No shared scenario changed outcome."),
    )
    if f.facts:
        doc.section(
            "Facts that changed",
            render.Table(
                ["tool", "scenario", "path", "A", "B"],
                [
                    [x.tool, x.scenario, x.path, _short(x.a), _short(x.b)]
                    for x in f.facts[:FACTS_SHOWN]
                ],
                note=f"Values at the paths the scenarios' checks read; {len(f.facts)} in all"
                + (
                    f" (first {FACTS_SHOWN} shown; every one is in compare.json)"
                    if len(f.facts) > FACTS_SHOWN
                    else ""
                ),
            ),
        )


def _short(value: object, limit: int = 80) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
