"""Runner events and the bus reporters subscribe to (progress bar, logs, anything else).

The runner only emits; it never prints. A listener that raises is a harness bug, so the bus
lets the exception propagate instead of hiding it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evals.run.runlog import CheckOutcome, RunSummary, ScenarioRecord


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


@dataclass
class EventBus:
    """Fan-out of runner events to subscribed listeners, in subscription order."""

    listeners: list[Listener] = field(default_factory=list)

    def subscribe(self, listener: Listener) -> Listener:
        self.listeners.append(listener)
        return listener

    def unsubscribe(self, listener: Listener) -> None:
        self.listeners.remove(listener)

    def emit(self, event: Event) -> None:
        for listener in list(self.listeners):
            listener(event)
