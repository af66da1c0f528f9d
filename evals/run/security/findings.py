"""What a security check reports: one :class:`Finding` per problem, graded by where its rule
comes from, so a report can separate protocol violations from this harness's own judgement."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# spec-must / spec-should: the MCP specification (2025-11-25) says MUST / SHOULD and the
# target does not; security: a threat the specification does not rule on (tool poisoning,
# leaked secrets, ...) that this harness treats as a defect; warning: worth a look, not a defect.
Grade = Literal["spec-must", "spec-should", "security", "warning"]
Level = Literal["error", "warning"]

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"
TOOLS_SECURITY = f"{SPEC}/server/tools#security-considerations"
TOOL_NAMES = f"{SPEC}/server/tools#tool-names"
LIST_CHANGED = f"{SPEC}/server/tools#list-changed-notification"
TRANSPORT_SECURITY = f"{SPEC}/basic/transports#security-warning"
AUTH_ERRORS = f"{SPEC}/basic/authorization#error-handling"
ROOTS_SECURITY = f"{SPEC}/client/roots#security-considerations"
BEST_PRACTICES = f"{SPEC}/basic/security_best_practices"
MCP_SCAN = "https://github.com/invariantlabs-ai/mcp-scan"


@dataclass(frozen=True)
class Finding:
    """One problem a check found on the target.

    ``where`` points at the problem (a JSON pointer into the tool surface, an argument or an
    HTTP header); ``evidence`` is the offending text, shortened; ``reproduction`` is one line a
    reader can run or send to see it again.
    """

    check: str
    family: str
    grade: Grade
    level: Level
    message: str
    tool: str | None = None
    where: str | None = None
    evidence: str | None = None
    reference: str | None = None
    reproduction: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Skipped:
    """A tool the run did not call, and why (the run never calls a tool that may change state
    unless told it may)."""

    tool: str
    reason: str


@dataclass
class SecurityReport:
    """Everything one ``evals security`` run found; ``error`` is set on a harness error."""

    target: str
    checks: dict[str, str] = field(default_factory=dict)  # check name -> family
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: int = 0
    call_log: list[dict[str, Any]] = field(default_factory=list)
    duration_s: float = 0.0
    error: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def exit_code(self) -> int:
        """0 nothing at error level, 1 findings at error level, 2 harness error."""
        if self.error:
            return 2
        return 1 if self.errors else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "exit_code": self.exit_code,
            "error": self.error,
            "calls": self.calls,
            "duration_s": round(self.duration_s, 3),
            "counts": {
                grade: sum(f.grade == grade for f in self.findings)
                for grade in ("spec-must", "spec-should", "security", "warning")
            },
            "checks": [
                {"name": name, "family": family, "findings": self.count(name)}
                for name, family in sorted(self.checks.items())
            ],
            "findings": [f.to_json() for f in self.findings],
            "skipped": [asdict(s) for s in self.skipped],
            "notes": self.notes,
            "call_log": self.call_log,
        }

    def count(self, check: str) -> int:
        return sum(f.check == check for f in self.findings)
