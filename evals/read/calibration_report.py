"""The calibration section of the run report and of the compare report: tables and plots of
:mod:`evals.read.calibration` and :mod:`evals.read.calibration_compare` (render only)."""

from __future__ import annotations

from evals import render
from evals.read import plots
from evals.read.calibration import (
    ACT_ON,
    COVERAGES,
    HIGH,
    MIN_PER_BIN,
    N_BINS,
    NO_CONFIDENCE,
    OVERALL,
    Calibration,
    Interval,
    ScopeCalibration,
)
from evals.read.calibration_compare import BETTER, WORSE, CalibrationComparison

TITLE = "Calibration"
SHOWN_COVERAGES = tuple(c for c in COVERAGES if c < 1.0)


def _interval(i: Interval | None, digits: int = 3) -> str:
    if i is None:
        return "-"
    if i.low is None or i.high is None:
        return f"{i.value:.{digits}f}"
    return f"{i.value:.{digits}f} [{i.low:.{digits}f}, {i.high:.{digits}f}]"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _auroc(s: ScopeCalibration) -> str:
    if s.auroc is None:
        return f"- ({s.auroc_note.removeprefix('not measured: ')})" if s.auroc_note else "-"
    return _num(s.auroc) + (f" ({s.auroc_note})" if s.auroc_note else "")


def _row(s: ScopeCalibration) -> list[str]:
    scope = s.scope if s.kind != "family" else f"{s.scope} ({s.tool})"
    if not s.published:
        return [scope, str(s.answers), NO_CONFIDENCE, *["-"] * 8]
    risk = s.risk
    return [
        scope,
        str(s.scored) + (f" (+{s.without_confidence} without)" if s.without_confidence else ""),
        _num(s.accuracy),
        str(len(s.bins)),
        _interval(s.ece),
        _interval(s.brier, 4),
        _auroc(s),
        f"{_num(s.high_accuracy)} ({s.high_n})",
        f"{len(s.acted_wrong)} of {s.acted_n}",
        "-" if risk is None else f"{risk.aurc:.4f} ({risk.aurc_random:.4f} / {risk.aurc_best:.4f})",
        "-" if risk is None else " / ".join(f"{dict(risk.points)[c]:.2f}" for c in SHOWN_COVERAGES),
    ]


def note(c: Calibration) -> str:
    parts = [
        "Answers: main-pass scenarios that are neither harness errors nor expected tool errors "
        "(nor unexpected tool errors); right: every check passed, checks on the confidence itself "
        "(confidence_range) left aside. Confidence: the tool descriptor's confidence path.",
        f"Bins: equal-count (scikit-learn calibration_curve, quantile), {N_BINS}, fewer below "
        f"{MIN_PER_BIN} answers a bin; tied confidences never split. ECE: bins' |accuracy - "
        "confidence| weighted by their answers; Brier: mean (confidence - right)^2; both with "
        "seeded 95 % percentile-bootstrap intervals.",
        f"AUROC of the confidence for right. Accuracy at >= {HIGH}: among answers at that "
        f"confidence (their count). Wrong at >= {ACT_ON}: the answers stated that confidently "
        "that were wrong, of all stated that confidently. AURC: area under the risk-coverage curve (answers kept most "
        "confident first, ties at their mean), beside a confidence ranking at random and a "
        "perfect one; then the accuracy of the most confident 10/25/50/75 %.",
    ]
    aside = c.set_aside
    parts.append(
        f"Set aside: {aside.expect_error} expecting a tool error, {aside.tool_errors} tool "
        f"errors, {aside.harness_errors} harness errors."
    )
    if c.not_published:
        parts.append(f"{NO_CONFIDENCE}: {', '.join(c.not_published)} (not scored, not 0).")
    parts += list(c.notes)
    return " ".join(parts)


def table(c: Calibration) -> render.Table:
    """One row per scope: overall, each tool, each case family (its tool in brackets)."""
    return render.Table(
        [
            "scope",
            "answers",
            "accuracy",
            "bins",
            "ECE [95% CI]",
            "Brier [95% CI]",
            "AUROC",
            f"accuracy at >= {HIGH} (n)",
            f"wrong at >= {ACT_ON}",
            "AURC (random / best)",
            "accuracy, top " + "/".join(f"{c * 100:g}" for c in SHOWN_COVERAGES) + " %",
        ],
        [_row(s) for s in c.scopes],
        TITLE,
        note(c),
    )


def figures(c: Calibration) -> list[render.Figure]:
    """Reliability diagrams (overall and each tool that publishes) and risk-coverage curves."""
    shown = [s for s in c.scopes if s.kind in ("overall", "tool") and s.published]
    if not shown:
        return []
    panels = {s.scope: [(b.confidence, b.accuracy, b.count) for b in s.bins] for s in shown}
    curves = {s.scope: (s.risk.coverage, s.risk.accuracy) for s in shown if s.risk is not None}
    return [
        render.Figure(
            "calibration_reliability",
            plots.reliability(panels, title="Reliability: accuracy against confidence per bin"),
            "Each dot is one equal-count bin (size: its answers); the dashed diagonal is a "
            "perfectly calibrated confidence. A dot below it: the confidence says more than "
            "the answers deliver.",
        ),
        render.Figure(
            "calibration_risk_coverage",
            plots.risk_coverage(
                curves,
                title="Risk-coverage: accuracy of the most confident answers kept",
                highlight=OVERALL,
            ),
            "A confidence that tells right from wrong falls from the left (only the most "
            "confident answers kept) to the overall accuracy at full coverage; a flat line "
            "ranks nothing.",
        ),
    ]


# ----------------------------------------------------------------------------- compare


def verdict_text(c: CalibrationComparison) -> str:
    """The regressions for the compare verdict line ('' when none)."""
    worse = [
        f"{s.scope} Brier {s.brier.mean_a:.4f} -> {s.brier.mean_b:.4f} (Holm p {s.p_holm:.4f})"
        for s in c.regressions
        if s.brier is not None and s.p_holm is not None
    ]
    return "calibration worse: " + "; ".join(worse) if worse else ""


def compare_section(doc: render.Document, c: CalibrationComparison) -> None:
    tone: dict[str, render.Tone] = {WORSE: "bad", BETTER: "good"}
    rows = []
    for s in c.scopes:
        if s.brier is None:
            rows.append([s.scope, "0", f"{s.verdict} ({s.reason})", *["-"] * 5])
            continue
        auroc = s.auroc
        diff = "-"
        if auroc is not None and auroc.diff is not None:
            diff = f"{auroc.diff:+.3f}" + (
                f" [{auroc.low:+.3f}, {auroc.high:+.3f}]"
                if auroc.low is not None and auroc.high is not None
                else ""
            )
        ci = (
            f" [{s.brier.ci_low:+.4f}, {s.brier.ci_high:+.4f}]"
            if s.brier.ci_low is not None and s.brier.ci_high is not None
            else ""
        )
        rows.append(
            [
                s.scope,
                str(s.n),
                s.verdict,
                f"{s.brier.mean_a:.4f} -> {s.brier.mean_b:.4f} ({s.brier.diff:+.4f}{ci})",
                "-" if s.p_holm is None else f"{s.brier.p_perm:.4f} / {s.p_holm:.4f}",
                f"{_num(auroc.a if auroc else None)} -> {_num(auroc.b if auroc else None)}",
                diff + (f" ({auroc.note})" if auroc and auroc.note else ""),
                f"{_num(s.ece_a)} -> {_num(s.ece_b)}",
            ]
        )
    doc.section(
        TITLE,
        render.Table(
            [
                "scope",
                "paired answers",
                "verdict",
                "Brier A -> B (B - A [95% CI])",
                "p / Holm p",
                "AUROC A -> B",
                "AUROC B - A [95% CI]",
                "ECE A -> B",
            ],
            rows,
            tones=[tone.get(s.verdict, "neutral") for s in c.scopes],
            note="Answers paired by scenario id and version, each with a confidence on both "
            "sides (evals/read/calibration.py says what counts). Verdict on the Brier score: "
            "paired randomization test on the per-answer Brier terms, Holm across the scopes, "
            f"at alpha {c.alpha}; calibration worse is a regression (exit 1). AUROC: paired "
            "bootstrap interval of the difference; ECE: equal-count bins, reported.",
        ),
    )
