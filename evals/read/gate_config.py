"""The gate's configuration (evals/gate.yaml): floors, ablation margins, tolerances against the
baseline, calibration limits, required checks and critical tags, validated as one model;
`load_config` names any problem with its field."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals import registry


class Floors(BaseModel):
    """Absolute thresholds; for metrics where lower is better (latency) the value is a ceiling."""

    model_config = ConfigDict(extra="forbid")

    overall: dict[str, float] = Field(default_factory=dict)
    per_tool: dict[str, dict[str, float]] = Field(default_factory=dict)
    per_mode: dict[str, dict[str, float]] = Field(default_factory=dict)
    # derived case families (tag family:<name>): pass_rate is a floor, wrong_product (answers
    # about another product than the one asked, not flagged) a ceiling on the count
    per_family: dict[str, dict[Literal["pass_rate", "wrong_product"], float]] = Field(
        default_factory=dict
    )


class AblationRule(BaseModel):
    """``mode`` must beat the best of ``over`` on ``metric`` by at least ``min_margin``."""

    model_config = ConfigDict(extra="forbid")

    mode: str = "hybrid"
    metric: str = "nDCG@10"
    over: list[str] = Field(default_factory=lambda: ["vector", "keyword"])
    min_margin: float = 0.0


class Tolerance(BaseModel):
    """Largest allowed drop against the baseline, by metric (``default`` for the rest)."""

    model_config = ConfigDict(extra="forbid")

    overall: dict[str, float] = Field(default_factory=lambda: {"default": 0.01})
    per_scenario: dict[str, float] = Field(default_factory=lambda: {"default": 0.05})

    def allowed(self, scope: Literal["overall", "per_scenario"], metric: str) -> float:
        table = {registry.canonical(k): v for k, v in getattr(self, scope).items()}
        return table.get(metric, table.get("default", 0.0))


class CalibrationLimits(BaseModel):
    """Bounds on one scope's calibration (evals/read/calibration.py); unset: not judged."""

    model_config = ConfigDict(extra="forbid")

    ece_max: float | None = Field(default=None, ge=0, le=1)
    brier_max: float | None = Field(default=None, ge=0, le=1)
    auroc_min: float | None = Field(default=None, ge=0, le=1)
    accuracy_at_0_9_min: float | None = Field(default=None, ge=0, le=1)
    # 1.0: no wrong answer at confidence >= 0.8 (the finding names the ones there were)
    accuracy_at_0_8_min: float | None = Field(default=None, ge=0, le=1)

    def bounds(self) -> dict[str, float]:
        """Registered metric name -> bound (the registry says floor or ceiling)."""
        named = {
            "ece": self.ece_max,
            "brier": self.brier_max,
            "auroc": self.auroc_min,
            "accuracy_at_0.9": self.accuracy_at_0_9_min,
            "accuracy_at_0.8": self.accuracy_at_0_8_min,
        }
        return {metric: bound for metric, bound in named.items() if bound is not None}

    def over(self, defaults: CalibrationLimits) -> CalibrationLimits:
        """These limits with ``defaults`` filling the ones left unset."""
        return CalibrationLimits.model_validate(
            {**defaults.model_dump(exclude_none=True), **self.model_dump(exclude_none=True)}
        )


class CalibrationRules(BaseModel):
    """Calibration limits overall, per tool (``"*"``: every tool that publishes a confidence)
    and per case family; a scope with fewer than ``min_answers`` answers carrying a confidence
    is skipped (a handful of answers says little about a calibration)."""

    model_config = ConfigDict(extra="forbid")

    min_answers: int = Field(10, ge=1)
    # True: a run none of whose calibration rules could be applied (no confidence published, too
    # few answers) has been judged on nothing, and the gate says so (exit 2), not "passed"
    required: bool = False
    overall: CalibrationLimits = Field(default_factory=CalibrationLimits)
    per_tool: dict[str, CalibrationLimits] = Field(default_factory=dict)
    per_family: dict[str, CalibrationLimits] = Field(default_factory=dict)


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    floors: Floors = Field(default_factory=Floors)
    ablation: list[AblationRule] = Field(default_factory=list)
    tolerance: Tolerance = Field(default_factory=Tolerance)
    critical_tag: str = "critical"
    fail_on_new_failures: bool = True
    # a team gating its own backend on its own baseline: a critical scenario that failed in that
    # baseline too is a known miss (listed), not a gate failure; a newly failing one still fails
    critical_known_in_baseline: bool = False
    # checks that must have run and passed on every scenario, baseline or not
    required_checks: list[str] = Field(default_factory=list)
    # the published confidence's calibration; None: not judged
    calibration: CalibrationRules | None = None
    # the target the release gate runs (make gate, the bench's eval, make baseline): the one
    # place it is written (the Makefile and `ocm bench` read it; GATE_TARGET overrides it)
    target: str | None = None


class GateConfigError(RuntimeError):
    """A gate config that cannot be used (a harness error)."""


def load_config(path: Path) -> GateConfig:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return GateConfig.model_validate(raw)
    except FileNotFoundError:
        raise GateConfigError(f"{path}: gate config not found") from None
    except (yaml.YAMLError, ValidationError) as exc:
        raise GateConfigError(f"{path}: invalid gate config: {exc}") from None
