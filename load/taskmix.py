"""The task mix: every tool, with arguments from the golden scenarios that expect a result.

Free-text arguments (`query`, `q`, `question`) get generated variants (neutral lead-ins and
tails that keep the question's meaning) so a run is not a handful of strings the server's
query-embedding cache has already seen; the cache hit rate the server reports shows how well
that worked. Tools are drawn uniformly so each one gets its share of calls.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from ocm_common.golden import GOLDEN_DIR, golden_calls
from ocm_common.golden import GoldenCall as Call

__all__ = ["FREE_TEXT_ARGS", "GOLDEN_DIR", "Call", "TaskMix", "variants"]
FREE_TEXT_ARGS = ("query", "q", "question")
LEAD_INS = (
    "",
    "Question: ",
    "Please advise: ",
    "A clinician asks: ",
    "In Ontario, ",
    "Quick check: ",
)
TAILS = (
    "",
    " Thanks.",
    " (Ontario)",
    " Please cite the source.",
    " What applies?",
    " Details please.",
)


def variants(text: str) -> list[str]:
    """Every lead-in x tail combination of one free-text argument, the original first."""
    return [f"{lead}{text}{tail}" for lead in LEAD_INS for tail in TAILS]


class TaskMix:
    def __init__(self, calls: dict[str, list[Call]], seed: int | None = None):
        if not calls:
            raise ValueError("the task mix has no calls: no golden scenario expects a result")
        self.calls = calls
        self.tools = sorted(calls)
        self._rng = random.Random(seed)

    @classmethod
    def from_golden(cls, golden: Path = GOLDEN_DIR, seed: int | None = None) -> TaskMix:
        by_tool: dict[str, list[Call]] = defaultdict(list)
        for call in golden_calls(golden):
            by_tool[call.tool].append(call)
        return cls(dict(by_tool), seed)

    def originals(self) -> list[Call]:
        return [c for tool in self.tools for c in self.calls[tool]]

    def pick(self, tool: str | None = None, vary: bool = True) -> Call:
        """A random call (uniform over tools), free text varied unless `vary` is off."""
        tool = tool or self._rng.choice(self.tools)
        call = self._rng.choice(self.calls[tool])
        if not vary:
            return call
        args = dict(call.arguments)
        for key in FREE_TEXT_ARGS:
            if isinstance(args.get(key), str):
                args[key] = self._rng.choice(variants(args[key]))
        return Call(tool, args, call.scenario)
