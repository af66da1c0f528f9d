"""Fixtures for harness tests: the fake backend, its golden set, synthetic run logs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from evals.runlog import (  # noqa: E402
    CheckOutcome,
    RunLog,
    RunSummary,
    ScenarioRecord,
)

GOLDEN_FAKE = HERE / "golden_fake"
FAKE_SERVER = HERE / "fake_server.py"
STDIO_SPEC = f"stdio:python {FAKE_SERVER}"


@pytest.fixture
def golden_fake() -> Path:
    return GOLDEN_FAKE


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
    directory: Path, records: list[ScenarioRecord], *, status: str = "complete", error: str | None = None
) -> Path:
    summary = RunSummary(
        status=status,  # type: ignore[arg-type]
        error=error,
        target="synthetic",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00",
        duration_s=1.0,
        modes=sorted({r.mode for r in records}),
    )
    RunLog(summary=summary, records=records).write(directory)
    return directory


@pytest.fixture
def make_log(tmp_path: Path) -> Callable[..., Path]:
    counter = {"n": 0}

    def make(records: list[ScenarioRecord], **kwargs: Any) -> Path:
        counter["n"] += 1
        return write_log(tmp_path / f"run{counter['n']}", records, **kwargs)

    return make
