"""The bench report: ``reports/bench/<ts>/summary.json`` (and the locust CSVs and latency
records beside it) through the shared renderer, as ``bench.md`` + ``bench.html``.

Reads files only. Shows the SLO and gate verdicts with every miss, per-tool p50/p95/p99,
calls/s and errors against the targets (raw and calibrated to the bench's machine, with the
factor and the machine, when the summary has them), latency records per profile, saturation,
and throughput and p95 over time from locust's ``*_stats_history.csv``. A ``make bench BASE=``
summary (``kind: regression``) shows its per-tool ratios against the base instead.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evals import render
from evals.read import plots, slo
from ocm_common.percentiles import DEFINITION
from reference_server.machine import one_line

SUMMARY = "summary.json"
RECORDS = "latency.jsonl"


class BenchReportError(RuntimeError):
    """A bench directory without a readable summary."""


def _num(value: Any, digits: int = 1) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) else "-"


def read_summary(directory: Path) -> dict[str, Any]:
    path = directory / SUMMARY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchReportError(f"{path}: missing (is {directory} a bench directory?)") from None
    except json.JSONDecodeError as exc:
        raise BenchReportError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BenchReportError(f"{path}: expected an object")
    return data


def read_records(directory: Path) -> list[dict[str, Any]]:
    """Latency records (one JSON object a line: profile, tool, n, p50_ms, p95_ms, ...)."""
    path = directory / RECORDS
    if not path.is_file():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def history(path: Path) -> tuple[list[float], list[float], list[float]]:
    """Seconds since start, aggregated calls/s and aggregated p95 from a locust history CSV."""
    times: list[float] = []
    rps: list[float] = []
    p95: list[float] = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row.get("Name") != "Aggregated":
                continue
            try:
                stamp = float(row["Timestamp"])
                rate = float(row.get("Requests/s") or 0.0)
                p = row.get("95%") or "0"
                high = float(p) if p not in ("N/A", "") else float("nan")
            except (KeyError, ValueError):
                continue
            times.append(stamp)
            rps.append(rate)
            p95.append(high)
    start = times[0] if times else 0.0
    return [t - start for t in times], rps, p95


def _profile_name(path: Path, directory: Path) -> str:
    """``latency`` for ``<dir>/latency_stats_history.csv``, ``sub/x`` one folder down."""
    return str(path.relative_to(directory)).removesuffix("_stats_history.csv")


def _machine_line(machine: Mapping[str, Any]) -> str:
    return f"machine: {one_line(dict(machine))}"


def _calibration(summary: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(a paragraph on the factor, the per-profile bar table) when the bench was calibrated."""
    cal = summary.get("calibration") or {}
    factor = cal.get("factor") or {}
    if not factor:
        return None
    ref = cal.get("reference") or {}
    text = (
        f"Tight bars scaled by {factor.get('value')} ({factor.get('note')}); reference workload "
        f"{cal.get('workload')}, calibrated at {ref.get('reference_ms', '-')} ms on "
        f"{ref.get('cpu_model') or '?'}. Spec ceilings, errors and the parallel guarantees are "
        "never scaled."
    )
    return text, summary.get("bars") or {}


def _bar_cell(bars: Mapping[str, Any], profile: str, tool: str, metric: str) -> str:
    bar = ((bars.get(profile) or {}).get(tool) or {}).get(metric)
    return f"{_num(bar['raw'], 0)} -> {_num(bar['calibrated'])}" if bar else "-"


def regression_document(directory: Path, summary: Mapping[str, Any]) -> render.Document:
    """``make bench BASE=``: per tool working / base ratios with intervals, the verdict; the
    same per concurrency condition (each judged with its own margin)."""
    doc = render.Document("Bench against a base revision", meta=[f"bench directory: {directory}"])
    doc.meta.append(f"base: {summary.get('base_rev')} ({str(summary.get('base_sha', ''))[:12]})")
    if summary.get("machine"):
        doc.meta.append(_machine_line(summary["machine"]))
    reg = summary.get("regression") or {}
    slower = reg.get("slower") or []
    conditions = summary.get("conditions") or {}
    under = summary.get("slower_under_conditions") or []
    hard = summary.get("hard_failures") or []
    doc.verdict = render.Paragraph(
        (f"slower than base: {', '.join(slower)}" if slower else "no tool slower than base")
        + (f"; slower under a condition: {', '.join(under)}" if under else "")
        + (f"; {len(hard)} hard failure(s)" if hard else "")
        + f"; exit {summary.get('exit_code')}",
        "bad" if slower or hard or under else "good",
    )
    doc.section("Working tree / base, per tool", _ratio_table(reg, "one call at a time"))
    for name, c in conditions.items():
        doc.section(
            f"Under {name}: {c.get('title')}", _ratio_table(c.get("regression") or {}, name)
        )
    problems = (
        [f"working tree: {x}" for x in hard]
        + [
            f"under {name}, {side} (not judged): {e}"
            for name, c in conditions.items()
            for side, errs in (c.get("problems") or {}).items()
            for e in errs[:10]
        ]
        + [f"harness: {e}" for e in summary.get("harness_errors") or []]
    )
    if problems:
        doc.section("What failed", render.Bullets(problems))
    return doc


def _ratio_table(reg: Mapping[str, Any], condition: str) -> render.Table:
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
        f"lower bound > {1 + float(reg.get('margin', 0.1)):g}",
    )


def document(directory: Path) -> render.Document:
    summary = read_summary(directory)
    if summary.get("kind") == "regression":
        return regression_document(directory, summary)
    doc = render.Document("Bench report", meta=[f"bench directory: {directory}"])
    if summary.get("machine"):
        doc.meta.append(_machine_line(summary["machine"]))
    calibration = _calibration(summary)
    for key in ("started_at", "server_workers", "elapsed_s"):
        if key in summary:
            doc.meta.append(f"{key.replace('_', ' ')}: {summary[key]}")
    slo_ok, gate_ok = summary.get("slo_pass"), summary.get("gate_pass")
    ok = bool(slo_ok) and bool(gate_ok)
    doc.verdict = render.Paragraph(
        f"SLO {'pass' if slo_ok else 'FAIL'}; eval gate {'pass' if gate_ok else 'FAIL'}"
        + (
            f"; saturation {summary['saturation_rps']:.0f} calls/s"
            if isinstance(summary.get("saturation_rps"), int | float)
            else ""
        ),
        "good" if ok else "bad",
    )
    misses = [str(m) for m in summary.get("misses") or []]
    errors = [str(m) for m in summary.get("harness_errors") or []]
    if misses or errors:
        doc.section("What missed", render.Bullets(misses + [f"harness: {e}" for e in errors]))

    if calibration:
        doc.section("Calibration", render.Paragraph(calibration[0]))
    bars: Mapping[str, Any] = calibration[1] if calibration else {}

    tools: Mapping[str, Mapping[str, Any]] = summary.get("tools") or {}
    if tools:
        targets = {t: slo.targets_for(t, "latency") for t in tools}
        for t in tools:  # the bench's own (calibrated) bars when it recorded them
            own = (bars.get("latency") or {}).get(t) or {}
            if own:
                targets[t] = (
                    (own.get("p50_ms") or {}).get("calibrated", targets[t][0]),
                    (own.get("p95_ms") or {}).get("calibrated", targets[t][1]),
                )
        rows, tones = [], []
        for tool, values in tools.items():
            target = targets[tool]
            missed = any(
                isinstance(values.get(k), int | float) and bound is not None and values[k] > bound
                for k, bound in (("p50_ms", target[0]), ("p95_ms", target[1]))
            ) or bool(values.get("errors"))
            tones.append("bad" if missed else "neutral")
            rows.append(
                [
                    tool,
                    _num(values.get("p50_ms")),
                    _num(values.get("p95_ms")),
                    _num(values.get("p99_ms")),
                    f"{_bar_cell(bars, 'latency', tool, 'p50_ms')} / "
                    f"{_bar_cell(bars, 'latency', tool, 'p95_ms')}"
                    if bars
                    else f"{_num(target[0], 0)} / {_num(target[1], 0)}",
                    _num(values.get("rps")),
                    str(values.get("errors", "-")),
                    _num(values.get("paced_p95_ms")),
                    _bar_cell(bars, "paced", tool, "p95_ms"),
                    _num(values.get("inprocess_p50_ms")),
                    _num(values.get("inprocess_p95_ms")),
                    f"{_bar_cell(bars, 'inprocess', tool, 'p50_ms')} / "
                    f"{_bar_cell(bars, 'inprocess', tool, 'p95_ms')}",
                ]
            )
        section = doc.section(
            "Per tool (latency profile)",
            render.Table(
                [
                    "tool",
                    "p50 ms",
                    "p95 ms",
                    "p99 ms",
                    "target p50 / p95 (raw -> calibrated)",
                    "calls/s",
                    "errors",
                    "paced p95 ms",
                    "paced bar",
                    "in-process p50 ms",
                    "in-process p95 ms",
                    "in-process bars",
                ],
                rows,
                tones=tones,  # type: ignore[arg-type]
                note=f"{slo.source('latency')}; p50/p95/p99: {DEFINITION}",
            ),
        )
        percentiles = {
            t: {
                k: float(v[k])
                for k in ("p50_ms", "p95_ms", "p99_ms")
                if isinstance(v.get(k), int | float)
            }
            for t, v in tools.items()
        }
        section.add(
            render.Figure(
                "latency_per_tool",
                plots.percentile_bars(
                    percentiles, title="Latency per tool, latency profile", targets=targets
                ),
                "p50/p95/p99 per tool over HTTP; the red line is the tool's p95 target.",
            )
        )

    records = read_records(directory)
    if records:
        doc.section(
            "Latency records",
            render.Table(
                [
                    "profile",
                    "tool",
                    "source",
                    "n",
                    "p50 ms",
                    "p95 ms",
                    "p99 ms",
                    "calls/s",
                    "errors",
                ],
                [
                    [
                        str(r.get("profile")),
                        str(r.get("tool")),
                        str(r.get("source", "")),
                        str(r.get("n", "")),
                        _num(r.get("p50_ms")),
                        _num(r.get("p95_ms")),
                        _num(r.get("p99_ms")),
                        _num(r.get("rps")),
                        str(r.get("errors", "")),
                    ]
                    for r in records
                ],
            ),
        )

    saturation = summary.get("saturation_rps_by_workers") or {}
    if saturation:
        doc.section(
            "Saturation",
            render.Table(
                ["server workers", "highest sustained calls/s"],
                [[str(k), _num(v)] for k, v in saturation.items()],
            ),
        )

    histories = sorted(directory.rglob("*_stats_history.csv"))
    series = {}
    p95_series = {}
    for path in histories:
        times, rps, p95 = history(path)
        if times:
            series[_profile_name(path, directory)] = (times, rps)
            p95_series[_profile_name(path, directory)] = (times, p95)
    if series:
        doc.section(
            "Load over time",
            render.Figure(
                "throughput",
                plots.time_series(
                    series, title="Throughput over time (all tools)", ylabel="calls/s"
                ),
                "Aggregated calls per second as locust recorded them, one line per load run.",
            ),
            render.Figure(
                "p95_over_time",
                plots.time_series(
                    p95_series, title="p95 latency over time (all tools)", ylabel="ms"
                ),
            ),
        )
    profiles = summary.get("profiles") or {}
    scalar_rows = [
        [name, key, json.dumps(value) if not isinstance(value, str) else value]
        for name, values in profiles.items()
        if isinstance(values, dict)
        for key, value in _scalars(values)
    ]
    if scalar_rows:
        doc.section("Profiles", render.Table(["profile", "measure", "value"], scalar_rows))
    return doc


def _scalars(values: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A profile's scalar measures, one level of nesting flattened (`machine_cpu.steal`)."""
    out: list[tuple[str, Any]] = []
    for key, value in values.items():
        if isinstance(value, int | float | str | bool):
            out.append((prefix + key, value))
        elif isinstance(value, dict) and not prefix:
            out += _scalars(value, f"{key}.")
    return out


def write(directory: Path) -> dict[str, Path]:
    """Render ``directory``'s bench results to ``bench.md`` and ``bench.html`` beside them."""
    return render.write(document(directory), directory, "bench")
