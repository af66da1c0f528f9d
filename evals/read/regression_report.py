"""The report of `make bench BASE=<rev>`: a ``regression`` run record through the shared
renderer, as ``bench.md`` + ``bench.html`` beside it (the one rendering of that verdict).

Per tool working / base ratios (p50, p95, paired) with their intervals and the verdict, the same
per concurrency condition (each judged with its own margin, with the settings both sides ran
with), the paired saturation runs when the record has them (calls/s per run, working / base per
pair; reported, not judged), and whatever failed: hard failures of the working tree, base errors and errors under the
conditions (not judged), harness errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals import render
from ocm_common.machine import one_line
from ocm_common.run_record import (
    REGRESSION_SATURATION_VERSION,
    RunRecord,
    RunRecordError,
    versioned_section,
)

MARGIN = 0.1  # the plain verdict's margin when a record does not state it (load/regression.py)


def document(directory: Path, record: RunRecord) -> render.Document:
    """Ratios per tool and per condition, the verdict, and what failed."""
    summary = record.body
    reg = summary.get("regression") or {}
    margin = float(reg.get("margin", MARGIN))
    doc = render.Document("Bench against a base revision", meta=[f"bench directory: {directory}"])
    doc.meta.append(f"base: {summary.get('base_rev')} ({str(summary.get('base_sha', ''))[:12]})")
    if summary.get("machine"):
        doc.meta.append(f"machine: {one_line(dict(summary['machine']))}")
    cache = summary.get("cache_hit_rate") or {}
    doc.meta.append(
        f"task mix: {summary.get('mix', 'golden')}; server query-embedding cache hit rate: "
        + (
            ", ".join(f"{side} {_rate(rate)}" for side, rate in cache.items())
            if cache
            else "not recorded"
        )
    )
    doc.meta.append(
        f"{summary.get('rounds')} interleaved calls per tool and side; "
        f"{float(summary.get('elapsed_s') or 0):.0f} s; CPU during the calls: "
        f"{summary.get('machine_cpu')}"
    )
    slower = reg.get("slower") or []
    conditions: Mapping[str, Any] = summary.get("conditions") or {}
    under = summary.get("slower_under_conditions") or []
    hard = summary.get("hard_failures") or []
    doc.verdict = render.Paragraph(
        (f"slower than base: {', '.join(slower)}" if slower else "no tool slower than base")
        + (f"; slower under a condition: {', '.join(under)}" if under else "")
        + (f"; {len(hard)} hard failure(s)" if hard else "")
        + f"; exit {summary.get('exit_code')}",
        "bad" if slower or hard or under else "good",
    )
    doc.section(
        "Working tree / base, per tool",
        render.Paragraph(
            f"Ratios are working / base; {reg.get('bootstrap', '')}, "
            f"{float(reg.get('confidence', 0.95)):.0%} intervals. A tool is slower when a lower "
            f"bound is above {1 + margin:g}: "
            + (
                f"slower than base by more than {margin:.0%}: {', '.join(slower)}."
                if slower
                else f"no tool slower than base by more than {margin:.0%}."
            )
        ),
        ratio_table(reg, "one call at a time"),
    )
    try:
        saturation = versioned_section(summary, "saturation", REGRESSION_SATURATION_VERSION)
    except RunRecordError as exc:
        doc.section("Saturation, one side at a time", render.Paragraph(str(exc), "bad"))
    else:
        if saturation:
            doc.section("Saturation, one side at a time", *saturation_blocks(saturation))
    if conditions:
        doc.section(
            "Under the concurrency conditions",
            render.Paragraph(
                f"{summary.get('condition_rounds')} pairs per tool and condition, interleaved; "
                "the condition's settings on both servers. p50 and paired ratios only; a tool is "
                "slower when a lower bound is above 1 + the condition's margin."
            ),
        )
    for name, c in conditions.items():
        creg = c.get("regression") or {}
        flagged = creg.get("slower") or []
        doc.section(
            f"Under {name}: {c.get('title')} (margin {float(creg.get('margin', 0)):.0%})",
            render.Paragraph(
                f"Settings on both sides: {c.get('env') or 'none'}; CPU: {c.get('machine_cpu')}"
                + (f"; context: {c['measurements']}" if c.get("measurements") else "")
                + ". "
                + (
                    f"Slower under {name}: {', '.join(flagged)}."
                    if flagged
                    else f"None slower under {name}."
                )
            ),
            ratio_table(creg, name),
        )
    problems = (
        [f"working tree: {x}" for x in hard]
        + [f"base (not judged): {x}" for x in summary.get("base_problems") or []]
        + [
            f"under {name}, {side} (not judged): {e}"
            for name, c in conditions.items()
            for side, errs in (c.get("problems") or {}).items()
            for e in errs[:10]
        ]
        + [f"harness: {e}" for e in summary.get("harness_errors") or []]
    )
    if problems:
        doc.section("What failed", render.Bullets(problems[:200]))
    return doc


def ratio_table(reg: Mapping[str, Any], condition: str) -> render.Table:
    """One verdict's rows: p50, p95 and paired ratios with intervals ('-' where not computed)."""
    rows, tones = [], []
    for tool, t in (reg.get("tools") or {}).items():
        cells = []
        for name in ("p50", "p95", "paired"):
            r = (t.get("ratios") or {}).get(name)
            cells += (
                [
                    f"{r['working_ms']:.1f} / {r['base_ms']:.1f}",
                    f"{r['ratio']:.3f}",
                    f"[{r['low']:.3f}, {r['high']:.3f}]",
                ]
                if r
                else ["-", "-", "-"]
            )
        verdict = "SLOWER" if t.get("slower") else (t.get("note") or "ok")
        rows.append([tool, str(t.get("pairs")), *cells, verdict])
        tones.append("bad" if t.get("slower") else "neutral")
    return render.Table(
        [
            "tool",
            "pairs",
            "p50 w / b ms",
            "p50 ratio",
            "95 % CI",
            "p95 w / b ms",
            "p95 ratio",
            "95 % CI",
            "paired: medians w / b ms",
            "paired ratio",
            "95 % CI",
            "verdict",
        ],
        rows,
        tones=tones,  # type: ignore[arg-type]
        note=f"{condition}; {reg.get('bootstrap')}; percentiles by {reg.get('percentile')}; "
        "paired: the median over pairs of working call / its base call; slower when a "
        f"lower bound > {1 + float(reg.get('margin', MARGIN)):g}",
    )


def _rate(rate: Any) -> str:
    return "not stated" if rate is None else f"{float(rate):.1%}"


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f}"


def _steps(steps: list[Mapping[str, Any]]) -> str:
    """Each load step as `users: calls/s (worst p95)`, an unsustained one marked."""
    return "; ".join(
        f"{s.get('users')}: {float(s.get('rps') or 0):.1f} ({float(s.get('worst_p95_ms') or 0):.0f})"
        + ("" if s.get("sustained") else " not sustained")
        for s in steps
    )


def saturation_blocks(section: Mapping[str, Any]) -> list[render.Block]:
    """The paired saturation runs: what ran, the median ratio with its range, each run."""
    runs = section.get("runs") or []
    ratios = section.get("pair_ratios") or []
    text = (
        f"The saturation profile ({section.get('profile')}) on mix {section.get('mix')}, "
        f"{section.get('server_workers')} server workers per side, one side at a time in ABBA "
        f"order ({', '.join(section.get('order') or [])}), a fresh server per run. "
        f"Working / base calls/s per pair: {', '.join(_ratio(r) for r in ratios) or 'none'}"
    )
    if section.get("median_ratio") is not None:
        text += (
            f"; median {_ratio(section['median_ratio'])} (min {_ratio(section['min_ratio'])}, "
            f"max {_ratio(section['max_ratio'])}) over the "
            f"{sum(r is not None for r in ratios)} of {len(ratios)} pair(s) with a ratio"
        )
    bar = section.get("step_bar") or {}
    if bar:
        text += (
            f". A step is sustained with no errors and every tool's p95 under "
            f"{float(bar.get('step_p95_ms') or 0):g} ms on both sides (load/slo.yaml's bar x "
            f"{bar.get('factor')}: {bar.get('note')})"
        )
    text += (
        f". CPU: {section.get('machine_cpu')}. Reported, not judged: calls/s is the whole "
        "machine's figure, and on a shared machine it is noisy."
    )
    rows = [
        [
            str(n),
            str(int(r.get("pair", 0)) + 1),
            str(r.get("side")),
            f"{float(r.get('calls_per_s') or 0):.2f}",
            str(r.get("calls")),
            str(r.get("errors")),
            _rate(r.get("cache_hit_rate")),
            _steps(r.get("steps") or []),
            str(r.get("exit_code")),
            str(r.get("out_dir")),
        ]
        for n, r in enumerate(runs, start=1)
    ]
    tones = ["bad" if r.get("errors") or not r.get("calls_per_s") else "neutral" for r in runs]
    return [
        render.Paragraph(text),
        render.Table(
            [
                "run",
                "pair",
                "side",
                "calls/s sustained",
                "calls",
                "errors",
                "cache hit rate",
                "steps: users calls/s (worst p95 ms)",
                "locust exit",
                "folder",
            ],
            rows,
            tones=tones,  # type: ignore[arg-type]
            note="calls/s: the highest over the sustained load steps (no errors, every tool's "
            "p95 under the step bar of load/slo.yaml; the last step caps it); locust exit 1 is "
            "a missed SLO bar, not a failed comparison",
        ),
    ]
