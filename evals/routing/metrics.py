"""Routing metrics from ranked tool ids: top-1, top-3 and MRR (reciprocal rank within the first
10, 0 beyond), overall and grouped, and the confusion of the top-1 misses. Accepting metrics
count any tool that answers the case; strict ones only the case's own (first) tool."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from typing_extensions import TypedDict

from evals.routing.cases import RoutingCase

DEPTH = 10


@dataclass(frozen=True)
class Outcome:
    case: RoutingCase
    ranked: tuple[str, ...]

    @property
    def rank(self) -> int | None:
        """1-based rank of the first expected tool in the ranking, None when absent."""
        return next((i + 1 for i, t in enumerate(self.ranked) if t in self.case.expected), None)

    @property
    def strict_rank(self) -> int | None:
        """1-based rank of the case's own tool (its first expected), None when absent."""
        own = self.case.expected[0]
        return next((i + 1 for i, t in enumerate(self.ranked) if t == own), None)

    @property
    def top1(self) -> bool:
        return self.rank == 1

    @property
    def top3(self) -> bool:
        return self.rank is not None and self.rank <= 3

    @property
    def reciprocal_rank(self) -> float:
        return 1.0 / self.rank if self.rank else 0.0


def summary_of_ranks(ranks: Iterable[int | None]) -> dict[str, float]:
    """top-1, top-3 and MRR of 1-based ranks (None: not in the first DEPTH)."""
    rows = list(ranks)
    n = len(rows)
    if not n:
        return {"cases": 0, "top1": 0.0, "top3": 0.0, "mrr": 0.0}
    return {
        "cases": n,
        "top1": round(sum(r == 1 for r in rows) / n, 4),
        "top3": round(sum(r is not None and r <= 3 for r in rows) / n, 4),
        "mrr": round(sum(1.0 / r for r in rows if r) / n, 4),
    }


def summary(outcomes: Iterable[Outcome], strict: bool = False) -> dict[str, float]:
    return summary_of_ranks(o.strict_rank if strict else o.rank for o in outcomes)


def grouped(
    outcomes: Iterable[Outcome], key: str, strict: bool = False
) -> dict[str, dict[str, float]]:
    """Summaries per expected tool (`tool`), per catalogue or per case source."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        name = {
            "tool": o.case.expected[0],
            "catalogue": o.case.catalogue,
            "source": o.case.source.split(":")[0].split(" ")[0],
            "family": o.case.source,
        }[key]
        groups[name].append(o)
    return {name: summary(rows, strict) for name, rows in sorted(groups.items())}


class ConfusionRow(TypedDict):
    expected: str
    ranked_first: str
    cases: int


def confusion(outcomes: Iterable[Outcome]) -> list[ConfusionRow]:
    """Which tool took which tool's questions (top-1 misses), most frequent first."""
    counts: Counter[tuple[str, str]] = Counter(
        (o.case.expected[0], o.ranked[0] if o.ranked else "(nothing)")
        for o in outcomes
        if not o.top1
    )
    return [
        ConfusionRow(expected=e, ranked_first=f, cases=n)
        for (e, f), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
