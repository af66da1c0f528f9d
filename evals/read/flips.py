"""What changed scenario by scenario between two runs: the verdicts that name a regression.

- **Flips:** every shared scenario that went from pass to fail (and back), per tool, with the
  checks B failed, once each.
- **An exact paired test of pass/fail:** McNemar's exact test, one-sided (B fails where A
  passed more often than the reverse), i.e. a binomial test on the discordant pairs, which is
  exact for the handful of flips a tool's dozen scenarios give, where a t-test or a
  randomization test over 0/1 values has little to stand on. Overall is the primary test, at
  ``alpha``; the tools are a second family, Holm-corrected among themselves.
- **Changed facts:** in every shared scenario, each value at a path its checks name that differs
  between A's answer and B's (a price, a fee, a share, a code), whether or not a check failed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from scipy.stats import binomtest

from evals.read import stats
from evals.run.jsonpath import resolve
from evals.run.runlog import ScenarioRecord
from ocm_common.json_types import JsonObject

OVERALL = "overall"


@dataclass(frozen=True)
class Flip:
    scenario: str
    tool: str
    critical: bool
    # B's failed checks, each named once ("check at path: message")
    failures: tuple[str, ...] = ()


@dataclass(frozen=True)
class FlipTest:
    """McNemar's exact test on one scope's pass/fail pairs, one-sided towards B worse."""

    scope: str
    newly_failing: int
    newly_passing: int
    p: float
    p_adjusted: float
    alpha: float

    @property
    def significant(self) -> bool:
        return self.newly_failing > self.newly_passing and self.p_adjusted < self.alpha


@dataclass(frozen=True)
class FactChange:
    scenario: str
    tool: str
    path: str
    a: Any
    b: Any


@dataclass
class Flips:
    newly_failing: list[Flip] = field(default_factory=list)
    newly_passing: list[Flip] = field(default_factory=list)
    tests: list[FlipTest] = field(default_factory=list)
    facts: list[FactChange] = field(default_factory=list)

    @property
    def critical_failing(self) -> list[Flip]:
        return [f for f in self.newly_failing if f.critical]

    @property
    def significant(self) -> list[FlipTest]:
        return [t for t in self.tests if t.significant]

    @property
    def regression(self) -> bool:
        return bool(self.critical_failing or self.significant)


def failure_lines(record: ScenarioRecord) -> tuple[str, ...]:
    """Each failed check once: a check that failed at several positions of one path, or a
    missing id that fails every check reading it, is one line, not a cascade."""
    seen: dict[tuple[str, str], str] = {}
    for c in record.failures():
        key = (c.check, c.path.split("[", 1)[0])
        seen.setdefault(key, c.message or f"{c.check} at {c.path}: {c.failure or 'failed'}")
    if record.status == "error" and not seen:
        seen[("error", "$")] = f"error: {record.error_text or record.harness_error or 'no answer'}"
    return tuple(seen.values())


def exact_test(newly_failing: int, newly_passing: int) -> float:
    """One-sided exact McNemar p-value (1.0 with no discordant pair)."""
    n = newly_failing + newly_passing
    if n == 0:
        return 1.0
    return float(binomtest(newly_failing, n, 0.5, alternative="greater").pvalue)


def _values(result: JsonObject | None, path: str) -> Any:
    if not isinstance(result, dict):
        return None
    found = resolve(result, path)
    return found[0] if len(found) == 1 and "[*]" not in path else found


def _fact_paths(record: ScenarioRecord) -> list[str]:
    return sorted({c.path for c in record.checks if not c.implicit and c.path not in ("", "$")})


def changed_facts(a: ScenarioRecord, b: ScenarioRecord) -> list[FactChange]:
    out = []
    for path in _fact_paths(a):
        va, vb = _values(a.result, path), _values(b.result, path)
        if json.dumps(va, sort_keys=True, default=str) != json.dumps(
            vb, sort_keys=True, default=str
        ):
            out.append(FactChange(a.id, a.tool, path, va, vb))
    return out


def compare_flips(
    records_a: Sequence[ScenarioRecord],
    records_b: Sequence[ScenarioRecord],
    shared: set[str],
    alpha: float,
) -> Flips:
    by_id_b = {r.id: r for r in records_b}
    flips = Flips()
    for a in sorted(records_a, key=lambda r: (r.tool, r.id)):
        b = by_id_b.get(a.id)
        if b is None or a.id not in shared:
            continue
        if a.passed and not b.passed:
            flips.newly_failing.append(
                Flip(a.id, a.tool, a.critical or b.critical, failure_lines(b))
            )
        elif b.passed and not a.passed:
            flips.newly_passing.append(Flip(a.id, a.tool, a.critical or b.critical))
        flips.facts.extend(changed_facts(a, b))
    tools = sorted({r.tool for r in records_a if r.id in shared})

    def counts(tool: str | None) -> tuple[int, int]:
        def n(xs: list[Flip]) -> int:
            return sum(tool is None or f.tool == tool for f in xs)

        return n(flips.newly_failing), n(flips.newly_passing)

    overall = counts(None)
    p_overall = exact_test(*overall)
    flips.tests.append(FlipTest(OVERALL, *overall, p_overall, p_overall, alpha))
    per_tool = [(tool, *counts(tool)) for tool in tools]
    raw = [exact_test(f, p) for _, f, p in per_tool]
    for (tool, f, p), p_raw, p_adj in zip(per_tool, raw, stats.holm(raw), strict=True):
        flips.tests.append(FlipTest(tool, f, p, p_raw, p_adj, alpha))
    return flips


class FlipJson(TypedDict):
    scenario: str
    tool: str
    critical: bool
    failures: list[str]


class PassingJson(TypedDict):
    scenario: str
    tool: str
    critical: bool


class FlipTestJson(TypedDict):
    scope: str
    newly_failing: int
    newly_passing: int
    p: float
    p_adjusted: float
    significant: bool


class FactChangeJson(TypedDict):
    scenario: str
    tool: str
    path: str
    a: Any  # the answers' JSON values at the path
    b: Any


class FlipsJson(TypedDict):
    """The ``flips`` part of compare.json."""

    test: str
    newly_failing: list[FlipJson]
    newly_passing: list[PassingJson]
    tests: list[FlipTestJson]
    changed_facts: list[FactChangeJson]


def to_json(flips: Flips) -> FlipsJson:
    return {
        "test": "McNemar exact, one-sided (binomial on discordant pairs); overall at alpha, "
        "tools Holm-corrected among themselves",
        "newly_failing": [
            {
                "scenario": f.scenario,
                "tool": f.tool,
                "critical": f.critical,
                "failures": list(f.failures),
            }
            for f in flips.newly_failing
        ],
        "newly_passing": [
            {"scenario": f.scenario, "tool": f.tool, "critical": f.critical}
            for f in flips.newly_passing
        ],
        "tests": [
            {
                "scope": t.scope,
                "newly_failing": t.newly_failing,
                "newly_passing": t.newly_passing,
                "p": t.p,
                "p_adjusted": t.p_adjusted,
                "significant": t.significant,
            }
            for t in flips.tests
        ],
        "changed_facts": [
            {"scenario": c.scenario, "tool": c.tool, "path": c.path, "a": c.a, "b": c.b}
            for c in flips.facts
        ],
    }
