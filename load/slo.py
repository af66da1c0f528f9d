"""The SLO file (`load/slo.yaml`) and its verdicts: which tool missed which bar, by how much.

Every run that measures latency ends with `miss_table` and exits non-zero if anything missed.
`ocm load slo --records latency.jsonl` checks recorded statistics after the fact.

Two kinds of bar: the hard ones (errors, the spec ceilings, the parallel guarantees) hold on
any machine; the tight ones (the `profiles` bars) were set on the machine `calibration:` names
and a bench restates them for its own machine with `Slo.scaled` (see `load/calibration.py`).
`LOAD_SLO_FILE` names another SLO file for a process the bench starts (the in-process
benchmark gets the hard bars only and the bench judges the tight ones after it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ocm_common.latency_records import LatencyRecord
from ocm_common.slo_file import (
    LATENCY_METRICS,
    SLO_FILE,
    SLO_FILE_ENV,
    CpuPerCallSlo,
    Slo,
    load_slo,
    write_slo,
)

__all__ = [
    "LATENCY_METRICS",
    "SLO_FILE",
    "SLO_FILE_ENV",
    "CpuPerCallSlo",
    "Miss",
    "Slo",
    "cpu_reference_ratio",
    "evaluate",
    "evaluate_saturation",
    "load_slo",
    "miss_table",
    "write_slo",
]


@dataclass(frozen=True)
class Miss:
    profile: str
    tool: str
    metric: str
    actual: float
    bound: float

    @property
    def text(self) -> str:
        op = ">=" if self.metric.startswith("min_") else "<="
        return f"{self.profile}: {self.tool} {self.metric} {self.actual:g} (target {op} {self.bound:g})"


def evaluate(records: Iterable[LatencyRecord], slo: Slo | None = None) -> list[Miss]:
    """Every bar a record misses: latency percentiles against its profile's bars, and errors."""
    slo = slo or load_slo()
    misses: list[Miss] = []
    for r in records:
        for metric, bound in slo.bars(r.profile, r.tool).items():
            actual = getattr(r, metric, None)
            if actual is not None and r.n > 0 and actual > bound:
                misses.append(Miss(r.profile, r.tool, metric, actual, bound))
        if r.errors > slo.max_errors:
            misses.append(Miss(r.profile, r.tool, "errors", r.errors, slo.max_errors))
    return misses


def evaluate_saturation(rps: float, slo: Slo | None = None) -> list[Miss]:
    slo = slo or load_slo()
    bound = slo.saturation.min_rps
    return [] if rps >= bound else [Miss("saturation", "all tools", "min_rps", rps, bound)]


def cpu_reference_ratio(cpu_ms_per_call: float | None, reference_ms: float | None) -> float | None:
    """The server's CPU per call over the reference workload's time, or None without either."""
    if not cpu_ms_per_call or not reference_ms:
        return None
    return round(cpu_ms_per_call / reference_ms, 3)


def miss_table(misses: list[Miss], title: str = "SLO") -> str:
    """Plain text: what missed, by how much; one line saying all passed otherwise."""
    if not misses:
        return f"{title}: every target met"
    lines = [
        f"{title}: {len(misses)} miss(es)",
        f"  {'profile':11} {'tool':24} {'metric':9} {'actual':>9} {'target':>9}",
    ]
    for m in misses:
        op = ">=" if m.metric.startswith("min_") else "<="
        lines.append(
            f"  {m.profile:11} {m.tool:24} {m.metric:9} {m.actual:9.1f} {op + format(m.bound, 'g'):>9}"
        )
    return "\n".join(lines)
