"""The fuzz run's records: a case, its findings (the one Finding), per-tool statistics, the
report and the run's configuration."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from evals.run.fuzz_checks import GRADES, RULES, STILL_SERVING, fails, rule_named
from evals.run.fuzz_survival import CutShort
from evals.run.schema_edges import DroppedEdge
from ocm_common.findings import Finding, Skipped
from ocm_common.json_types import Arguments, JsonValue
from ocm_common.run_record import Status, status_for

PROFILES: dict[str, dict[str, int]] = {
    # inside `make test`: a smoke run of every mutation family on every tool, health-checked
    # after every case; the whole run within 10 minutes (--deadline)
    "default": {"valid": 8, "invalid": 40, "health_every": 1, "deadline_s": 600},
    # `make fuzz`: health-checked after every 10th case and after every case that failed
    # (tools/list costs ~5x an input error in process, so this keeps the run near 25 minutes);
    # cut short after an hour
    "large": {"valid": 200, "invalid": 1000, "health_every": 10, "deadline_s": 3600},
}
# Exit statuses of `evals fuzz`: a run that called nothing checked nothing, so it is neither
# a pass nor a failure of the target. A run cut short (deadline, restart cap, a server that
# cannot be started again) exits 2 unless it already has failing findings (1); one stopped by
# SIGINT/SIGTERM exits 130.
EXIT_OK, EXIT_FAILED, EXIT_HARNESS, EXIT_NOTHING_CALLED = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
VALID_FAMILY = "generated"
KNOWN_FAMILY = "known_good"  # an input from the examples file or a golden scenario
EDGE_FAMILY = "schema_edge"  # a boundary case from the published schema (schema_edges.py)


@dataclass
class Case:
    tool: str
    kind: str  # "valid" or "invalid"
    family: str  # how the case was made: "generated", "wrong_type", "hostile_text", ...
    args: Arguments
    fields: list[str] = field(default_factory=list)  # broken fields the error must name
    edge: str = ""  # a boundary case's label ("query: maxLength 1000 words"), else ""

    def short_args(self, limit: int = 300) -> str:
        def shrink(v: JsonValue) -> JsonValue:
            if isinstance(v, str) and len(v) > 60:
                return f"{v[:20]}...<{len(v)} chars>"
            if isinstance(v, list):
                return [shrink(x) for x in v[:5]] + (["..."] if len(v) > 5 else [])
            if isinstance(v, dict):
                return {k: shrink(x) for k, x in v.items()}
            return v

        text = json.dumps(shrink(self.args), ensure_ascii=True)
        return text if len(text) <= limit else text[:limit] + "..."


def finding_for(
    check: str,
    tool: str,
    kind: str,
    family: str,
    message: str,
    args: str,
    seed: int | None = None,
    reproduce: str = "",
    call: str = "",
) -> Finding:
    """One broken rule as the one Finding: its grade and reference from the grading table."""
    rule = rule_named(check)
    return Finding(
        check=check,
        grade=rule.grade,
        message=message,
        tool=tool,
        family=family,
        reference=rule.reference,
        reproduction=reproduce,
        kind=kind,
        args=args,
        seed=seed,
        call=call,
    )


class CaseFailed(AssertionError):
    """Raised inside the property so hypothesis shrinks the case: every failed check's message."""

    def __init__(self, case: Case, problems: list[tuple[str, str]], call: str = ""):
        super().__init__("; ".join(f"[{name}] {message}" for name, message in problems))
        self.case = case
        self.problems = problems
        self.call = call


@dataclass
class EdgeOutcome:
    """One boundary case and how it ended (fuzz_checks.ending), with the checks it broke."""

    edge: str
    ended: str
    failed: list[str] = field(default_factory=list)


@dataclass
class ToolStats:
    tool: str
    valid: int = 0
    invalid: int = 0
    failures: int = 0
    slowest_ms: float = 0.0
    slowest_case: str = ""
    families: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)  # how calls ended (fuzz_checks.Kind)
    edge_summary: str = ""  # per field, the edges exercised (schema_edges.SchemaEdges.summary)
    edges: list[EdgeOutcome] = field(default_factory=list)
    edges_dropped: list[DroppedEdge] = field(default_factory=list)
    restarts: int = 0  # the server died or stopped answering on this tool's cases, restarted
    hangs: int = 0  # calls that timed out while the server still answered tools/list
    shrink_calls: int = 0  # calls made to shrink a server-killing or hanging case
    stopped: str = ""  # why this tool's cases stopped early (a cap, the deadline), else ""
    not_run: list[str] = field(default_factory=list)  # its parts not run when it stopped early

    def edge_counts(self) -> dict[str, int]:
        """How the boundary cases ended: {"answered": n, "not-found": n, "failed": n, ...}."""
        counts: dict[str, int] = {}
        for e in self.edges:
            key = "failed" if e.failed else e.ended
            counts[key] = counts.get(key, 0) + 1
        return counts

    @property
    def tried(self) -> int:
        return self.valid + self.invalid

    def record(self, case: Case, latency_ms: float) -> None:
        if case.kind == "valid":
            self.valid += 1
        else:
            self.invalid += 1
        self.families[case.family] = self.families.get(case.family, 0) + 1
        if latency_ms > self.slowest_ms:
            self.slowest_ms = latency_ms
            self.slowest_case = f"{case.kind}/{case.family} {case.short_args(120)}"


@dataclass
class FuzzReport:
    target: str
    profile: str
    tools: list[ToolStats]
    failures: list[Finding]
    seconds: float
    seed: int | None = None
    databases_unchanged: bool | None = None
    database_note: str = ""
    house_rules: bool = True
    skipped: list[Skipped] = field(default_factory=list)
    cut_short: CutShort | None = None
    restarts: int = 0  # fresh processes after the server died or stopped answering
    notes: list[str] = field(default_factory=list)  # caps hit, cases that did not reproduce

    @property
    def status(self) -> Status:
        """The run record's status: cut_short / interrupted, else by the exit code."""
        if self.cut_short is not None:
            return self.cut_short.status
        return status_for(self.exit_code)

    @property
    def failing(self) -> list[Finding]:
        """The findings that fail the run (warnings and, for other backends, house rules don't)."""
        return [f for f in self.failures if fails(f.grade, house_rules=self.house_rules)]

    @property
    def ok(self) -> bool:
        return not self.failing and self.databases_unchanged is not False

    @property
    def calls(self) -> int:
        """Tool calls made (every case and replay, however it ended, and the calls that
        shrank a case that killed or hung the server)."""
        return sum(sum(t.calls.values()) + t.shrink_calls for t in self.tools)

    @property
    def called_nothing(self) -> bool:
        """No tool was called: every tool skipped (or none listed), so nothing was checked."""
        return self.calls == 0

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failing findings (or changed databases), 2 cut short (without failing
        findings), 3 nothing was called, 130 interrupted."""
        if self.cut_short is not None and self.cut_short.status == "interrupted":
            return EXIT_INTERRUPTED
        if not self.ok:
            return EXIT_FAILED
        if self.cut_short is not None:
            return EXIT_HARNESS
        return EXIT_NOTHING_CALLED if self.called_nothing else EXIT_OK

    def nothing_called_line(self) -> str:
        """'0 calls: N tools skipped (reasons)', the reasons counted."""
        reasons: dict[str, int] = {}
        for s in self.skipped:
            reason = s.reason.split(";")[0]
            reasons[reason] = reasons.get(reason, 0) + 1
        why = "; ".join(f"{n} {reason}" for reason, n in reasons.items()) or "no tool listed"
        return f"0 calls: {len(self.skipped)} tools skipped ({why})"

    def counts(self) -> dict[str, int]:
        return {g: sum(f.grade == g for f in self.failures) for g in GRADES}

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "fuzz",
            "target": self.target,
            "profile": self.profile,
            "seed": self.seed,
            "status": self.status,
            "cut_short": asdict(self.cut_short) if self.cut_short is not None else None,
            "restarts": self.restarts,
            "notes": list(self.notes),
            "ok": self.ok,
            "calls": self.calls,
            "called_nothing": self.called_nothing,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 1),
            "databases_unchanged": self.databases_unchanged,
            "database_note": self.database_note,
            "house_rules": self.house_rules,
            "findings_by_grade": self.counts(),
            "rules": {
                r.name: {"grade": r.grade, "enforces": r.enforces, "reference": r.reference}
                for r in [*RULES.values(), STILL_SERVING]
                if self.house_rules or r.grade != "house"
            },
            "skipped": [asdict(t) for t in self.skipped],
            "tools": [
                {
                    **asdict(t),
                    "tried": t.tried,
                    "slowest_ms": round(t.slowest_ms, 1),
                    "edge_counts": t.edge_counts(),
                }
                for t in self.tools
            ],
            "failures": [f.to_json() for f in self.failures],
        }


@dataclass
class FuzzConfig:
    valid: int
    invalid: int
    error_limit_ms: float = 10_000.0
    call_timeout_s: float = 30.0
    seed: int | None = None  # None: a random one, reported with every failure
    tools: list[str] | None = None
    families: list[str] | None = None  # only these case families ("generated" for valid ones)
    health_every: int = 1
    database: str | None = None  # example database directory; None keeps it in memory
    # this project's conventions (fuzz_checks.py, grade "house"): on for the reference server,
    # opt-in for any other backend
    house_rules: bool = True
    allow_writes: bool = False  # call tools that do not say they are read-only
    examples: dict[str, list[Arguments]] = field(default_factory=dict)  # known-good inputs
    canary: str | None = None  # a secret planted in the server's environment (stdio, inprocess)
    edges: bool = True  # boundary cases from the schema first (schema_edges.py)
    # the whole run (connect, every tool): at the deadline nothing new starts, a call in flight
    # gets `grace_s` more, and the report says what was not reached; None: no deadline
    deadline_s: float | None = None
    grace_s: float = 5.0
    probe_timeout_s: float = 5.0  # tools/list after a call timed out: still answering?
    restarts_per_tool: int = 5  # the server died or stopped answering (or a call hung) this often
    restarts_per_run: int = 20
    shrink_attempts: int = 8  # calls (each in a fresh process) to shrink a server-killing case
