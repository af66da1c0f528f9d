"""The compare report: Markdown, self-contained HTML and JSON under ``reports/compare/<ts>/``
(and a copy in ``reports/compare/latest/``), through the shared renderer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evals import registry, render
from evals.read import calibration_report, plots
from evals.read.compare import OVERALL, Comparison
from evals.read.compare_flips_report import flip_sections, flip_verdict
from evals.read.compare_format import ms_text, p_text
from evals.read.compare_json import to_json
from evals.read.compare_latency_report import latency_section, latency_verdict
from evals.read.findings import fmt
from ocm_common.percentiles import DEFINITION

HEADLINE = ("pass_rate", "nDCG@10", "R@5", "RR@10")


def _tone(verdict: str) -> render.Tone:
    return {"better": "good", "worse": "bad"}.get(verdict, "neutral")  # type: ignore[return-value]


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or b is None else f"{b / a:.2f}x"


def document(c: Comparison) -> render.Document:
    doc = render.Document(f"Compare: {c.label_b} (B) vs {c.label_a} (A)")
    for name, meta in (("A", c.meta_a), ("B", c.meta_b)):
        commit = (meta.get("commit") or "uncommitted")[:12]
        doc.meta.append(
            f"{name}: {meta.get('target')} (commit {commit}{', dirty' if meta.get('dirty') else ''}; "
            f"run {meta.get('started_at')}, {meta.get('scenarios')} scenarios)"
        )
    doc.meta.append(
        f"paired tests per scope and metric: t-test and randomization test; Holm correction over "
        f"{len(c.results)} tests; verdict at alpha {c.alpha} on the Holm-adjusted randomization p"
    )
    if c.error:
        doc.verdict = render.Paragraph(f"Harness error: {c.error}", "bad")
        return doc
    overall = c.scope(OVERALL)
    if c.exit_code:
        worse = ", ".join(f"{r.scope} {r.label}" for r in c.regressions[:8])
        missing = f"; missing tools: {', '.join(c.missing_tools)}" if c.missing_tools else ""
        flipped = flip_verdict(c)
        slower = latency_verdict(c)
        calibrated = calibration_report.verdict_text(c.calibration) if c.calibration else ""
        calibrated = f"; {calibrated}" if calibrated else ""
        text = f"{worse}{missing}{flipped}{slower}{calibrated}".removeprefix("; ") or "-"
        doc.verdict = render.Paragraph(f"B regresses against A: {text}", "bad")
    else:
        tone: render.Tone = "good" if overall and overall.verdict == "better" else "neutral"
        text = (
            "B is significantly better than A overall"
            if tone == "good"
            else ("No significant regression of B against A")
        )
        doc.verdict = render.Paragraph(text, tone)

    rows, tones = [], []
    for scope in c.scopes:
        row = [
            scope.scope,
            scope.verdict,
            f"{scope.a.passed}/{scope.a.scenarios}",
            f"{scope.b.passed}/{scope.b.scenarios}",
        ]
        for metric in HEADLINE[1:]:
            r = c.result(scope.scope, metric)
            row.append(
                "-"
                if r is None
                else f"{r.test.mean_a:.3f} -> {r.test.mean_b:.3f} (p {p_text(r.p_perm_holm)})"
            )
        row += [
            ", ".join(registry.label(m) for m in scope.better) or "-",
            ", ".join(registry.label(m) for m in scope.worse) or "-",
        ]
        rows.append(row)
        tones.append(_tone(scope.verdict))
    section = doc.section(
        "Verdict per tool",
        render.Table(
            [
                "scope",
                "verdict",
                "passed A",
                "passed B",
                *(f"{registry.label(m)} A -> B (Holm p)" for m in HEADLINE[1:]),
                "better on",
                "worse on",
            ],
            rows,
            tones=tones,
        ),
    )
    forest = [
        (f"{r.scope} {r.label}", r.test.diff, r.test.ci_low, r.test.ci_high, r.verdict)
        for r in c.results
        if r.metric in ("nDCG@10", "pass_rate")
    ]
    if forest:
        section.add(
            render.Figure(
                "compare_deltas",
                plots.deltas(forest, title="Mean difference B - A with 95% bootstrap interval"),
                "Each row: mean of per-scenario differences (B - A) and its bootstrap interval; "
                "colour is the Holm-corrected verdict.",
            )
        )

    doc.section(
        "Every test",
        render.Table(
            [
                "scope",
                "metric",
                "n",
                "A",
                "B",
                "B - A",
                "95% CI",
                "d_z",
                "p (t)",
                "p (perm)",
                "Holm p (t)",
                "Holm p (perm)",
                "verdict",
            ],
            [
                [
                    r.scope,
                    r.label,
                    str(r.test.n),
                    f"{r.test.mean_a:.4f}",
                    f"{r.test.mean_b:.4f}",
                    f"{r.test.diff:+.4f}",
                    "-"
                    if r.test.ci_low is None
                    else f"[{r.test.ci_low:+.4f}, {r.test.ci_high:+.4f}]",
                    "-" if r.test.effect_size is None else f"{r.test.effect_size:+.2f}",
                    p_text(r.test.p_t),
                    p_text(r.test.p_perm),
                    p_text(r.p_t_holm),
                    p_text(r.p_perm_holm),
                    r.verdict,
                ]
                for r in c.results
            ],
            tones=[_tone(r.verdict) for r in c.results],
            note="n: paired scenarios that both runs scored; d_z: mean difference over its standard "
            "deviation (undefined when every scenario moved by the same amount).",
        ),
    )

    latency_section(doc, c)
    if c.calibration is not None:
        calibration_report.compare_section(doc, c.calibration)
    latency_rows = [
        [
            s.scope,
            ms_text(s.a.p50_ms),
            ms_text(s.b.p50_ms),
            _ratio(s.a.p50_ms, s.b.p50_ms),
            ms_text(s.a.p95_ms),
            ms_text(s.b.p95_ms),
            _ratio(s.a.p95_ms, s.b.p95_ms),
        ]
        for s in c.scopes
    ]
    latency = doc.section(
        "Latency (client-measured, per call)",
        render.Table(
            ["scope", "A p50 ms", "B p50 ms", "B/A p50", "A p95 ms", "B p95 ms", "B/A p95"],
            latency_rows,
            note="Informational: the golden runs' calls, concurrent and one run after the other; "
            "latency is judged in the paired section above. '-' when a run has no latency for "
            f"every call. p50/p95: {DEFINITION}.",
        ),
    )
    if c.latency_records:
        latency.add(
            render.Table(
                ["profile", "tool", "A p50 ms", "B p50 ms", "A p95 ms", "B p95 ms", "B/A p95"],
                [
                    [
                        profile,
                        tool,
                        ms_text(ra.p50_ms),
                        ms_text(rb.p50_ms),
                        ms_text(ra.p95_ms),
                        ms_text(rb.p95_ms),
                        _ratio(ra.p95_ms, rb.p95_ms),
                    ]
                    for profile, tool, ra, rb in c.latency_records
                ],
                title="From the latency records of both runs (latency.jsonl)",
            )
        )
    samples: dict[str, list[float]] = {}
    for s in c.scopes:
        if s.scope != OVERALL and s.a.latencies and s.b.latencies:
            samples[f"{s.scope} A"] = list(s.a.latencies)
            samples[f"{s.scope} B"] = list(s.b.latencies)
    if samples:
        latency.add(
            render.Figure(
                "compare_latency",
                plots.latency_distribution(samples, title="Latency per call, A and B"),
            )
        )

    doc.section(
        "Schema violations and errors",
        render.Table(
            ["scope", "schema violations A", "schema violations B", "errors A", "errors B"],
            [
                [
                    s.scope,
                    str(s.a.schema_violations),
                    str(s.b.schema_violations),
                    str(s.a.errors),
                    str(s.b.errors),
                ]
                for s in c.scopes
            ],
            tones=[
                "bad"
                if (s.b.schema_violations > s.a.schema_violations or s.b.errors > s.a.errors)
                else "neutral"
                for s in c.scopes
            ],
        ),
    )

    if c.contract is None:
        doc.section(
            "Contract diff", render.Paragraph("not available (a run log has no tools.json)")
        )
    elif not c.contract:
        doc.section(
            "Contract diff", render.Paragraph("The two tool surfaces are identical.", "good")
        )
    else:
        doc.section(
            "Contract diff",
            render.Table(
                ["JSON pointer", "change", "breaking"],
                [[ch.pointer, ch.describe(), "yes" if ch.breaking else ""] for ch in c.contract],
                tones=["bad" if ch.breaking else "warn" for ch in c.contract],
                note="Pointers into each tool's schema with local $refs resolved, under /<tool>/inputSchema "
                "or /<tool>/outputSchema.",
            ),
        )
    flip_sections(doc, c)
    if c.movers:
        doc.section(
            "Largest per-scenario changes",
            render.Table(
                ["scenario", "tool", "metric", "A", "B", "B - A"],
                [
                    [
                        d.scenario,
                        d.tool,
                        registry.label(d.metric),
                        fmt(d.a),
                        fmt(d.b),
                        f"{d.delta:+.4f}",
                    ]
                    for d in c.movers
                ],
                tones=["good" if d.improvement > 0 else "bad" for d in c.movers],
            ),
        )
    if c.notes:
        doc.section("Notes", render.Bullets(c.notes))
    return doc


def write(c: Comparison, out: Path, latest: Path | None = None) -> dict[str, Path]:
    """Write compare.md / compare.html / compare.json into ``out`` and mirror it to ``latest``."""
    paths = render.write(document(c), out, "compare")
    paths["json"] = out / "compare.json"
    paths["json"].write_text(json.dumps(to_json(c), indent=2) + "\n", encoding="utf-8")
    if latest is not None and latest.resolve() != out.resolve():
        if latest.exists():
            shutil.rmtree(latest)
        latest.mkdir(parents=True)
        for name in ("compare.md", "compare.html", "compare.json"):
            shutil.copy2(out / name, latest / name)
        if (out / "compare_figures").is_dir():
            shutil.copytree(out / "compare_figures", latest / "compare_figures")
    return paths
