"""A confidence that is a probability of being right: one small logistic model per tool family,
fitted on derived cases (scoring/fit.py), stored as plain numbers (scoring/calibration.yaml)
and read once when the server starts.

    confidence = 1 / (1 + exp(-(intercept + sum(coefficient_i * feature_i))))

over the family's few named features (scoring/features.py), summed in the file's order with
plain Python floats, then clipped to [FLOOR, CEILING] and rounded to 4 places: the same number on
every CPU. A family the file does not name (or a tool without one) keeps the spec's score.

Three rules stand over the fitted number (`stated`), because the derived cases cannot measure what
they guard against: an answer no path answered rests on nothing (0); an answer whose sources
disagree, or that leads with a fact its tool could not verify against the publisher's page
(opa.program_lookup's deduction), is stated no higher than the spec's score, which takes those
off (the derived checks read the value the corpus gives, so they cannot see whether the value an
answer leads with is the one the publisher meant); an answer whose path failed or was cut is
stated no higher than the least it could have had with every path answering (`Logistic.lowest`),
so losing a path never raises a confidence; so is an answer one path gave alone when its family's
model was fitted only on answers both paths gave (`paths: both`).

A fitted slope spreads the answers that carry a doubt flag (`ambiguous`, `unsettled`,
`no_answer`) by their other features, and where few such answers were fitted it can lift some of
them far above the rate at which the flagged answers were right. So each flag may carry a
ceiling (the file's `ceilings`): the Laplace-smoothed rate at which the fit half's answers with
that flag were right. A flagged answer states no more than its flag's ceiling: a confidence of
0.9 is given only where answers like it were right that often.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypedDict

import yaml

from ocm_common.json_types import JsonObject
from reference_server.scoring.features import FEATURES

MODEL_FILE = Path(__file__).with_name("calibration.yaml")
SCHEMA_VERSION = 1
# A fitted probability is never stated as certainty, nor as impossibility: a few hundred right
# answers in a row do not make the next one certain.
FLOOR = 0.001
CEILING = 0.999
# Features without an upper end; every other one lies in 0-1 (scoring/features.py).
UNBOUNDED = frozenset({"shared"})
# Features that count evidence: a failed path can only lower them.
EVIDENCE = frozenset({"spec_score", "both_paths", "corroborated"})


class CalibrationFileError(ValueError):
    """The calibration file cannot be used (named in the message: file, family, field)."""


class FamilyInfo(TypedDict, total=False):
    """The rules a family's entry sets on top of its model (both optional, so a model built in
    code needs neither): which answers it was fitted on, and each doubt flag's ceiling."""

    paths: Literal["both", "any"]
    ceilings: dict[str, float]


@dataclass(frozen=True)
class Logistic:
    """One family's model: named features, their coefficients (raw units), an intercept."""

    family: str
    features: tuple[str, ...]
    coefficients: tuple[float, ...]
    intercept: float
    info: FamilyInfo = field(default_factory=lambda: FamilyInfo(), compare=False)

    def logit(self, values: dict[str, float]) -> float:
        z = self.intercept
        for name, coefficient in zip(self.features, self.coefficients, strict=True):
            z += coefficient * values[name]
        return z

    def probability(self, values: dict[str, float]) -> float:
        """The fitted probability of being right, clipped and rounded to 4 places, at most the
        ceiling of any doubt flag the answer carries."""
        return min(_probability(self.logit(values)), self.ceiling(values))

    def ceiling(self, values: dict[str, float]) -> float:
        """The lowest ceiling among the flags the answer carries (CEILING with none)."""
        ceilings: dict[str, float] = self.info.get("ceilings") or {}
        return min([CEILING] + [c for flag, c in ceilings.items() if values.get(flag, 0.0) > 0])

    @property
    def both_paths_only(self) -> bool:
        """Fitted only on answers both paths gave (the file's `paths: both`): an answer one path
        gave alone, failed or not asked, is outside what it measured."""
        return self.info.get("paths") == "both"

    def bound_for(self, values: dict[str, float], path_failed: bool) -> float | None:
        """The most such an answer may state (`lowest`) when a path failed or was cut, or when
        the model knows only both-path answers and this one is not; None otherwise."""
        if path_failed or (self.both_paths_only and not values.get("both_paths")):
            return self.lowest(values)
        return None

    def lowest(self, values: dict[str, float]) -> float:
        """The least probability the answer could have had with every path answering.

        Evidence counts (`EVIDENCE`) only fall when a path fails, so their value stands where
        more of them raises the logit; every other feature could have been anything in its 0-1
        range, so it takes the end that lowers the logit (`shared`, a count without an upper end,
        keeps its value)."""
        worst: dict[str, float] = {}
        for name, coefficient in zip(self.features, self.coefficients, strict=True):
            value = values[name]
            if name in UNBOUNDED or coefficient == 0 or (name in EVIDENCE and coefficient > 0):
                worst[name] = value
            else:
                worst[name] = 0.0 if coefficient > 0 else 1.0
        flags = {f: 1.0 for f in self.info.get("ceilings") or {} if f not in EVIDENCE}
        return min(_probability(self.logit(worst)), self.ceiling({**values, **flags}))


def _probability(z: float) -> float:
    """The logistic of `z`, clipped to [FLOOR, CEILING] and rounded to 4 places."""
    p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
    return round(min(CEILING, max(FLOOR, p)), 4)


@dataclass(frozen=True)
class CalibrationModel:
    """Every family's model, and what the file says about how they were fitted."""

    families: dict[str, Logistic]
    meta: JsonObject = field(default_factory=dict)  # the file's other keys (version, fitted, ...)

    def of(self, family: str | None) -> Logistic | None:
        return self.families.get(family) if family else None


EMPTY = CalibrationModel({})


def _floats(value: Any, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        raise CalibrationFileError(f"{where}: expected a list of numbers, got {value!r}")
    return tuple(float(v) for v in value)


def parse(data: Any, source: str = "calibration file") -> CalibrationModel:
    """The model from the file's content (a mapping), every field checked."""
    if not isinstance(data, dict):
        raise CalibrationFileError(f"{source}: expected a mapping")
    if data.get("version") != SCHEMA_VERSION:
        raise CalibrationFileError(
            f"{source}: version {data.get('version')!r}, this server reads {SCHEMA_VERSION}"
        )
    families: dict[str, Logistic] = {}
    for name, body in (data.get("families") or {}).items():
        where = f"{source}: families.{name}"
        if not isinstance(body, dict) or body.get("model") != "logistic":
            raise CalibrationFileError(f"{where}: model must be 'logistic'")
        names = tuple(body.get("features") or ())
        unknown = [n for n in names if n not in FEATURES]
        if unknown:
            raise CalibrationFileError(
                f"{where}: unknown features {unknown}. Available: {', '.join(FEATURES)}"
            )
        coefficients = _floats(body.get("coefficients"), f"{where}.coefficients")
        if len(coefficients) != len(names):
            raise CalibrationFileError(
                f"{where}: {len(names)} features, {len(coefficients)} coefficients"
            )
        intercept = body.get("intercept")
        if not isinstance(intercept, int | float) or isinstance(intercept, bool):
            raise CalibrationFileError(f"{where}.intercept: expected a number")
        ceilings = body.get("ceilings") or {}
        if not isinstance(ceilings, dict):
            raise CalibrationFileError(f"{where}.ceilings: expected a mapping of flag to number")
        for flag, value in ceilings.items():
            if flag not in FEATURES:
                raise CalibrationFileError(
                    f"{where}.ceilings: unknown flag {flag!r}. Available: {', '.join(FEATURES)}"
                )
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise CalibrationFileError(
                    f"{where}.ceilings.{flag}: expected a number in (0, 1], got {value!r}"
                )
        if body.get("paths", "any") not in ("any", "both"):
            raise CalibrationFileError(f"{where}.paths: expected 'any' or 'both'")
        info: FamilyInfo = {"paths": "both" if body.get("paths") == "both" else "any"}
        if ceilings:
            info["ceilings"] = {str(flag): float(value) for flag, value in ceilings.items()}
        families[str(name)] = Logistic(str(name), names, coefficients, float(intercept), info)
    meta = {k: v for k, v in data.items() if k != "families"}
    return CalibrationModel(families, meta)


@lru_cache(maxsize=8)
def load(path: Path = MODEL_FILE) -> CalibrationModel:
    """The calibration file, read once per process and path."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationFileError(f"{path}: no calibration file") from None
    return parse(yaml.safe_load(text), str(path))


def stated(
    fitted: float,
    spec_score: float,
    *,
    answered: bool,
    capped: bool,
    degraded_floor: float | None = None,
) -> float:
    """The calibrated confidence an answer states: `fitted`; 0 when no path answered; at most the
    spec's score when it is `capped` (its sources disagree, or an unverified fact leads); at most
    `degraded_floor` (`Logistic.lowest`) when a path failed or was cut, so a degraded answer
    never states more than the same question answered by every path could have."""
    if not answered:
        return 0.0
    value = min(fitted, spec_score) if capped else fitted
    return value if degraded_floor is None else min(value, degraded_floor)
