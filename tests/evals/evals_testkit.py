"""Helpers for harness tests: synthetic scenario records and run logs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.run.runlog import CheckOutcome, RunLog, RunSummary, ScenarioRecord

HERE = Path(__file__).parent
GOLDEN_FAKE = HERE / "golden_fake"
FAKE_SERVER = HERE / "fake_server.py"
STDIO_SPEC = f"stdio:python {FAKE_SERVER}"


def record(
    scenario_id: str,
    *,
    tool: str = "opa.search_sections",
    status: str = "passed",
    metrics: dict[str, float] | None = None,
    tags: list[str] | None = None,
    mode: str = "default",
    version: int = 1,
    relevant: dict[str, int] | None = None,
    retrieved: list[str] | None = None,
    failure: str | None = None,
) -> ScenarioRecord:
    """A synthetic scenario record (status 'failed' gets one failing check with ``failure``)."""
    checks = [CheckOutcome(check="no_tool_error", passed=True, implicit=True)]
    if status == "failed":
        checks.append(
            CheckOutcome(
                check="equals",
                path="coverage.covered",
                passed=False,
                failure="ValueMismatch",
                message=failure or "equals at coverage.covered: expected True, got False",
            )
        )
    return ScenarioRecord(
        id=scenario_id,
        title=scenario_id,
        tool=tool,
        version=version,
        tags=tags or [],
        mode=mode,
        status=status,  # type: ignore[arg-type]
        latency_ms=12.0,
        checks=checks,
        relevant=relevant if relevant is not None else ({"d1": 1} if metrics else {}),
        retrieved_ids=retrieved or [],
        metrics=metrics or {},
    )


def write_log(
    directory: Path,
    records: list[ScenarioRecord],
    *,
    status: str = "complete",
    error: str | None = None,
    environment: dict[str, Any] | None = None,
) -> Path:
    summary = RunSummary(
        status=status,  # type: ignore[arg-type]
        error=error,
        target="synthetic",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        duration_s=1.0,
        environment=environment or {},
        modes=sorted({r.mode for r in records}),
    )
    RunLog(summary=summary, records=records).write(directory)
    return directory
