"""Run routing cases against catalogues: every case ranked in every search mode, at each step
of the scale curve (the catalogues given, added one by one, then the generated distractors),
into one result record that the report and the gate read."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NotRequired

from typing_extensions import TypedDict

from evals.routing.cases import RoutingCase, fingerprint
from evals.routing.metrics import DEPTH, ConfusionRow, Outcome, confusion, grouped, summary
from ocm_common.machine import MachineDescription, describe
from ocm_common.run_record import record_body
from tool_search.categories import assign, load_rules
from tool_search.engine import ToolIndex
from tool_search.records import ToolRecord
from tool_search.sources import Catalogue, read_sources

MODES = ("hybrid", "keyword", "semantic")


class OutcomeRow(TypedDict):
    id: str
    rank: int | None
    strict_rank: int | None
    first: str | None


class ModeResult(TypedDict):
    """One search mode at one step: summaries (cases, top1, top3, mrr) overall and grouped."""

    overall: dict[str, float]
    strict: dict[str, float]
    per_tool: dict[str, dict[str, float]]
    strict_per_tool: dict[str, dict[str, float]]
    per_catalogue: dict[str, dict[str, float]]
    per_source: dict[str, dict[str, float]]
    per_family: dict[str, dict[str, float]]
    confusion: list[ConfusionRow]
    mean_ms_per_case: float
    outcomes: list[OutcomeRow]


class LLMHostResult(TypedDict, total=False):
    """The LLM host mode's summary, or why it was skipped."""

    skipped: str
    model: str
    k: int
    overall: dict[str, float]


class StepModes(TypedDict):
    tools: int
    modes: dict[str, ModeResult]


class StepResult(TypedDict):
    name: str
    specs: list[str]
    tools: int
    modes: dict[str, ModeResult]
    llm_host: NotRequired[LLMHostResult]


class Distractors(TypedDict):
    count: int
    seed: int


class RoutingRecord(TypedDict):
    """The routing record (routing.json): per scale step and mode, the summaries."""

    kind: Literal["routing"]
    catalogues: list[str]
    distractors: Distractors
    cases: int
    cases_fingerprint: str
    case_sources: list[str]
    machine: MachineDescription  # ocm_common.machine.describe(): plain values
    steps: list[StepResult]
    machine_line: NotRequired[str]
    floors_failed: NotRequired[list[str]]
    floors_not_applied: NotRequired[str]


@record_body("routing")
class RoutingBody(TypedDict):
    """The routing run record's body: the routing record without its machine (the header has
    it), and the floors it fell below."""

    kind: Literal["routing"]
    catalogues: list[str]
    distractors: Distractors
    cases: int
    cases_fingerprint: NotRequired[str]
    case_sources: list[str]
    steps: list[StepResult]
    machine_line: str
    floor_failures: list[str]
    floors_not_applied: NotRequired[str]


def record_body_of(
    record: RoutingRecord, failures: list[str], not_applied: str | None = None
) -> RoutingBody:
    body: RoutingBody = {
        "kind": record["kind"],
        "catalogues": record["catalogues"],
        "distractors": record["distractors"],
        "cases": record["cases"],
        "case_sources": record["case_sources"],
        "steps": record["steps"],
        "machine_line": record["machine_line"],
        "cases_fingerprint": record["cases_fingerprint"],
        "floor_failures": failures,
    }
    if not_applied:
        body["floors_not_applied"] = not_applied
    return body


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


def step_result(index: ToolIndex, cases: Sequence[RoutingCase], modes: Sequence[str]) -> StepModes:
    out: StepModes = {"tools": len(index.tools), "modes": {}}
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
                OutcomeRow(
                    id=o.case.id,
                    rank=o.rank,
                    strict_rank=o.strict_rank,
                    first=o.ranked[0] if o.ranked else None,
                )
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
) -> RoutingRecord:
    """The routing record: per scale step and mode, metrics overall / per tool / per catalogue."""
    rules = load_rules()
    catalogues = read_sources(list(specs))
    extra = read_sources([f"distractors:{distractors}:{seed}"])[0] if distractors else None
    steps = scale_steps(catalogues, extra)
    record: RoutingRecord = {
        "kind": "routing",
        "catalogues": list(specs),
        "distractors": {"count": distractors, "seed": seed},
        "cases": len(cases),
        "cases_fingerprint": fingerprint(cases),
        "case_sources": sorted({c.source.split(":")[0] for c in cases}),
        "machine": describe(),
        "steps": [],
    }
    for step in steps:
        progress(f"{step.name}: {len(step.tools)} tools")
        assign(step.tools, rules)
        index = ToolIndex(step.tools)
        result = step_result(index, cases, modes)
        record["steps"].append(
            StepResult(
                name=step.name, specs=step.specs, tools=result["tools"], modes=result["modes"]
            )
        )
        if llm:
            from evals.routing.llm_host import llm_host

            known = [c for c in cases if any(t in index.by_id for t in c.expected)]
            record["steps"][-1]["llm_host"] = llm_host(index, known)
    return record
