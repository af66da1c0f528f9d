"""The load run's end, as the locust master (or a lone local runner) sees it: locust's
statistics -> per-tool records (latency.jsonl) and the run's summary (`<profile>.json`), the
SLO misses as a table, and the exit code. The locustfile's `quitting` listener calls it."""

from __future__ import annotations

import json
from pathlib import Path

from locust import LoadTestShape
from locust.stats import RequestStats

from load.cache_counts import CacheCounts
from load.saturation_shape import NON_TOOL_NAMES, SaturationShape, saturation_rps
from load.slo import Miss, evaluate, evaluate_saturation, load_slo, miss_table
from load.stage_stats import StageSamples
from ocm_common.latency_records import RECORDS_FILE, LatencyRecord, write_records
from ocm_common.profile_results import CallFailure, LocustResult, StageFigure, ToolFigures


def run_verdict(
    stats: RequestStats,
    shape: LoadTestShape | None,
    *,
    profile: str,
    slo_file: Path | None,
    out: str | None,
    cache: CacheCounts,
    stage_samples: StageSamples,
) -> int:
    """Per-tool records -> latency.jsonl; SLO misses -> table; the exit code (1 if any missed)."""
    duration = max((stats.last_request_timestamp or 0) - (stats.start_time or 0), 1e-6)
    records = [
        LatencyRecord.from_histogram(
            profile,
            name,
            entry.response_times,
            duration_s=duration,
            errors=entry.num_failures,
        )
        for (name, _method), entry in sorted(stats.entries.items())
        if name not in NON_TOOL_NAMES
    ]
    setup_failures = sum(
        e.num_failures for (n, _m), e in stats.entries.items() if n in NON_TOOL_NAMES
    )
    slo = load_slo(slo_file)
    misses = evaluate(records, slo)
    steps = shape.results if isinstance(shape, SaturationShape) else []
    summary = LocustResult(
        profile=profile,
        calls=sum(r.n for r in records),
        errors=sum(r.errors for r in records) + setup_failures,
        rps=round(sum(r.n for r in records) / duration, 2),
        cache_hit_rate=cache.hit_rate(),
        embed_mean_batch=cache.mean_batch(),
        stages={
            tool: {stage: StageFigure.model_validate(f) for stage, f in stages.items()}
            for tool, stages in stage_samples.summary().items()
        },
        tools={
            r.tool: ToolFigures.model_validate(r.model_dump(exclude={"profile", "tool", "source"}))
            for r in records
        },
        failures=[
            CallFailure(name=e.name, error=str(e.error), count=e.occurrences)
            for e in list(stats.errors.values())[:20]
        ],
    )
    if isinstance(shape, SaturationShape):
        summary.steps = steps
        summary.saturation_rps = saturation_rps(steps)
        misses += evaluate_saturation(summary.saturation_rps, slo)
    if setup_failures:
        misses.append(
            Miss(profile, "initialize/tools/list", "errors", setup_failures, slo.max_errors)
        )
    if not records:
        misses.append(Miss(profile, "all tools", "min_calls", 0, 1))
    summary.misses = [m.text for m in misses]
    summary.slo_pass = not misses
    if out:
        out_dir = Path(out)
        write_records(out_dir / RECORDS_FILE, records)
        written = json.dumps(summary.model_dump(mode="json"), indent=2)
        (out_dir / f"{profile}.json").write_text(written, encoding="utf-8")
    print(
        f"\n{profile}: {summary.calls} calls, {summary.rps} calls/s, "
        f"{summary.errors} errors, server cache hit rate {summary.cache_hit_rate}, "
        f"mean embedding batch {summary.embed_mean_batch}"
    )
    if isinstance(shape, SaturationShape):
        print(f"saturation: highest sustained {summary.saturation_rps} calls/s")
    print(miss_table(misses, title=f"SLO ({profile})"))
    return 1 if misses else 0
