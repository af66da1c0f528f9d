"""Runner events and the bus reporters subscribe to (progress bar, logs, anything else).

The runner only emits; it never prints. The bus is the one event stream
(ocm_common/event_stream.py) carrying these events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evals.run.runlog import CheckOutcome, RunSummary, ScenarioRecord
from ocm_common.event_stream import Stream


@dataclass(frozen=True)
class RunStarted:
    target: str
    total: int
    modes: tuple[str, ...]


@dataclass(frozen=True)
class ScenarioStarted:
    scenario_id: str
    tool: str
    mode: str


@dataclass(frozen=True)
class CheckFailed:
    scenario_id: str
    mode: str
    outcome: CheckOutcome


@dataclass(frozen=True)
class ScenarioFinished:
    record: ScenarioRecord


@dataclass(frozen=True)
class RunFinished:
    summary: RunSummary


Event = RunStarted | ScenarioStarted | CheckFailed | ScenarioFinished | RunFinished
Listener = Callable[[Event], None]


class EventBus(Stream[Event]):
    """Fan-out of runner events to subscribed listeners, in subscription order."""
