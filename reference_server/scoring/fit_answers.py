"""The answers a confidence model is fitted and judged on: the main-pass answers of a run log
that carry their confidence's features (`confidence_basis.features`), each marked right or
wrong. Plain JSON is all it reads, so fitting imports nothing of the harness."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONFIDENCE_CHECKS = frozenset({"confidence_range"})


@dataclass(frozen=True)
class Answer:
    case_id: str
    tool: str
    family: str
    features: dict[str, float]
    right: bool
    run: str


def is_right(record: dict[str, Any]) -> bool:
    """Every check passed, the checks on the confidence itself left aside (the rule of
    evals/read/calibration_answers.py's `is_right`)."""
    if record.get("status") == "passed":
        return True
    failed = [c for c in record.get("checks", []) if not c.get("passed")]
    return bool(failed) and all(c.get("check") in CONFIDENCE_CHECKS for c in failed)


def read_answers(run: Path) -> list[Answer]:
    """The main-pass answers of a run log that carry their confidence's features."""
    out = []
    with (run / "scenarios.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            r = json.loads(line)
            if r.get("mode", "default") != "default" or r.get("status") == "error":
                continue
            if r.get("is_error") or any(
                c.get("check") == "tool_error" for c in r.get("checks", [])
            ):
                continue
            basis = (r.get("result") or {}).get("confidence_basis")
            if not isinstance(basis, dict) or not basis.get("family") or not basis.get("features"):
                continue
            out.append(
                Answer(
                    r["id"], r["tool"], basis["family"], basis["features"], is_right(r), run.name
                )
            )
    return out
