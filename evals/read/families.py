"""Accuracy per case family of a run: how many cases, how many right, answers about another
product than the one asked, and the misses, so a derived-set run reads as a table."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from evals.derive.case import family_of
from evals.run.runlog import ScenarioRecord

WRONG_PRODUCT = "WrongProduct"


@dataclass
class FamilyStats:
    family: str
    tool: str
    cases: int = 0
    passed: int = 0
    wrong_product: int = 0
    misses: list[ScenarioRecord] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.passed / self.cases if self.cases else 0.0


def family_stats(records: Iterable[ScenarioRecord]) -> dict[str, FamilyStats]:
    """Per family (from the ``family:<name>`` tag), in name order; untagged records are left out."""
    stats: dict[str, FamilyStats] = {}
    for record in records:
        name = family_of(record.tags)
        if name is None:
            continue
        entry = stats.setdefault(name, FamilyStats(name, record.tool))
        entry.cases += 1
        if record.passed:
            entry.passed += 1
            continue
        entry.misses.append(record)
        if any(c.failure == WRONG_PRODUCT for c in record.checks if not c.passed):
            entry.wrong_product += 1
    return dict(sorted(stats.items()))


def per_tool(stats: dict[str, FamilyStats]) -> dict[str, tuple[int, int]]:
    """(passed, cases) per tool over its families."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for entry in stats.values():
        totals[entry.tool][0] += entry.passed
        totals[entry.tool][1] += entry.cases
    return {tool: (p, n) for tool, (p, n) in sorted(totals.items())}


def markdown(stats: dict[str, FamilyStats], *, misses_per_family: int = 10) -> str:
    """The per-family table, the per-tool totals and the first misses of each family."""
    lines = [
        "| family | tool | cases | right | accuracy | another product, unsaid |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for s in stats.values():
        lines.append(
            f"| {s.family} | {s.tool} | {s.cases} | {s.passed} | {s.accuracy:.1%} | "
            f"{s.wrong_product} |"
        )
    lines += ["", "| tool | cases | right | accuracy |", "|---|---:|---:|---:|"]
    for tool, (passed, cases) in per_tool(stats).items():
        lines.append(f"| {tool} | {cases} | {passed} | {passed / cases:.1%} |")
    for s in stats.values():
        if not s.misses:
            continue
        lines += ["", f"### {s.family}: {len(s.misses)} missed"]
        for record in s.misses[:misses_per_family]:
            args = ", ".join(f"{k}={v!r}" for k, v in record.args.items())
            lines.append(f"- `{record.id}` ({args}): {record.reason()}")
        if len(s.misses) > misses_per_family:
            lines.append(f"- ... {len(s.misses) - misses_per_family} more in the run log")
    return "\n".join(lines) + "\n"


def before_after(before: dict[str, FamilyStats], after: dict[str, FamilyStats]) -> str:
    """Both runs' accuracy per family side by side (a family missing from one run shows '-')."""
    lines = [
        "| family | tool | cases | before | after | another product, unsaid (before -> after) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name in sorted(set(before) | set(after)):
        b, a = before.get(name), after.get(name)
        either = a or b
        tool, cases = (either.tool, either.cases) if either else ("", 0)

        def cell(s: FamilyStats | None) -> str:
            return f"{s.passed}/{s.cases} ({s.accuracy:.1%})" if s else "-"

        wrong = f"{b.wrong_product if b else '-'} -> {a.wrong_product if a else '-'}"
        lines.append(f"| {name} | {tool} | {cases} | {cell(b)} | {cell(a)} | {wrong} |")
    return "\n".join(lines) + "\n"
