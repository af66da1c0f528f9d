"""What keeps a fuzz run going when the server does not: how a call that got no answer left the
server, why a run or a tool stops early, and the smaller inputs a server-killing case is shrunk
through (each tried in a fresh process by the engine, fuzz.py).

A call that got no answer left the server in one of three states (:data:`FailureHow`):

- ``died``: the process exited, or the connection closed (the session is gone);
- ``stopped answering``: the call timed out and ``tools/list`` gets no answer either;
- ``hung``: the call timed out but ``tools/list`` is still answered (the one call hangs).

The first two need a restart (a fresh process and a new session); each is counted against the
run's caps. Hypothesis never sees these cases fail: a property that shrank against a dead
process would report whatever input happened to come last ("Connection closed" for every one)
as the crashing one. The engine shrinks them itself with :func:`smaller_args`, a bounded
number of attempts, each against a fresh process.

:class:`StopTool` and :class:`StopRun` derive from ``BaseException`` on purpose: hypothesis
treats an ``Exception`` raised in a property as a failing example and shrinks it, while these
must leave the property at once (the deadline passed, a restart cap was hit, the server cannot
be started again).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ocm_common.json_types import Arguments

FailureHow = Literal["died", "stopped answering", "hung"]
NEEDS_RESTART: tuple[str, ...] = ("died", "stopped answering")
CutStatus = Literal["cut_short", "interrupted"]


class StopTool(BaseException):
    """The rest of this tool's cases are not run (its restart or hang cap was hit)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StopRun(BaseException):
    """The run starts nothing more: the deadline passed, the run's restart cap was hit, the
    server could not be started again (``cut_short``), or SIGINT/SIGTERM (``interrupted``)."""

    def __init__(self, reason: str, status: CutStatus = "cut_short") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status: CutStatus = status


@dataclass
class CutShort:
    """Why a run ended early and what it did not reach: tools never started, and per started
    tool the parts (case families, the boundary and generated valid cases, the replay) not run."""

    reason: str
    status: CutStatus = "cut_short"
    not_reached: list[str] = field(default_factory=list)
    unfinished: dict[str, list[str]] = field(default_factory=dict)

    def line(self) -> str:
        parts = [f"cut short: {self.reason}"]
        if self.not_reached:
            parts.append(
                f"{len(self.not_reached)} tools not reached ({', '.join(self.not_reached)})"
            )
        if self.unfinished:
            parts.append(
                "unfinished: "
                + "; ".join(f"{tool} ({', '.join(rest)})" for tool, rest in self.unfinished.items())
            )
        return "; ".join(parts)


def rule_for(how: FailureHow, kind: str) -> str:
    """The graded rule a server-level failure breaks: the server ended or stopped answering
    (``answers``, spec-must); one call hung on an input the schema allows (``answers_in_time``,
    spec-must) or on an invalid one (``no_hang``, a warning)."""
    if how != "hung":
        return "answers"
    return "answers_in_time" if kind == "valid" else "no_hang"


def _smaller_values(value: Any) -> Iterator[Any]:
    """Smaller versions of one JSON value, smallest first (none for null)."""
    if isinstance(value, bool):
        if value:
            yield False
    elif isinstance(value, int | float):
        step = [value - 1] if value >= 1 else [value + 1] if value <= -1 else []
        seen: set[float] = set()
        for smaller in (0, int(value), int(value / 2), *step):
            if abs(smaller) < abs(value) and smaller not in seen:
                seen.add(smaller)
                yield smaller
    elif isinstance(value, str):
        for cut in ("", value[:1], value[: len(value) // 2]):
            if len(cut) < len(value):
                yield cut
    elif isinstance(value, list):
        if value:
            yield []
            yield value[: len(value) // 2]
            yield value[1:]
            for smaller in _smaller_values(value[0]):
                yield [smaller, *value[1:]]
    elif isinstance(value, dict):
        yield from smaller_args(value, required=set())


def smaller_args(args: Arguments, required: set[str]) -> Iterator[Arguments]:
    """Candidate smaller argument objects, one change each, the biggest cuts first: each key
    not in ``required`` dropped, then each value made smaller (numbers toward 0, texts and
    lists shorter, nested objects by the same rule). The caller keeps the ones of the same kind
    (schema-valid or not) as the case being shrunk."""
    seen: set[str] = set()

    def new(candidate: Arguments) -> bool:
        key = json.dumps(candidate, sort_keys=True, default=str)
        if key in seen:
            return False
        seen.add(key)
        return True

    for key in args:
        if key not in required and new(dropped := {k: v for k, v in args.items() if k != key}):
            yield dropped
    for key, value in args.items():
        for smaller in _smaller_values(value):
            if new(changed := {**args, key: smaller}):
                yield changed
