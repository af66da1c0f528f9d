"""The parallel profile's report: each guarantee checked (held or missed), the misses also sent
out on the conformance event stream as Findings, the console table and the typed result."""

from __future__ import annotations

from dataclasses import dataclass, field

from ocm_common.findings import Event, EventStream, Finding
from ocm_common.profile_results import ParallelFinding, ParallelMeasurements, ParallelResult


@dataclass
class Guarantee:
    """One guarantee checked (held or not); a miss also goes out on the conformance event
    stream as the one Finding (grade house: this project's concurrency guarantees)."""

    check: str
    subject: str
    passed: bool
    detail: str


@dataclass
class ParallelReport:
    findings: list[Guarantee] = field(default_factory=list)
    measurements: ParallelMeasurements = field(default_factory=ParallelMeasurements)
    events: EventStream = field(default_factory=EventStream)

    @property
    def passed(self) -> bool:
        return bool(self.findings) and all(f.passed for f in self.findings)

    def add(self, check: str, subject: str, passed: bool, detail: str) -> None:
        self.findings.append(Guarantee(check, subject, passed, detail))
        name = f"parallel_{check}"
        if passed:
            self.events.emit(Event("passed", "parallel", text=f"({check}) {subject}: {detail}"))
        else:
            miss = Finding(name, "house", detail, tool=subject, family="parallel")
            self.events.found("parallel", miss)

    def table(self) -> str:
        lines = ["parallel profile:"]
        for f in self.findings:
            lines.append(
                f"  {'ok  ' if f.passed else 'MISS'} ({f.check}) {f.subject:22} {f.detail}"
            )
        failed = [f for f in self.findings if not f.passed]
        lines.append(
            "parallel: every guarantee held"
            if not failed
            else f"parallel: {len(failed)} miss(es): "
            + ", ".join(sorted({f"({f.check}) {f.subject}" for f in failed}))
        )
        return "\n".join(lines)

    def result(self) -> ParallelResult:
        """The profile's result: the verdict made here, each finding and the measurements."""
        return ParallelResult(
            passed=self.passed,
            findings=[ParallelFinding(**f.__dict__) for f in self.findings],
            measurements=self.measurements,
        )
