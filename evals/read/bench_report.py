"""The bench report: a ``bench`` run record (``reports/bench/<ts>/bench.record.json``, the
typed :class:`BenchSummary`) and the locust CSVs and latency records beside it, through the shared
renderer as ``bench.md`` + ``bench.html``: the one rendering of a bench.

Reads files only. Shows the SLO and gate verdicts with every miss, the machine, the reference
workload's readings and the factor the tight bars were scaled by (and whether this machine's
kernels differ from the calibration machine's), per-tool p50/p95/p99, calls/s and errors against
the targets (raw -> calibrated), latency records per profile, saturation per worker count,
cache hit rates, server CPU per call and steal per profile, where each tool's time goes (the
server's stage timers per profile, tools x stages) beside the transport floor, the parallel guarantees, and
throughput and p95 over time from locust's ``*_stats_history.csv``. A ``make bench BASE=``
record (kind ``regression``) is rendered by :mod:`evals.read.regression_report`.
"""

from __future__ import annotations

import json
from pathlib import Path

from evals import render
from evals.read import regression_report
from evals.read.bench_runs import history_section, mix_section, records_section
from evals.read.bench_sections import (
    calibration_lines,
    distinct_cpu_section,
    num,
    stage_section,
    throughput_lines,
    tool_section,
    verdict_section,
)
from ocm_common.bench_summary import BenchSummary
from ocm_common.json_types import JsonObject
from ocm_common.latency_records import RECORDS_FILE, LatencyRecord, read_records
from ocm_common.run_record import RunRecord, RunRecordError, locate, read_record


class BenchReportError(RuntimeError):
    """A bench directory without a readable bench record."""


def read_bench(directory: Path) -> RunRecord:
    """The directory's bench (or regression) record."""
    try:
        record = read_record(locate(directory))
    except RunRecordError as exc:
        raise BenchReportError(str(exc)) from None
    if record.kind not in ("bench", "regression"):
        raise BenchReportError(f"{directory}: a {record.kind} record, not a bench")
    return record


def latency_records(directory: Path) -> list[LatencyRecord]:
    path = directory / RECORDS_FILE
    return read_records(path) if path.is_file() else []


def bench_document(directory: Path, record: RunRecord) -> render.Document:
    """Every figure and verdict of one bench record."""
    summary = BenchSummary.model_validate(record.body)
    doc = render.Document(f"Bench {summary.timestamp}", meta=[f"bench directory: {directory}"])
    doc.meta.append(
        f"{summary.server_workers} server workers; {summary.elapsed_s:.0f} s; commit "
        f"{(record.header.commit or '?')[:12]}{' (dirty)' if record.header.dirty else ''}"
    )
    doc.verdict = render.Paragraph(
        f"SLO {'PASS' if summary.slo_pass else 'MISS'}, gate "
        f"{'PASS' if summary.gate_pass else 'MISS'}; saturation "
        f"{summary.saturation_rps:.0f} calls/s; exit {summary.exit_code}",
        "good" if summary.slo_pass and summary.gate_pass else "bad",
    )
    if summary.misses or summary.harness_errors:
        doc.section(
            "What missed",
            render.Bullets(summary.misses + [f"harness: {e}" for e in summary.harness_errors]),
        )
    verdict_section(doc, summary)
    doc.section(
        "Machine and calibration",
        *[render.Paragraph(text) for text in calibration_lines(summary)],
    )
    if summary.tools:
        tool_section(doc, summary)
    mix_section(doc, summary)
    if summary.stages or summary.transport_floor:
        stage_section(doc, summary)
    distinct_cpu_section(doc, summary)
    records = latency_records(directory)
    if records:
        records_section(doc, records)
    doc.section(
        "Saturation and cost",
        render.Bullets(throughput_lines(summary)),
        render.Table(
            ["server workers", "highest sustained calls/s"],
            [[str(k), num(v)] for k, v in summary.saturation_rps_by_workers.items()],
        ),
    )
    parallel = summary.parallel_run()
    findings = parallel.findings if parallel else []
    if findings:
        doc.section(
            "Parallel guarantees",
            render.Table(
                ["parallel check", "subject", "held", "detail"],
                [
                    [f"({f.check})", f.subject, "yes" if f.passed else "NO", f.detail]
                    for f in findings
                ],
                tones=["neutral" if f.passed else "bad" for f in findings],
            ),
        )
    history_section(doc, directory)
    scalar_rows = [
        [name, key, json.dumps(value) if not isinstance(value, str) else value]
        for name, result in summary.profiles.items()
        for key, value in _scalars(result.model_dump(mode="json"))
    ]
    if scalar_rows:
        doc.section("Profiles", render.Table(["profile", "measure", "value"], scalar_rows))
    return doc


def document(directory: Path) -> render.Document:
    """The report of a bench directory's record: a bench, or a ``make bench BASE=`` verdict."""
    record = read_bench(directory)
    if record.kind == "regression":
        return regression_report.document(directory, record)
    return bench_document(directory, record)


def _scalars(values: JsonObject, prefix: str = "") -> list[tuple[str, int | float | str]]:
    """A profile's scalar measures, one level of nesting flattened (`machine_cpu.steal`)."""
    out: list[tuple[str, int | float | str]] = []
    for key, value in values.items():
        if isinstance(value, int | float | str | bool):
            out.append((prefix + key, value))
        elif isinstance(value, dict) and not prefix:
            out += _scalars(value, f"{key}.")
    return out


def write(directory: Path) -> dict[str, Path]:
    """Render ``directory``'s bench results to ``bench.md`` and ``bench.html`` beside them."""
    return render.write(document(directory), directory, "bench")
