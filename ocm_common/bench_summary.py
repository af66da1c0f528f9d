"""The bench summary: what `make bench` measured and judged, as one typed model.

`load/bench.py` fills it and writes it as the body of the bench's run record
(`bench.record.json`); the bench report (`evals/read/bench_report.py`) and `scale.bench` (which
adds the scale figures) read it. The locust profiles' own summaries and the parallel report are
typed (`profiles`: `LocustResult`, `ParallelResult`, `InProcessResult`), each serialised with exactly the
keys its writers set, in their order, so a summary reads and writes as it always did; the bench's
own figures are fields.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeGuard

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
)
from typing_extensions import TypedDict

from ocm_common.machine import MachineDescription
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


class StageFigure(BaseModel):
    """One tool's one stage over a run: the server's timer (or, for `mcp_http`, the client's
    latency less the server's handler time), in ms."""

    model_config = ConfigDict(extra="forbid")

    n: int
    median_ms: float
    p95_ms: float
    mean_ms: float


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


class AsWritten(BaseModel):
    """A part of a profile's result written by several hands (locust, load/run.py, the bench):
    serialised with exactly the keys that were set, in field order (the order they are written
    in), so a summary read and written again keeps its bytes, and older summaries still read."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        kept = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in dumped.items() if key in kept}

    @property
    def is_empty(self) -> bool:
        """Nothing was written (a run that stopped before anything was)."""
        return not self.model_fields_set and not self.model_extra


class ToolFigures(AsWritten):
    """One tool's figures in a locust run's summary (its latency record, less profile, tool and
    source)."""

    n: int | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    rps: float | None = None
    errors: int | None = None


class CallFailure(AsWritten):
    """One of the first 20 kinds of failed call locust saw: its name, error and count."""

    name: str = ""
    error: str = ""
    count: int = 0


class SaturationStep(AsWritten):
    """One step of the saturation shape: users, calls/s, errors, the worst tool's p95 and
    whether the step was sustained (no error, every p95 within the step bar)."""

    users: int = 0
    rps: float = 0.0
    errors: int = 0
    worst_p95_ms: float = 0.0
    worst_tool: str = ""
    sustained: bool = False


class CutShort(AsWritten):
    """A run stopped at a deadline: which, after how long, during what, and what was not done."""

    deadline_s: float | int | None = None
    bound: str = ""
    elapsed_s: float | None = None
    during: str = ""
    not_done: str = ""


class WarmUpSummary(AsWritten):
    """The warm-up before a locust run (load/client.py's `WarmUp`, with the tools it blamed and
    its lines)."""

    calls: int = 0
    failures: dict[str, str] = Field(default_factory=dict)
    hung: list[str] = Field(default_factory=list)
    hung_errors: dict[str, str] = Field(default_factory=dict)
    server_unanswered: str | None = None
    cut_short: bool = False
    cut_during: str | None = None
    not_warmed: list[str] = Field(default_factory=list)
    deadline_s: float | int | None = None
    seconds: float | int | None = None
    blamed: dict[str, str] = Field(default_factory=dict)
    lines: list[str] = Field(default_factory=list)


class LocustResult(AsWritten):
    """A locust profile's result: the summary locust writes at its exit (figures and its own SLO
    verdict with the bars it was given), what load/run.py adds (cut short, warm-up, the call
    deadline, the machine's CPU shares) and the server's CPU the bench measured around it. A
    run cut short before locust wrote its summary has only the keys added after it."""

    profile: str | None = None
    calls: int | None = None
    errors: int | None = None
    rps: float | None = None
    cache_hit_rate: float | None = None
    embed_mean_batch: float | None = None
    # {tool: {stage: figure}} from the replies' timers (load/stage_stats.py)
    stages: dict[str, dict[str, StageFigure]] | None = None
    tools: dict[str, ToolFigures] = Field(default_factory=dict)
    failures: list[CallFailure] = Field(default_factory=list)
    steps: list[SaturationStep] = Field(default_factory=list)
    saturation_rps: float | None = None
    misses: list[str] = Field(default_factory=list)
    slo_pass: bool | None = None
    cut_short: CutShort | None = None
    warm_up: WarmUpSummary | None = None
    call_deadline_s: float | int | None = None
    # {"busy": share, "steal": share} of the machine's CPU time over the run (load/hoststat.py)
    machine_cpu: dict[str, float] | None = None
    server_cpu_s: float | None = None
    server_cpu_ms_per_call: float | None = None

    @property
    def wrote_cache_hit_rate(self) -> bool:
        """Locust wrote the run's cache hit rate (None when the server reported no lookups)."""
        return "cache_hit_rate" in self.model_fields_set


class ParallelFinding(BaseModel):
    """One parallel guarantee checked: (check) subject, held or not, and what was seen."""

    model_config = ConfigDict(extra="forbid")

    check: str
    subject: str
    passed: bool
    detail: str


class DelayPair(AsWritten):
    """(a): one tool's p50 on the healthy twin and with the delay on both paths (None: no call
    answered)."""

    healthy_p50_ms: float | None = None
    delayed_p50_ms: float | None = None


class LagFigures(AsWritten):
    """(d): the cheap call's p50 alone and while slow calls run."""

    alone_p50_ms: float | None = None
    under_slow_load_p50_ms: float | None = None
    slow_users: int | None = None


class ParallelMeasurements(AsWritten):
    """The figures behind the parallel guarantees, as each check adds them."""

    delay: dict[str, DelayPair] | None = None
    lag: LagFigures | None = None
    fanout_gap_ms: float | None = None
    fanout_bar_ms: float | None = None


class ParallelResult(AsWritten):
    """The parallel profile's result (load/parallel.py): the verdict made where the guarantees
    were checked, each finding, and the measurements."""

    passed: bool | None = None
    findings: list[ParallelFinding] = Field(default_factory=list)
    measurements: ParallelMeasurements | None = None


class InProcessResult(AsWritten):
    """The in-process step: the machine's CPU shares over it and the calls that failed."""

    machine_cpu: dict[str, float] | None = None
    tool_errors: int | None = None


def _profile_kind(value: object) -> str:
    """Which result a stored profile is, by the keys only its writer sets."""
    if isinstance(value, BaseModel):
        return {ParallelResult: "parallel", InProcessResult: "inprocess"}.get(type(value), "locust")
    if isinstance(value, dict):
        if "findings" in value or "passed" in value:
            return "parallel"
        if "tool_errors" in value:
            return "inprocess"
    return "locust"


ProfileResult = Annotated[
    Annotated[LocustResult, Tag("locust")]
    | Annotated[ParallelResult, Tag("parallel")]
    | Annotated[InProcessResult, Tag("inprocess")],
    Discriminator(_profile_kind),
]


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
