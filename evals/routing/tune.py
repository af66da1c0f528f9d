"""`ocm routing-tune`: ranking variants compared on one seeded half of the cases
(the tuning half), the chosen one and the current one then reported on the other half (the
held-out half), so a reported number is not one the choice was fitted to.

Variants are principled changes one at a time (RRF k, the semantic ranking's weight, field
weights, name expansion, pooling of views, a title-and-lead-sentence view), then the changes
that helped on the tuning half together. The objective is the mean, over the scale steps, of
accepting top-1 plus top-3.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from typing_extensions import TypedDict

from evals.routing.cases import RoutingCase
from evals.routing.metrics import DEPTH, Outcome, summary
from evals.routing.run import Step, scale_steps
from tool_search.categories import assign, load_rules
from tool_search.engine import ToolIndex
from tool_search.ranking_config import DEFAULT_FIELD_WEIGHTS, RankingConfig
from tool_search.sources import read_sources

# The ranking as it was when these variants were compared (the defaults before 2026-11-27's
# choice), so the comparison can be re-run as recorded.
BASE = RankingConfig(
    rrf_k=10,
    semantic_weight=1.0,
    field_weights={**DEFAULT_FIELD_WEIGHTS, "name": 3.0, "title": 2.0},
    expand_names=False,
    lead_view=False,
)


class ConfigChange(TypedDict, total=False):
    """Settings of a :class:`RankingConfig` changed by one variant (``RankingConfig.but``)."""

    rrf_k: int
    semantic_weight: float
    field_weights: dict[str, float]
    expand_names: bool
    semantic_pool: str
    lead_view: bool


class PlainConfig(TypedDict):
    """A :class:`RankingConfig` as the tuning record stores it (its fields, in their order)."""

    rrf_k: int
    semantic_weight: float
    field_weights: dict[str, float]
    expand_names: bool
    semantic_pool: str
    lead_view: bool


# per step: {"accepting": summary, "strict": summary}
StepScores = dict[str, dict[str, dict[str, float]]]


class Trial(TypedDict):
    config: PlainConfig
    tuning: StepScores
    objective: float


class Chosen(TypedDict):
    name: str
    config: PlainConfig


class TuneRecord(TypedDict):
    """The tuning record (routing_tune.json)."""

    kind: Literal["routing_tune"]
    seed: int
    cases: dict[str, int]
    trials: dict[str, Trial]
    chosen: Chosen
    held_out: dict[str, StepScores]


SINGLE_CHANGES: dict[str, ConfigChange] = {
    "rrf_k=5": {"rrf_k": 5},
    "rrf_k=30": {"rrf_k": 30},
    "rrf_k=60": {"rrf_k": 60},
    "semantic_weight=1.5": {"semantic_weight": 1.5},
    "semantic_weight=2": {"semantic_weight": 2.0},
    "semantic_weight=0.7": {"semantic_weight": 0.7},
    "expand_names": {"expand_names": True},
    "pool=max+whole": {"semantic_pool": "max+whole"},
    "lead_view": {"lead_view": True},
    "weights:name2,title3": {"field_weights": {**BASE.field_weights, "name": 2.0, "title": 3.0}},
    "weights:argnames1": {"field_weights": {**BASE.field_weights, "argument_names": 1.0}},
    "weights:description1.5": {"field_weights": {**BASE.field_weights, "description": 1.5}},
}


def halves(cases: Sequence[RoutingCase], seed: int) -> tuple[list[RoutingCase], list[RoutingCase]]:
    """(tuning half, held-out half) by a hash of each case's id and the seed."""
    tune: list[RoutingCase] = []
    held: list[RoutingCase] = []
    for case in cases:
        digest = hashlib.sha256(f"{seed}:{case.id}".encode()).digest()
        (tune if digest[0] % 2 == 0 else held).append(case)
    return tune, held


def score_steps(
    steps: Sequence[Step], config: RankingConfig, cases: Sequence[RoutingCase]
) -> StepScores:
    """Per step: accepting and strict summaries of hybrid ranking."""
    out: StepScores = {}
    for step in steps:
        index = ToolIndex(step.tools, config=config)
        known = set(index.by_id)
        outcomes = [
            Outcome(c, tuple(index.ranked_ids(c.text, "hybrid", DEPTH)))
            for c in cases
            if any(t in known for t in c.expected)
        ]
        out[f"{step.name} ({len(step.tools)})"] = {
            "accepting": summary(outcomes),
            "strict": summary(outcomes, strict=True),
        }
    return out


def objective(result: StepScores) -> float:
    rows = [r["accepting"] for r in result.values()]
    return round(sum(r["top1"] + r["top3"] for r in rows) / len(rows), 4)


def tune(
    specs: Sequence[str],
    cases: Sequence[RoutingCase],
    distractors: int,
    seed: int = 0,
    progress: Callable[[str], None] = print,
) -> TuneRecord:
    catalogues = read_sources(list(specs))
    extra = read_sources([f"distractors:{distractors}:0"])[0] if distractors else None
    every = scale_steps(catalogues, extra)
    # the first catalogue, all of them, then with the generated tools
    picked = sorted({0, len(every) - 2, len(every) - 1} & set(range(len(every))))
    steps = [every[i] for i in picked]
    rules = load_rules()
    for step in steps:
        assign(step.tools, rules)
    tuning, held = halves(cases, seed)
    progress(f"{len(tuning)} tuning cases, {len(held)} held-out cases")
    trials: dict[str, Trial] = {}

    def trial(name: str, config: RankingConfig) -> float:
        result = score_steps(steps, config, tuning)
        trials[name] = {"config": _plain(config), "tuning": result, "objective": objective(result)}
        progress(f"{name:>24}: objective {trials[name]['objective']}")
        return float(trials[name]["objective"])

    base = trial("current", BASE)
    helped: dict[str, ConfigChange] = {}
    for name, change in SINGLE_CHANGES.items():
        if trial(name, BASE.but(**change)) > base:
            helped[name] = change
    # the best value of each setting among the changes that helped, together
    chosen_changes: ConfigChange = {}
    for name in sorted(helped, key=lambda n: -trials[n]["objective"]):
        chosen_changes = {**helped[name], **chosen_changes}
    chosen_name, chosen = "current", BASE
    if chosen_changes:
        combined = BASE.but(**chosen_changes)
        best_single = max(helped, key=lambda n: trials[n]["objective"])
        if trial("combined", combined) >= trials[best_single]["objective"]:
            chosen_name, chosen = "combined", combined
        else:
            chosen_name, chosen = best_single, BASE.but(**helped[best_single])
    progress(f"chosen on the tuning half: {chosen_name}")
    return {
        "kind": "routing_tune",
        "seed": seed,
        "cases": {"tuning": len(tuning), "held_out": len(held)},
        "trials": trials,
        "chosen": {"name": chosen_name, "config": _plain(chosen)},
        "held_out": {
            "current": score_steps(steps, BASE, held),
            "chosen": score_steps(steps, chosen, held),
        },
    }


def _plain(config: RankingConfig) -> PlainConfig:
    return PlainConfig(
        rrf_k=config.rrf_k,
        semantic_weight=config.semantic_weight,
        field_weights=dict(config.field_weights),
        expand_names=config.expand_names,
        semantic_pool=config.semantic_pool,
        lead_view=config.lead_view,
    )


def main(specs: list[str], cases_spec: str, distractors: int, seed: int, out: Path) -> int:
    from evals.routing.cases import load_cases

    cases = load_cases(cases_spec)
    record = tune(specs, cases, distractors, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    for which, result in record["held_out"].items():
        for step, body in result.items():
            a, s = body["accepting"], body["strict"]
            print(
                f"held-out {which:>8} {step:>26}: accepting {a['top1']:.3f} / {a['top3']:.3f}"
                f"  strict {s['top1']:.3f} / {s['top3']:.3f}  ({a['cases']} cases)"
            )
    print(f"-> {out}")
    return 0
