"""The SLO file (`load/slo.yaml`) and its verdicts: which tool missed which bar, by how much.

Every run that measures latency ends with `miss_table` and exits non-zero if anything missed.
`python -m load slo --records latency.jsonl` checks recorded statistics after the fact.

Two kinds of bar: the hard ones (errors, the spec ceilings, the parallel guarantees) hold on
any machine; the tight ones (the `profiles` bars) were set on the machine `calibration:` names
and a bench restates them for its own machine with `Slo.scaled` (see `load/calibration.py`).
`LOAD_SLO_FILE` names another SLO file for a process the bench starts (the in-process
benchmark gets the hard bars only and the bench judges the tight ones after it).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from load.calibration import Calibration
from load.records import LatencyRecord

SLO_FILE = Path(__file__).with_name("slo.yaml")
SLO_FILE_ENV = "LOAD_SLO_FILE"
LATENCY_METRICS = ("p50_ms", "p95_ms", "p99_ms")
# tight latency bars (scaled by the factor) and throughput floors (divided by it)
SCALED_LATENCY = (*LATENCY_METRICS, "step_p95_ms")
SCALED_RATE = ("min_rps",)


class Ceiling(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: str
    p50_ms: float
    p95_ms: float


class SaturationSlo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_rps: float = 200.0
    step_p95_ms: float = 250.0


class ParallelSlo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    delay_ms: float = 100.0
    delay_factor_max: float = 1.5
    fanout_slack_ms: float = 10.0
    lag_slack_ms: float = 50.0
    known_gaps: dict[str, str] = Field(default_factory=dict)


class CpuPerCallSlo(BaseModel):
    """The server's CPU per call in one profile, as a multiple of the reference workload timed
    in the same run. A slower machine slows both, so the ratio stays; a server that does more
    work per call moves it, whatever the machine (latency bars, even calibrated, carry the
    machine's noise: a queue, a neighbour's burst)."""

    model_config = ConfigDict(extra="forbid")

    profile: str = "latency"
    max_reference_ratio: float


class Slo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec_ceilings: list[Ceiling] = Field(default_factory=list)
    profiles: dict[str, dict[str, float]] = Field(default_factory=dict)
    max_errors: int = 0
    parallel: ParallelSlo = Field(default_factory=ParallelSlo)
    per_tool: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    calibration: Calibration | None = None
    cpu_per_call: CpuPerCallSlo | None = None

    def scaled(self, factor: float) -> Slo:
        """The same SLO with every tight bar restated for a machine `factor` times slower:
        latency bars x factor, throughput floors / factor. Spec ceilings, errors and the
        parallel guarantees are the contract and stay as they are."""

        def scale(bars: dict[str, float]) -> dict[str, float]:
            return {
                metric: round(
                    bound * factor
                    if metric in SCALED_LATENCY
                    else bound / factor
                    if metric in SCALED_RATE
                    else bound,
                    3,
                )
                for metric, bound in bars.items()
            }

        return self.model_copy(
            update={
                "profiles": {name: scale(bars) for name, bars in self.profiles.items()},
                "per_tool": {
                    tool: {name: scale(bars) for name, bars in by_profile.items()}
                    for tool, by_profile in self.per_tool.items()
                },
            }
        )

    def hard_only(self) -> Slo:
        """Only what holds on any machine: spec ceilings, errors, the parallel guarantees."""
        return self.model_copy(update={"profiles": {}, "per_tool": {}})

    @property
    def saturation(self) -> SaturationSlo:
        return SaturationSlo.model_validate(self.profiles.get("saturation", {}))

    def ceiling(self, tool: str) -> dict[str, float]:
        for c in self.spec_ceilings:
            if fnmatch.fnmatchcase(tool, c.tools):
                return {"p50_ms": c.p50_ms, "p95_ms": c.p95_ms}
        return {}

    def bars(self, profile: str, tool: str) -> dict[str, float]:
        """Latency bars for one tool in one profile: the tighter of our bar and the spec's.

        Saturation deliberately overloads the server, so its bar is throughput, not latency.
        """
        if profile == "saturation":
            return {}
        bars = dict(self.ceiling(tool))
        own = {**self.profiles.get(profile, {}), **self.per_tool.get(tool, {}).get(profile, {})}
        for metric, bound in own.items():
            if metric in LATENCY_METRICS:
                bars[metric] = min(bound, bars.get(metric, bound))
        return bars


def load_slo(path: Path | None = None) -> Slo:
    """`path`, else `$LOAD_SLO_FILE`, else `load/slo.yaml`."""
    path = path or Path(os.environ.get(SLO_FILE_ENV) or SLO_FILE)
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return Slo.model_validate(raw)


def write_slo(slo: Slo, path: Path) -> Path:
    """An SLO file another process (locust, pytest) reads with `load_slo(path)`."""
    path.write_text(
        yaml.safe_dump(slo.model_dump(mode="json", exclude_none=True), sort_keys=False),
        encoding="utf-8",
    )
    return path


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


def evaluate_cpu_per_call(
    cpu_ms_per_call: float | None, reference_ms: float | None, slo: Slo
) -> tuple[float | None, list[Miss]]:
    """(ratio, misses): the server's CPU per call over the reference workload's time. Without
    either reading there is no ratio, and that is a miss too: the check could not run."""
    bar = slo.cpu_per_call
    if bar is None:
        return None, []
    if not cpu_ms_per_call or not reference_ms:
        return None, [Miss(bar.profile, "server", "cpu_per_call_ratio", float("nan"), 0.0)]
    ratio = round(cpu_ms_per_call / reference_ms, 3)
    if ratio <= bar.max_reference_ratio:
        return ratio, []
    return ratio, [
        Miss(bar.profile, "server", "cpu_per_call_ratio", ratio, bar.max_reference_ratio)
    ]


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
