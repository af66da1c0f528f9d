"""The paired saturation comparison of `make bench BASE=<rev> BASE_SATURATION=1`.

Calls/s is a figure of the whole machine, so the two sides cannot run at the same time: the
saturation profile runs on one side, then the other, in ABBA order over the pairs (working,
base, base, working, ...), so a drift of the shared machine during the comparison falls on both
sides alike. Each run gets a fresh server (the same worker count on both sides) so no run
inherits another's query-embedding cache, and its own output folder. Per pair the ratio
working / base of the highest sustained calls/s; the median over pairs with its range.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from load.profiles import SaturationProfile
from ocm_common.run_record import REGRESSION_SATURATION_VERSION

SIDES = ("working", "base")
PAIRS = 2
# One worker per core on the 2-core machine this runs on: either side alone can use the whole
# machine (only one side runs at a time), and the per-process parts of a multi-worker server
# (separate caches, the kernel spreading connections) are part of the figure on both sides.
SERVER_WORKERS = 2


def abba_order(pairs: int) -> list[tuple[int, str]]:
    """(pair, side) in run order: pair 0 working then base, pair 1 base then working, ..."""
    order: list[tuple[int, str]] = []
    for pair in range(pairs):
        sides = SIDES if pair % 2 == 0 else SIDES[::-1]
        order += [(pair, side) for side in sides]
    return order


class StepFigures(TypedDict):
    """One load step of a saturation run, as its locust summary gave it (None: not written)."""

    users: int | None
    rps: float | None
    worst_p95_ms: float | None
    sustained: bool | None


class SaturationRunJson(TypedDict):
    """A `SaturationRun` as the record holds it (its fields, in order)."""

    pair: int
    side: str
    calls_per_s: float
    calls: int
    errors: int
    exit_code: int
    cache_hit_rate: float | None
    out_dir: str
    steps: tuple[StepFigures, ...]


class StepBar(TypedDict):
    """The p95 bar a load step had to stay under (both sides alike), the factor it was scaled
    by and how that factor was found."""

    step_p95_ms: float
    factor: float
    note: str


class SaturationSection(TypedDict):
    """The regression record's `saturation` part (its own `version`)."""

    version: int
    mix: str
    server_workers: int
    order: list[str]
    # the SaturationProfile both sides ran, as its model_dump writes it
    profile: dict[str, Any]
    step_bar: StepBar | None
    runs: list[SaturationRunJson]
    pair_ratios: list[float | None]
    median_ratio: float | None
    min_ratio: float | None
    max_ratio: float | None
    errors: int
    # the machine's CPU shares over the whole comparison (load/hoststat.py), added after it
    machine_cpu: NotRequired[dict[str, float] | None]


@dataclass(frozen=True)
class SaturationRun:
    """One locust saturation run on one side: its figure, its errors and where it wrote."""

    pair: int
    side: str
    calls_per_s: float
    calls: int
    errors: int
    exit_code: int
    cache_hit_rate: float | None
    out_dir: str
    # per load step: users, calls/s, worst tool's p95 and whether it was sustained
    steps: tuple[StepFigures, ...] = ()

    def to_json(self) -> SaturationRunJson:
        return {
            "pair": self.pair,
            "side": self.side,
            "calls_per_s": self.calls_per_s,
            "calls": self.calls,
            "errors": self.errors,
            "exit_code": self.exit_code,
            "cache_hit_rate": self.cache_hit_rate,
            "out_dir": self.out_dir,
            "steps": tuple(StepFigures(**step) for step in self.steps),
        }


def pair_ratios(runs: list[SaturationRun]) -> list[float | None]:
    """Per pair working / base calls/s (None where the base's figure is 0 or a side is missing)."""
    by_pair: dict[int, dict[str, float]] = {}
    for run in runs:
        by_pair.setdefault(run.pair, {})[run.side] = run.calls_per_s
    ratios: list[float | None] = []
    for pair in sorted(by_pair):
        sides = by_pair[pair]
        base = sides.get("base")
        working = sides.get("working")
        ratios.append(working / base if working is not None and base else None)
    return ratios


def summarise(
    runs: list[SaturationRun],
    *,
    workers: int,
    profile: SaturationProfile,
    mix: str,
    step_bar: StepBar | None = None,
) -> SaturationSection:
    """The record's saturation section: every run, the per-pair ratios, their median and range;
    `step_bar`: the p95 bar a load step had to stay under (the same on both sides) and its
    scaling."""
    ratios = pair_ratios(runs)
    known = [r for r in ratios if r is not None]
    return {
        "version": REGRESSION_SATURATION_VERSION,  # bumped when a field's meaning changes
        "mix": mix,
        "server_workers": workers,
        "order": [run.side for run in runs],
        "profile": profile.model_dump(),
        "step_bar": step_bar,
        "runs": [run.to_json() for run in runs],
        "pair_ratios": [round(r, 4) if r is not None else None for r in ratios],
        "median_ratio": round(statistics.median(known), 4) if known else None,
        "min_ratio": round(min(known), 4) if known else None,
        "max_ratio": round(max(known), 4) if known else None,
        "errors": sum(run.errors for run in runs),
    }


# (side, run tag) -> a context manager yielding that side's server URL, started fresh
ServerFor = Callable[[str, str], AbstractContextManager[str]]
# (url, out_dir) -> the locust saturation summary and its exit code (load/run.py run_profile)
RunSaturation = Callable[[str, Path], tuple[int, dict[str, Any]]]


def run_pairs(
    server_for: ServerFor,
    run_saturation: RunSaturation,
    out: Path,
    *,
    pairs: int = PAIRS,
    progress: Callable[[str], None] = print,
) -> list[SaturationRun]:
    """The saturation profile on each side in ABBA order, a fresh server and folder per run."""
    runs: list[SaturationRun] = []
    for n, (pair, side) in enumerate(abba_order(pairs), start=1):
        tag = f"{n:02d}-{side}"
        run_dir = out / f"saturation-{tag}"
        progress(f"      saturation run {n}/{2 * pairs}: {side} (pair {pair + 1})")
        with server_for(side, tag) as url:
            code, summary = run_saturation(url, run_dir)
        runs.append(
            SaturationRun(
                pair=pair,
                side=side,
                calls_per_s=float(summary.get("saturation_rps") or 0.0),
                calls=int(summary.get("calls") or 0),
                errors=int(summary.get("errors") or 0),
                exit_code=code,
                cache_hit_rate=summary.get("cache_hit_rate"),
                out_dir=run_dir.name,
                steps=tuple(
                    StepFigures(
                        users=step.get("users"),
                        rps=step.get("rps"),
                        worst_p95_ms=step.get("worst_p95_ms"),
                        sustained=step.get("sustained"),
                    )
                    for step in summary.get("steps") or []
                ),
            )
        )
        progress(
            f"      {side}: {runs[-1].calls_per_s:g} calls/s sustained, "
            f"{runs[-1].errors} errors, exit {code}"
        )
    return runs


def lines(section: SaturationSection) -> list[str]:
    """The console summary of a saturation section (a run that sustained no step reads 0)."""
    out = [
        f"saturation, {section['server_workers']} workers per side, mix {section['mix']}:",
        *(
            f"  run {n}: {r['side']:<7} {r['calls_per_s']:8.2f} calls/s  "
            f"{r['errors']} errors  exit {r['exit_code']}"
            for n, r in enumerate(section["runs"], start=1)
        ),
        "  working / base per pair: "
        + ", ".join("-" if r is None else f"{r:.3f}" for r in section["pair_ratios"]),
    ]
    if section["median_ratio"] is not None:
        out.append(
            f"  median {section['median_ratio']:.3f} "
            f"(min {section['min_ratio']:.3f}, max {section['max_ratio']:.3f})"
        )
    return out
