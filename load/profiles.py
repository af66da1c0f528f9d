"""Named load profiles (`load/profiles.yaml`) with command-line overrides."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

# `make bench BENCH_PROFILES=load/profiles.quick.yaml` (LOAD_PROFILES): shorter runs of every
# profile, for checking that the bench runs end to end, not for its figures
PROFILES_FILE = Path(os.environ.get("LOAD_PROFILES") or Path(__file__).with_name("profiles.yaml"))


class LocustProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    users: int = Field(default=1, ge=1)
    rate: float = Field(default=0.0, ge=0)
    time_s: float = Field(default=30.0, gt=0)
    # Measured after this: users spawning, sessions opening and first calls queueing together
    # are the start of a run, not its steady state (the usual load-test warm-up).
    warmup_s: float = Field(default=0.0, ge=0)


class SaturationProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: list[int] = Field(default_factory=lambda: [2, 4, 8, 12, 16, 24, 32], min_length=1)
    step_time_s: float = Field(default=8.0, gt=0)

    @property
    def time_s(self) -> float:
        return len(self.steps) * self.step_time_s


class ParallelProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    calls_per_tool: int = Field(default=5, ge=1)
    slow_users: int = Field(default=2, ge=1)
    cheap_calls: int = Field(default=30, ge=5)


class Profiles(BaseModel):
    model_config = ConfigDict(extra="forbid")

    latency: LocustProfile
    paced: LocustProfile
    saturation: SaturationProfile
    parallel: ParallelProfile
    # Whether `make bench` judges the calibrated bars on these runs. Short runs have too few calls
    # for a percentile or a saturation step to mean anything: their calibrated bars are reported,
    # and only the absolute bars (errors, ceilings, parallel guarantees, gate) are judged.
    judge_calibrated: bool = True


NAMES = ("latency", "paced", "saturation", "parallel")


def load_profiles(path: Path | None = None) -> Profiles:
    raw: dict[str, Any] = yaml.safe_load((path or PROFILES_FILE).read_text(encoding="utf-8"))
    return Profiles.model_validate(raw)
