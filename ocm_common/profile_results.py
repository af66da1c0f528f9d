"""Each bench profile's own result, as its writers serialise it: a locust run's summary (written
by locust at its exit, added to by load/run.py and the bench), the parallel guarantees' result
and the in-process step's, told apart by their keys (`ProfileResult`). Every part is serialised
with exactly the keys that were set, in field order (`AsWritten`), so a summary reads and
writes as it always did. `BenchSummary` (ocm_common/bench_summary.py) holds them by profile."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
)


class StageFigure(BaseModel):
    """One tool's one stage over a run: the server's timer (or, for `mcp_http`, the client's
    latency less the server's handler time), in ms."""

    model_config = ConfigDict(extra="forbid")

    n: int
    median_ms: float
    p95_ms: float
    mean_ms: float


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
