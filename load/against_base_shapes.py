"""The regression record's body as `make bench BASE=` (load/against_base.py) writes it: what
ran, then each figure and verdict as it is measured, and each concurrency condition's part."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from load.regression import VerdictJson
from load.saturation_pair import SaturationSection
from ocm_common.machine import MachineDescription


class ConditionSummary(TypedDict):
    """One condition in the regression record: what it is, its verdict, each side's failed
    calls, its context figures, the machine's CPU shares over it and every paired sample."""

    title: str
    env: dict[str, str]
    regression: VerdictJson
    problems: dict[str, list[str]]
    measurements: dict[str, dict[str, float]]
    machine_cpu: dict[str, float] | None
    # {subject: {side: ms per call}}
    samples_ms: dict[str, dict[str, list[float]]]


class RegressionBody(TypedDict):
    """The regression record's body (`make bench BASE=`): what ran, then each figure and verdict
    as it is measured (a run stopped early has only what came before)."""

    timestamp: str
    kind: Literal["regression"]
    base_rev: str
    machine: MachineDescription
    rounds: int
    mix: str
    condition_rounds: int
    harness_errors: list[str]
    base_sha: NotRequired[str]
    # the machine's CPU shares over the interleaved calls (load/hoststat.py)
    machine_cpu: NotRequired[dict[str, float] | None]
    # {side: the server's query-embedding cache hit rate}
    cache_hit_rate: NotRequired[dict[str, float | None]]
    saturation: NotRequired[SaturationSection]
    regression: NotRequired[VerdictJson]
    hard_failures: NotRequired[list[str]]
    base_problems: NotRequired[list[str]]
    # {side: {tool: ms per call}}
    samples_ms: NotRequired[dict[str, dict[str, list[float]]]]
    conditions: NotRequired[dict[str, ConditionSummary]]
    slower_under_conditions: NotRequired[list[str]]
    exit_code: NotRequired[int]
    elapsed_s: NotRequired[float]
