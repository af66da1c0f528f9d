"""Named load profiles (`load/profiles.yaml`): one entry per profile, with its bars beside it.

An entry names its `kind` (how it runs: `locust`, a fixed load; `saturation`, load stepped up;
`parallel`, the parallel-execution guarantees; `inprocess`, the in-process latency step), its run
settings (an omitted field takes its kind's default), `quick` (the settings that replace them
for a short run, `make bench QUICK=1`) and `slo` (its bars, read by `ocm_common/slo_file.py`).
Adding a profile is adding an entry: the bench runs every `locust` and `saturation` entry and
judges it by its bars, and `ocm load run --profile` offers it.

Four entries have a role in the bench as well and must be present with their kind: `latency`
(the transport floor and the stage table run it), `saturation` (the scaling ratio),
`parallel` and `inprocess`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

# LOAD_PROFILES names another profiles file; LOAD_QUICK=1 (`make bench QUICK=1`) runs every
# profile with its `quick` settings: checks that the bench runs end to end, not its figures
PROFILES_ENV = "LOAD_PROFILES"
QUICK_ENV = "LOAD_QUICK"
PROFILES_FILE = Path(__file__).with_name("profiles.yaml")
# the entries the bench gives a role of their own, and the kind each must have
ROLES = {
    "latency": "locust",
    "saturation": "saturation",
    "parallel": "parallel",
    "inprocess": "inprocess",
}
# kinds locust runs
LOCUST_KINDS = ("locust", "saturation")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the settings a short run uses instead (validated as this kind's fields)
    quick: dict[str, Any] = Field(default_factory=dict)
    # the profile's bars (load/slo.yaml's vocabulary: p50_ms, p95_ms, min_rps, step_p95_ms)
    slo: dict[str, float] = Field(default_factory=dict)

    def shortened(self) -> _Entry:
        """This entry with its `quick` settings in place of its own."""
        if not self.quick:
            return self
        return type(self).model_validate({**self.model_dump(), **self.quick, "quick": {}})


class LocustProfile(_Entry):
    kind: Literal["locust"] = "locust"
    users: int = Field(default=1, ge=1)
    rate: float = Field(default=0.0, ge=0)
    time_s: float = Field(default=30.0, gt=0)
    # Measured after this: users spawning, sessions opening and first calls queueing together
    # are the start of a run, not its steady state (the usual load-test warm-up).
    warmup_s: float = Field(default=0.0, ge=0)


class SaturationProfile(_Entry):
    kind: Literal["saturation"] = "saturation"
    steps: list[int] = Field(default_factory=lambda: [2, 4, 8, 12, 16, 24, 32], min_length=1)
    step_time_s: float = Field(default=8.0, gt=0)

    @property
    def time_s(self) -> float:
        return len(self.steps) * self.step_time_s


class ParallelProfile(_Entry):
    kind: Literal["parallel"] = "parallel"
    calls_per_tool: int = Field(default=5, ge=1)
    slow_users: int = Field(default=2, ge=1)
    cheap_calls: int = Field(default=30, ge=5)


class InprocessProfile(_Entry):
    kind: Literal["inprocess"] = "inprocess"


Profile = Annotated[
    LocustProfile | SaturationProfile | ParallelProfile | InprocessProfile,
    Field(discriminator="kind"),
]


class Profiles(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profiles: dict[str, Profile]
    # Whether `make bench` judges the calibrated bars on these runs. Short runs have too few calls
    # for a percentile or a saturation step to mean anything: their calibrated bars are reported,
    # and only the absolute bars (errors, ceilings, parallel guarantees, gate) are judged.
    judge_calibrated: bool = True

    @model_validator(mode="after")
    def _roles_present(self) -> Profiles:
        for name, kind in ROLES.items():
            entry = self.profiles.get(name)
            if entry is None or entry.kind != kind:
                found = "missing" if entry is None else f"kind {entry.kind!r}"
                raise ValueError(f"profiles.{name}: the bench needs a {kind!r} entry ({found})")
        return self

    def __getitem__(self, name: str) -> Profile:
        return self.profiles[name]

    def names(self) -> tuple[str, ...]:
        return tuple(self.profiles)

    def of_kind(self, *kinds: str) -> tuple[str, ...]:
        """The entries of these kinds, in the file's order."""
        return tuple(name for name, p in self.profiles.items() if p.kind in kinds)

    def locust(self) -> tuple[str, ...]:
        """The entries locust runs (fixed load and stepped load)."""
        return self.of_kind(*LOCUST_KINDS)

    def locust_settings(self, name: str) -> LocustProfile | SaturationProfile:
        """A locust-run entry's settings (KeyError for a name that is not one)."""
        entry = self.profiles[name]
        if not isinstance(entry, LocustProfile | SaturationProfile):
            raise KeyError(f"{name} is a {entry.kind!r} profile, not one locust runs")
        return entry

    def shortened(self) -> Profiles:
        """Every entry with its `quick` settings; the calibrated bars then only reported."""
        return Profiles.model_construct(
            profiles={n: p.shortened() for n, p in self.profiles.items()}, judge_calibrated=False
        )

    @property
    def latency(self) -> LocustProfile:
        return _as(self.profiles["latency"], LocustProfile)

    @property
    def saturation(self) -> SaturationProfile:
        return _as(self.profiles["saturation"], SaturationProfile)

    @property
    def parallel(self) -> ParallelProfile:
        return _as(self.profiles["parallel"], ParallelProfile)


T = TypeVar("T")


def _as(entry: object, kind: type[T]) -> T:
    assert isinstance(entry, kind)  # the role validator checked it
    return entry


def profiles_file() -> Path:
    """`$LOAD_PROFILES`, else `load/profiles.yaml`."""
    return Path(os.environ.get(PROFILES_ENV) or PROFILES_FILE)


def quick_requested() -> bool:
    return os.environ.get(QUICK_ENV, "").strip().lower() in ("1", "true", "yes")


def load_profiles(path: Path | None = None, quick: bool | None = None) -> Profiles:
    """The profiles file (`path`, else `profiles_file()`), shortened when `quick` (default:
    `$LOAD_QUICK`)."""
    raw = yaml.safe_load((path or profiles_file()).read_text(encoding="utf-8"))
    profiles = Profiles.model_validate(raw)
    return profiles.shortened() if (quick_requested() if quick is None else quick) else profiles
