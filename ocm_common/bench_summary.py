"""The bench summary: what `make bench` measured and judged, as one typed model.

`load/bench.py` fills it and writes it as the body of the bench's run record
(`bench.record.json`); the bench report (`evals/read/bench_report.py`) and `scale.bench` (which
adds the scale figures) read it. The locust profiles' own summaries and the parallel report are
typed (`profiles`: `LocustResult`, `ParallelResult`, `InProcessResult`, in
ocm_common/profile_results.py), each serialised with exactly the keys its writers set, in their
order, so a summary reads and writes as it always did; the bench's own figures are fields.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from ocm_common.machine import MachineDescription
from ocm_common.profile_results import (
    LocustResult,
    ParallelResult,
    ProfileResult,
    StageFigure,
)
from ocm_common.slo_file import CalibrationJson


class ReferenceReading(TypedDict):
    """One timing of the reference workload (load/calibrate.py): which, the sum of its parts'
    medians and each part's median, in ms."""

    workload: str
    ms: float
    parts: dict[str, float]


class FactorJson(TypedDict):
    """The factor the tight bars were scaled by, with what it came from (load/calibration.py's
    `Factor.to_json`)."""

    value: float
    raw: float | None
    used_ms: float | None
    reference_ms: float | None
    readings_ms: list[float | None]
    note: str


class BarPair(TypedDict):
    """One bar as written in load/slo.yaml and as applied on this machine (an int stays one)."""

    raw: int | float
    calibrated: int | float | None


# {tool: {metric: bar}} for a tight profile; {metric: bar} under "saturation"
ProfileBars = dict[str, dict[str, BarPair]] | dict[str, BarPair]


def per_tool(bars: ProfileBars) -> TypeGuard[dict[str, dict[str, BarPair]]]:
    """A profile's bars by tool (not the saturation's by metric, whose every entry is a bar)."""
    return all("raw" not in entry for entry in bars.values())


class MachineLoad(BaseModel):
    """Cores, load and the reference workload's time at one moment of the bench."""

    model_config = ConfigDict(extra="forbid")

    cores: int | None = None
    load_avg_1m: float | None = None
    load_avg_5m: float | None = None
    reference_ms: float | None = None
    reference: ReferenceReading | None = None


class CalibrationUsed(BaseModel):
    """The factor the tight bars were scaled by, the workload and the committed calibration."""

    model_config = ConfigDict(extra="forbid")

    factor: FactorJson
    workload: str
    reference: CalibrationJson | None = None


class CpuPerCall(BaseModel):
    """The server's CPU per call against the mean of the bench's two reference readings."""

    model_config = ConfigDict(extra="forbid")

    profile: str
    server_cpu_ms: float | None = None
    reference_ms: float | None = None
    ratio: float | None = None
    # records written before the ratio became report-only carried their bar
    max_ratio: float | None = None


# How a bar is judged: `absolute` on any machine (errors, schema, the seeds' ceilings, the parallel
# guarantees, the gate); `calibrated` scaled by the reference workload timed in the same run, with
# a margin set from A/A spread; `reported` shown, never judged here (`make bench BASE=` does).
BarClass = Literal["absolute", "calibrated", "reported"]


class BarVerdict(BaseModel):
    """One row of the bench's verdict: what was judged, how, and how far from its bar."""

    model_config = ConfigDict(extra="forbid")

    name: str
    bar_class: BarClass
    measured: float | None = None
    bar: float | None = None  # as applied (a calibrated bar after scaling)
    raw_bar: float | None = None  # as written in load/slo.yaml
    op: Literal["<=", ">=", ""] = ""
    passed: bool | None = None  # None: reported only
    subject: str = ""  # the worst tool, where the bar is per tool
    # A/A spread of a calibrated bar: the fewest standard deviations between its raw bar and the
    # mean of a machine's A/A readings, and what that came from
    spread_sigmas: float | None = None
    spread: str = ""
    note: str = ""


class ToolLatency(BaseModel):
    """One tool's figures: the latency profile's, with the paced and in-process ones beside."""

    model_config = ConfigDict(extra="forbid")

    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    rps: float | None = None
    errors: int = 0
    paced_p95_ms: float | None = None
    paced_p99_ms: float | None = None
    inprocess_p50_ms: float | None = None
    inprocess_p95_ms: float | None = None
    # the bench judged one of this tool's bars missed (any profile in its row) or saw errors: the
    # verdict made where the figures were measured (load/bench_judge.py); reports only show it
    missed: bool = False


# The suffix of a profile run on the distinct-query mix (`paced-distinct`), beside golden's.
DISTINCT_KIND = "distinct"


class TransportFloor(BaseModel):
    """A bare FastMCP tool returning a constant over the same HTTP stack and workers: the latency
    no tool work can remove."""

    model_config = ConfigDict(extra="forbid")

    profile: str
    workers: int
    calls: int = 0
    errors: int = 0
    p50_ms: float | None = None
    p95_ms: float | None = None


class DistinctCallCpu(BaseModel):
    """Process CPU per distinct call of one tool and kind (free text or none), in process, with
    the same session's reference workload (one query embedding) and the ratio to it."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    kind: str
    calls: int
    median_ms: float
    mean_ms: float
    reference_ms: float
    median_ratio: float | None = None


class BenchSummary(BaseModel):
    """Every figure and verdict of one `make bench`."""

    model_config = ConfigDict(extra="forbid")

    timestamp: str
    machine: MachineDescription = Field(default_factory=MachineDescription)
    machine_at_start: MachineLoad = Field(default_factory=MachineLoad)
    machine_at_end: MachineLoad | None = None
    server_workers: int = 0
    # {profile: its result}: each locust run's, the parallel guarantees' and the in-process step's
    profiles: dict[str, ProfileResult] = Field(default_factory=dict)
    harness_errors: list[str] = Field(default_factory=list)
    locust_exit_codes: dict[str, int] = Field(default_factory=dict)
    calibration: CalibrationUsed | None = None
    # {profile: {tool: {metric: {raw, calibrated}}}}, and {"saturation": {metric: {...}}}
    bars: dict[str, ProfileBars] = Field(default_factory=dict)
    saturation_rps: float = 0.0
    cpu_per_call: CpuPerCall | None = None
    saturation_rps_by_workers: dict[str, float] = Field(default_factory=dict)
    tools: dict[str, ToolLatency] = Field(default_factory=dict)
    cache_hit_rate: dict[str, float | None] = Field(default_factory=dict)
    # {profile: {tool: {stage: figure}}}: where each tool's time went, from the replies' timers
    stages: dict[str, dict[str, dict[str, StageFigure]]] = Field(default_factory=dict)
    transport_floor: TransportFloor | None = None
    # {"<tool> <kind>": CPU per distinct call} (load/cpu_per_call.py)
    distinct_call_cpu: dict[str, DistinctCallCpu] = Field(default_factory=dict)
    misses: list[str] = Field(default_factory=list)
    # every bar with its class (absolute, calibrated, reported), reading and margin
    verdicts: list[BarVerdict] = Field(default_factory=list)
    slo_pass: bool = False
    gate_pass: bool = False
    exit_codes: dict[str, int] = Field(default_factory=dict)
    elapsed_s: float = 0.0
    exit_code: int = 2
    # added by `make bench SCALE=` (scale/bench.py): {factor: {tool: {p50_ms, p95_ms}}}
    scale: dict[str, dict[str, dict[str, float]]] | None = None

    def locust_runs(self) -> dict[str, LocustResult]:
        """The locust profiles' results, by profile (every run: golden, distinct, per workers)."""
        return {name: run for name, run in self.profiles.items() if isinstance(run, LocustResult)}

    def locust_run(self, name: str) -> LocustResult | None:
        run = self.profiles.get(name)
        return run if isinstance(run, LocustResult) else None

    def parallel_run(self) -> ParallelResult | None:
        """The parallel guarantees' result, or None when the profile did not run."""
        run = self.profiles.get("parallel")
        return run if isinstance(run, ParallelResult) else None

    def bar(self, profile: str, tool: str, metric: str) -> BarPair | None:
        """{raw, calibrated} of one bar, or None when the profile has no such bar."""
        table = self.bars.get(profile)
        if table is None or not per_tool(table):
            return None
        return (table.get(tool) or {}).get(metric)
