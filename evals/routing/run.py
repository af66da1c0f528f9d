"""Run routing cases against catalogues: every case ranked in every search mode, at each step
of the scale curve (the catalogues given, added one by one, then the generated distractors),
into one result record that the report and the gate read."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evals.routing.cases import RoutingCase
from evals.routing.metrics import DEPTH, Outcome, confusion, grouped, summary
from ocm_common.machine import describe
from tool_search.categories import assign, load_rules
from tool_search.engine import ToolIndex
from tool_search.records import ToolRecord
from tool_search.sources import Catalogue, read_sources

MODES = ("hybrid", "keyword", "semantic")


@dataclass
class Step:
    name: str
    specs: list[str]
    tools: list[ToolRecord]


def scale_steps(catalogues: Sequence[Catalogue], distractors: Catalogue | None) -> list[Step]:
    """Cumulative steps: the first catalogue, then each next one added, then the distractors."""
    steps: list[Step] = []
    tools: list[ToolRecord] = []
    specs: list[str] = []
    for catalogue in catalogues:
        tools = tools + catalogue.tools
        specs = [*specs, catalogue.spec]
        steps.append(Step(f"+{catalogue.server}" if steps else catalogue.server, specs, tools))
    if distractors is not None:
        steps.append(
            Step(
                f"+{len(distractors.tools)} generated",
                [*specs, distractors.spec],
                tools + distractors.tools,
            )
        )
    return steps


def rank_cases(index: ToolIndex, cases: Sequence[RoutingCase], mode: str) -> list[Outcome]:
    known = set(index.by_id)
    return [
        Outcome(case, tuple(index.ranked_ids(case.text, mode, DEPTH)))
        for case in cases
        if any(t in known for t in case.expected)
    ]


def step_result(
    index: ToolIndex, cases: Sequence[RoutingCase], modes: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {"tools": len(index.tools), "modes": {}}
    for mode in modes:
        start = time.perf_counter()
        outcomes = rank_cases(index, cases, mode)
        elapsed = time.perf_counter() - start
        out["modes"][mode] = {
            "overall": summary(outcomes),
            "strict": summary(outcomes, strict=True),
            "per_tool": grouped(outcomes, "tool"),
            "strict_per_tool": grouped(outcomes, "tool", strict=True),
            "per_catalogue": grouped(outcomes, "catalogue"),
            "per_source": grouped(outcomes, "source"),
            "per_family": grouped(outcomes, "family"),
            "confusion": confusion(outcomes),
            "mean_ms_per_case": round(1000 * elapsed / max(len(outcomes), 1), 3),
            "outcomes": [
                {
                    "id": o.case.id,
                    "rank": o.rank,
                    "strict_rank": o.strict_rank,
                    "first": o.ranked[0] if o.ranked else None,
                }
                for o in outcomes
            ],
        }
    return out


def evaluate(
    specs: Sequence[str],
    cases: Sequence[RoutingCase],
    *,
    modes: Sequence[str] = MODES,
    distractors: int = 0,
    seed: int = 0,
    llm: bool = False,
    progress: Callable[[str], None] = lambda _msg: None,
) -> dict[str, Any]:
    """The routing record: per scale step and mode, metrics overall / per tool / per catalogue."""
    rules = load_rules()
    catalogues = read_sources(list(specs))
    extra = read_sources([f"distractors:{distractors}:{seed}"])[0] if distractors else None
    steps = scale_steps(catalogues, extra)
    record: dict[str, Any] = {
        "kind": "routing",
        "catalogues": list(specs),
        "distractors": {"count": distractors, "seed": seed},
        "cases": len(cases),
        "case_sources": sorted({c.source.split(":")[0] for c in cases}),
        "machine": describe(),
        "steps": [],
    }
    for step in steps:
        progress(f"{step.name}: {len(step.tools)} tools")
        assign(step.tools, rules)
        index = ToolIndex(step.tools)
        record["steps"].append(
            {"name": step.name, "specs": step.specs, **step_result(index, cases, modes)}
        )
        if llm:
            from evals.routing.llm_host import llm_host

            known = [c for c in cases if any(t in index.by_id for t in c.expected)]
            record["steps"][-1]["llm_host"] = llm_host(index, known)
    return record
