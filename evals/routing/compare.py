"""The routing section of `evals compare`: the same cases against each backend's published
descriptions (its `tools/list`), ranked by the same hybrid search, with paired per-case
differences (which cases each backend's descriptions route better) and an exact sign test."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

from typing_extensions import TypedDict

from evals.routing.cases import RoutingCase
from evals.routing.metrics import DEPTH, Outcome, summary_of_ranks
from tool_search.categories import assign, load_rules
from tool_search.engine import ToolIndex
from tool_search.sources import REFERENCE_SERVER, read_sources


def catalogue_spec(target: str) -> str:
    """A compare target -> the catalogue spec that lists its tools (a configuration name or an
    in-process spec publishes the reference server's descriptions)."""
    if target.startswith(("stdio:", "http://", "https://")):
        return f"{REFERENCE_SERVER}={target}"
    return "inprocess"


def _ranks(spec: str, cases: list[RoutingCase]) -> dict[str, int | None]:
    tools = [t for c in read_sources([spec]) for t in c.tools]
    assign(tools, load_rules())
    index = ToolIndex(tools)
    return {
        c.id: Outcome(c, tuple(index.ranked_ids(c.text, "hybrid", DEPTH))).rank
        for c in cases
        if any(t in index.by_id for t in c.expected)
    }


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test p-value for paired wins and losses (ties dropped)."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(comb(n, i) for i in range(min(better, worse) + 1)) / 2**n
    return min(1.0, 2 * tail)


class RankDifference(TypedDict):
    id: str
    text: str
    expected: str
    rank_a: int | None
    rank_b: int | None


class RoutingComparison(TypedDict):
    """routing_compare.json: both sides' summaries, the paired counts and the cases that moved."""

    a: str
    b: str
    cases: int
    overall_a: dict[str, float]
    overall_b: dict[str, float]
    b_better: int
    b_worse: int
    p_value: float
    differences: list[RankDifference]


def compare_routing(a: str, b: str, cases: list[RoutingCase]) -> RoutingComparison:
    ranks_a, ranks_b = _ranks(catalogue_spec(a), cases), _ranks(catalogue_spec(b), cases)
    shared = [c for c in cases if c.id in ranks_a and c.id in ranks_b]

    def rr(rank: int | None) -> float:
        return 1.0 / rank if rank else 0.0

    diffs = [
        RankDifference(
            id=c.id,
            text=c.text,
            expected=c.expected[0],
            rank_a=ranks_a[c.id],
            rank_b=ranks_b[c.id],
        )
        for c in shared
        if ranks_a[c.id] != ranks_b[c.id]
    ]
    changed = [c.id for c in shared if ranks_a[c.id] != ranks_b[c.id]]
    better = sum(rr(ranks_b[i]) > rr(ranks_a[i]) for i in changed)
    worse = sum(rr(ranks_b[i]) < rr(ranks_a[i]) for i in changed)

    def overall(ranks: dict[str, int | None]) -> dict[str, float]:
        return summary_of_ranks(ranks[c.id] for c in shared)

    return {
        "a": a,
        "b": b,
        "cases": len(shared),
        "overall_a": overall(ranks_a),
        "overall_b": overall(ranks_b),
        "b_better": better,
        "b_worse": worse,
        "p_value": round(sign_test(better, worse), 6),
        "differences": diffs,
    }


def write(result: RoutingComparison, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "routing_compare.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    a, b = result["overall_a"], result["overall_b"]
    lines = [
        "# Routing: the same cases against each backend's descriptions",
        "",
        f"A = {result['a']}, B = {result['b']}, {result['cases']} cases, hybrid search.",
        "",
        "| | top-1 | top-3 | MRR |",
        "|---|---:|---:|---:|",
        f"| A | {a['top1']:.3f} | {a['top3']:.3f} | {a['mrr']:.3f} |",
        f"| B | {b['top1']:.3f} | {b['top3']:.3f} | {b['mrr']:.3f} |",
        "",
        f"Paired: B ranks the right tool higher in {result['b_better']} cases, lower in "
        f"{result['b_worse']} (sign test p = {result['p_value']}).",
        "",
        "| case | expected | rank A | rank B |",
        "|---|---|---:|---:|",
    ]
    lines += [
        f"| {d['text'][:70]} | {d['expected']} | {d['rank_a']} | {d['rank_b']} |"
        for d in result["differences"][:50]
    ]
    path = out / "routing_compare.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
