"""The SLO file (`load/slo.yaml`): every latency target, as one pydantic model.

Load runs judge their records against it (`load/slo.py`), and the harness's reports draw the
same targets (`evals/read/slo.py`); both read it here, so neither imports the other.
`LOAD_SLO_FILE` names another SLO file for a process the bench starts.

Each load profile's own bars live beside its settings, in its entry of `load/profiles.yaml`
(`slo`; `LOAD_PROFILES` names another profiles file): an SLO file that does not name `profiles`
itself takes them from there, read as plain YAML so this package imports nothing of `load`.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

SLO_FILE = Path(__file__).resolve().parent.parent / "load" / "slo.yaml"
SLO_FILE_ENV = "LOAD_SLO_FILE"
PROFILES_FILE = SLO_FILE.with_name("profiles.yaml")
PROFILES_FILE_ENV = "LOAD_PROFILES"
LATENCY_METRICS = ("p50_ms", "p95_ms", "p99_ms")
# tight latency bars (scaled by the factor) and throughput floors (divided by it)
SCALED_LATENCY = (*LATENCY_METRICS, "step_p95_ms")
SCALED_RATE = ("min_rps",)


@with_config(ConfigDict(extra="allow"))
class CalibrationJson(TypedDict, total=False):
    """A `Calibration` as its `model_dump` writes it, in its field order (a stored one may hold an
    older calibration's keys, kept as they are)."""

    workload: str
    reference_ms: float
    parts_ms: dict[str, float]
    cpu_model: str
    flags: dict[str, bool]
    cores: int | None
    onnxruntime: str | None
    embed_model: str | None
    recorded: str
    min_factor: float


class Calibration(BaseModel):
    """Where the tight bars were set: the reference workload's time on that machine."""

    model_config = ConfigDict(extra="forbid")

    workload: str = "embedding"
    reference_ms: float = Field(gt=0)
    parts_ms: dict[str, float] = Field(default_factory=dict)
    cpu_model: str = ""
    flags: dict[str, bool] = Field(default_factory=dict)
    cores: int | None = None
    onnxruntime: str | None = None
    embed_model: str | None = None
    recorded: str = ""
    min_factor: float = Field(default=1.0, gt=0)

    def as_json(self) -> CalibrationJson:
        """This calibration as a bench record stores it (its `model_dump`)."""
        return _CALIBRATION_JSON.validate_python(self.model_dump())


_CALIBRATION_JSON = TypeAdapter(CalibrationJson)


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
    fanout_share_max: float = Field(default=0.5, gt=0, lt=1)
    lag_slack_ms: float = 50.0
    known_gaps: dict[str, str] = Field(default_factory=dict)


class CpuPerCallSlo(BaseModel):
    """The server's CPU per call in one profile, as a multiple of the reference workload timed
    in the same run: reported, never judged on its own. Its expected value depends on which
    kernels the CPU has (VNNI and AMX speed up the embedding several times, the interpreter and
    SQLite not at all), so the ratio rises on exactly the fastest machines; `make bench BASE=`
    judges its regressions, with both sides on one machine."""

    model_config = ConfigDict(extra="forbid")

    profile: str = "latency"


class AaRuns(BaseModel):
    """One machine's A/A benches: the same code benched several times. Per calibrated bar
    (`<profile>.<metric>`), the worst tool's reading in each run restated for the calibration
    machine (latency / the run's factor, calls/s x it)."""

    model_config = ConfigDict(extra="forbid")

    machine: str
    recorded: str
    readings: dict[str, list[float]]


class AaSpread(BaseModel):
    """Run-to-run spread that sets each calibrated bar's margin: a bar must sit at least
    `required_sigmas` standard deviations beyond the mean of every machine's A/A readings, so
    unchanged code does not flip the verdict (tests/load/test_aa_spread.py holds the file to it)."""

    model_config = ConfigDict(extra="forbid")

    required_sigmas: float = Field(default=4.0, gt=0)
    min_runs: int = Field(default=3, ge=2)
    machines: list[AaRuns] = Field(default_factory=list)


class Slo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec_ceilings: list[Ceiling] = Field(default_factory=list)
    profiles: dict[str, dict[str, float]] = Field(default_factory=dict)
    max_errors: int = 0
    parallel: ParallelSlo = Field(default_factory=ParallelSlo)
    per_tool: dict[str, dict[str, dict[str, float]]] = Field(default_factory=dict)
    calibration: Calibration | None = None
    cpu_per_call: CpuPerCallSlo | None = None
    aa_spread: AaSpread | None = None

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
        if profile.split("-", 1)[0] == "saturation":  # also on another mix (saturation-distinct)
            return {}
        bars = dict(self.ceiling(tool))
        own = {**self.profiles.get(profile, {}), **self.per_tool.get(tool, {}).get(profile, {})}
        for metric, bound in own.items():
            if metric in LATENCY_METRICS:
                bars[metric] = min(bound, bars.get(metric, bound))
        return bars


def load_slo(path: Path | None = None) -> Slo:
    """`path`, else `$LOAD_SLO_FILE`, else `load/slo.yaml`; the profiles' bars from the profiles
    file unless the SLO file names `profiles` itself."""
    path = path or Path(os.environ.get(SLO_FILE_ENV) or SLO_FILE)
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if "profiles" not in raw:
        raw = {**raw, "profiles": profile_bars()}
    return Slo.model_validate(raw)


def profile_bars(path: Path | None = None) -> dict[str, dict[str, float]]:
    """{profile: its `slo`} of every entry of the profiles file that has bars."""
    path = path or Path(os.environ.get(PROFILES_FILE_ENV) or PROFILES_FILE)
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = raw.get("profiles") or {}
    return {
        name: dict(entry["slo"])
        for name, entry in entries.items()
        if isinstance(entry, dict) and entry.get("slo")
    }


def write_slo(slo: Slo, path: Path) -> Path:
    """An SLO file another process (locust, pytest) reads with `load_slo(path)`."""
    path.write_text(
        yaml.safe_dump(slo.model_dump(mode="json", exclude_none=True), sort_keys=False),
        encoding="utf-8",
    )
    return path
