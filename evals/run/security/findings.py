"""A security run's report: the one :class:`Finding` per problem (ocm_common.findings), graded
by the one grading table, the tools not called, and which families made no calls."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TypedDict

from evals.conformance.grading import (
    AUTH_ERRORS,
    BEST_PRACTICES,
    LIST_CHANGED,
    MCP_SCAN,
    ROOTS_SECURITY,
    SPEC,
    TOOL_NAMES,
    TOOLS_SECURITY,
    TRANSPORT_SECURITY,
)
from ocm_common.findings import GRADES, Finding, FindingJson, Grade, Skipped
from ocm_common.json_types import JsonObject

if TYPE_CHECKING:
    from evals.run.security.session import CallSummary

__all__ = [
    "AUTH_ERRORS",
    "BEST_PRACTICES",
    "LIST_CHANGED",
    "MCP_SCAN",
    "ROOTS_SECURITY",
    "SPEC",
    "TOOLS_SECURITY",
    "TOOL_NAMES",
    "TRANSPORT_SECURITY",
    "Finding",
    "Grade",
    "ReachRow",
    "SecurityReport",
    "Skipped",
]


class ReachRow(TypedDict):
    """One tool and probe of the report's reach table (:func:`.probe.reach_rows`)."""

    tool: str
    probe: str  # the family or check that made the calls
    reached: int
    refused: int  # refused by the server for the probe's own value: checked
    unreached: int
    could_not_reach: list[str]  # each reason once, "<n> x <reason>" when repeated


class CheckRow(TypedDict):
    """One check of the report: its family and findings (None: the family made no call)."""

    name: str
    family: str
    findings: int | None
    made_calls: bool


class SecurityReportJson(TypedDict):
    """``security.json`` (and the run record's body): :meth:`SecurityReport.to_json`."""

    target: str
    exit_code: int
    error: str | None
    calls: int
    families_without_calls: list[str]
    duration_s: float
    counts: dict[Grade, int]
    checks: list[CheckRow]
    findings: list[FindingJson]
    skipped: list[JsonObject]
    notes: list[str]
    reach: list[ReachRow]
    call_log: list[CallSummary]


@dataclass
class SecurityReport:
    """Everything one ``evals security`` run found; ``error`` is set on a harness error."""

    target: str
    checks: dict[str, str] = field(default_factory=dict)  # check name -> family
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: int = 0
    # per family that calls tools (phases calls and after): the calls it made itself; a
    # family with 0 checked nothing, and the report says so instead of "0 findings"
    family_calls: dict[str, int] = field(default_factory=dict)
    call_log: list[CallSummary] = field(default_factory=list)
    # per tool and probe: calls that reached it, were refused for the probe's own value, and
    # the reasons of those that could not reach it (never counted as checked)
    reach: list[ReachRow] = field(default_factory=list)
    duration_s: float = 0.0
    error: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def families_without_calls(self) -> list[str]:
        """The call-based families that made no call (so checked nothing)."""
        return [name for name, n in self.family_calls.items() if n == 0]

    @property
    def called_nothing(self) -> bool:
        return bool(self.family_calls) and not any(self.family_calls.values())

    def skipped_line(self) -> str:
        """'N tools skipped (reasons)', the reasons counted."""
        reasons: dict[str, int] = {}
        for s in self.skipped:
            reason = s.reason.split(";")[0]
            reasons[reason] = reasons.get(reason, 0) + 1
        why = "; ".join(f"{n} {reason}" for reason, n in reasons.items())
        return f"{len(self.skipped)} tools skipped ({why})"

    @property
    def exit_code(self) -> int:
        """0 nothing at error level, 1 findings at error level, 2 harness error, 3 no family
        made a call and nothing was found (nothing was checked by calling)."""
        if self.error:
            return 2
        if self.errors:
            return 1
        return 3 if self.called_nothing and not self.findings else 0

    def to_json(self) -> SecurityReportJson:
        return {
            "target": self.target,
            "exit_code": self.exit_code,
            "error": self.error,
            "calls": self.calls,
            "families_without_calls": self.families_without_calls,
            "duration_s": round(self.duration_s, 3),
            "counts": {grade: sum(f.grade == grade for f in self.findings) for grade in GRADES},
            "checks": [
                {
                    "name": name,
                    "family": family,
                    "findings": None if family in self.families_without_calls else self.count(name),
                    "made_calls": family not in self.families_without_calls,
                }
                for name, family in sorted(self.checks.items())
            ],
            "findings": [f.to_json() for f in self.findings],
            "skipped": [asdict(s) for s in self.skipped],
            "notes": self.notes,
            "reach": self.reach,
            "call_log": self.call_log,
        }

    def unreached_tools(self) -> list[str]:
        """Tools that were called but that no call reached."""
        tools: dict[str, int] = {}
        for row in self.reach:
            tools[row["tool"]] = tools.get(row["tool"], 0) + row["reached"] + row["refused"]
        return sorted(t for t, n in tools.items() if n == 0)

    def count(self, check: str) -> int:
        return sum(f.check == check for f in self.findings)
