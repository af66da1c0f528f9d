"""The one finding and its grade, and the stream findings travel on, for every conformance
command (fuzz, security) and the load side's guarantee checks.

A grade says where the broken rule comes from, so a report can separate protocol violations
from this harness's own judgement:

- ``spec-must`` / ``spec-should``: the MCP specification (2025-11-25) or JSON-RPC 2.0 says
  MUST / SHOULD, and the finding names the section;
- ``security``: a threat the specification leaves to implementers (a stack trace, a leaked
  secret, tool poisoning) that the harness treats as a defect;
- ``house``: this project's own conventions, enforced on the reference server, opt-in for any
  other backend;
- ``warning``: worth a look, never a failure.

Every rule's grade is in one table (``evals/conformance/grading.py``); commands look grades
up there instead of writing their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypedDict

from ocm_common.event_stream import Stream

Grade = Literal["spec-must", "spec-should", "security", "house", "warning"]
GRADES: tuple[Grade, ...] = ("spec-must", "spec-should", "security", "house", "warning")
FAILING_GRADES: frozenset[str] = frozenset({"spec-must", "spec-should", "security"})
Level = Literal["error", "warning"]


def fails(grade: str, *, house_rules: bool = False) -> bool:
    """Whether a finding of this grade fails the run (house rules only where enforced)."""
    return grade in FAILING_GRADES or (house_rules and grade == "house")


class FindingJson(TypedDict):
    """A `Finding` as reports write it: every field, in order."""

    check: str
    grade: str
    message: str
    tool: str | None
    family: str
    level: str
    where: str | None
    evidence: str | None
    reference: str | None
    reproduction: str | None
    kind: str
    args: str
    seed: int | None
    call: str


@dataclass
class Finding:
    """One broken rule on the target.

    ``check`` names the rule (its grade and reference come from the grading table);
    ``family`` the group that found it (a security family, or the fuzz case family);
    ``where`` points at the problem (a JSON pointer, an argument, a header); ``evidence`` is
    the offending text, shortened; ``reproduction`` one line that shows it again. A fuzz case
    also records its kind (valid or invalid), its shrunk arguments, the seed and how the call
    ended."""

    check: str
    grade: str
    message: str
    tool: str | None = None
    family: str = ""
    level: str = ""  # "error" or "warning"; by default from the grade
    where: str | None = None
    evidence: str | None = None
    reference: str | None = None
    reproduction: str | None = None
    kind: str = ""
    args: str = ""
    seed: int | None = None
    call: str = ""

    def __post_init__(self) -> None:
        if self.grade not in GRADES:
            raise ValueError(f"unknown grade {self.grade!r}; grades: {', '.join(GRADES)}")
        if not self.level:
            self.level = "warning" if self.grade in ("warning", "house") else "error"

    @property
    def reproduce(self) -> str:
        return self.reproduction or ""

    def describe(self) -> str:
        how = f" ({self.kind}/{self.family}, {self.call or 'call'})" if self.kind else ""
        tail = f"; args={self.args}; seed={self.seed}" if self.kind else ""
        again = f"; reproduce: {self.reproduction}" if self.reproduction else ""
        return f"[{self.grade}: {self.check}] {self.tool or ''}{how}: {self.message}{tail}{again}"

    def to_json(self) -> FindingJson:
        return {
            "check": self.check,
            "grade": self.grade,
            "message": self.message,
            "tool": self.tool,
            "family": self.family,
            "level": self.level,
            "where": self.where,
            "evidence": self.evidence,
            "reference": self.reference,
            "reproduction": self.reproduction,
            "kind": self.kind,
            "args": self.args,
            "seed": self.seed,
            "call": self.call,
        }


@dataclass(frozen=True)
class Skipped:
    """Something a run did not do, and why (a tool it must not call, a family with nothing
    to call)."""

    tool: str
    reason: str


@dataclass(frozen=True)
class Event:
    """One thing a conformance run reports: ``kind`` is ``finding``, ``skipped``, ``progress``
    or ``passed`` (a guarantee that held); ``finding`` / ``skipped`` carry it."""

    kind: Literal["finding", "skipped", "progress", "passed"]
    source: str  # the command or family emitting it: "fuzz", "security:paths", "parallel"
    finding: Finding | None = None
    skipped: Skipped | None = None
    text: str = ""


Listener = Callable[[Event], None]


class EventStream(Stream[Event]):
    """Every reporter (console, JSON, a collecting report) subscribes; runs only emit (the one
    event stream, ocm_common/event_stream.py, carrying findings)."""

    def found(self, source: str, finding: Finding) -> None:
        self.emit(Event("finding", source, finding=finding))

    def skip(self, source: str, skipped: Skipped) -> None:
        self.emit(Event("skipped", source, skipped=skipped))
