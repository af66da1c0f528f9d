"""Which records of a run are answers, whether each was right, and the confidence it stated:
what calibration (evals/read/calibration.py, which defines an answer) measures over."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.derive.case import family_of
from evals.run.jsonpath import PathSyntaxError, resolve
from evals.run.runlog import DEFAULT_MODE, RunLog, ScenarioRecord
from evals.run.tool_descriptors import ToolDescriptorError, builtin, golden_descriptors

DEFAULT_PATH = "confidence"
CONFIDENCE_CHECKS = frozenset({"confidence_range"})
EXPECTS_ERROR = "tool_error"


@dataclass(frozen=True)
class Answer:
    """One answer of a run: whether it was right and the confidence it stated (None: none)."""

    scenario: str
    version: int
    tool: str
    family: str | None
    right: bool
    confidence: float | None


@dataclass(frozen=True)
class SetAside:
    """Main-pass records that are not answers, by reason."""

    harness_errors: int = 0
    expect_error: int = 0
    tool_errors: int = 0


def read_confidence(result: Mapping[str, Any] | None, path: str = DEFAULT_PATH) -> float | None:
    """The one number in [0, 1] at ``path`` (booleans, text, several values or none: None)."""
    if not isinstance(result, Mapping):
        return None
    try:
        values = resolve(result, path)
    except PathSyntaxError:
        return None
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != 1 or len(values) != 1:
        return None
    value = float(numbers[0])
    return value if math.isfinite(value) and 0.0 <= value <= 1.0 else None


def is_right(record: ScenarioRecord) -> bool:
    """Every check passed, the checks on the confidence itself left aside."""
    if record.status == "passed":
        return True
    failed = record.failures()
    return bool(failed) and all(c.check in CONFIDENCE_CHECKS for c in failed)


def answers(
    records: Iterable[ScenarioRecord], path_of: Callable[[str], str] = lambda _: DEFAULT_PATH
) -> tuple[list[Answer], SetAside]:
    """The answers among the main-pass records, and the records set aside by reason."""
    out: list[Answer] = []
    harness = expect_error = tool_errors = 0
    for record in records:
        if record.mode != DEFAULT_MODE:
            continue
        if record.status == "error":
            harness += 1
        elif any(c.check == EXPECTS_ERROR for c in record.checks):
            expect_error += 1
        elif record.is_error:
            tool_errors += 1
        else:
            out.append(
                Answer(
                    record.id,
                    record.version,
                    record.tool,
                    family_of(record.tags),
                    is_right(record),
                    read_confidence(record.result, path_of(record.tool)),
                )
            )
    return out, SetAside(harness, expect_error, tool_errors)


def confidence_paths(log: RunLog) -> tuple[Callable[[str], str], str | None]:
    """Each tool's confidence path from the descriptors the run used (the built-in ones plus
    those beside its golden files when that folder is still there), and a note when the golden
    folder's descriptors could not be read."""
    golden = log.summary.config.get("golden")
    descriptors = builtin()
    note = None
    if isinstance(golden, str) and Path(golden).exists():
        try:
            descriptors = golden_descriptors(golden)
        except ToolDescriptorError as exc:
            note = f"confidence paths: the built-in descriptors ({exc})"
    return (lambda tool: descriptors.of(tool).confidence), note
