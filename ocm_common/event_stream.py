"""The one fan-out every command's events travel on: runs emit, reporters subscribe.

The eval runner's events (evals/run/events.py) and the conformance findings
(ocm_common/findings.py) are different things, so each keeps its own event types; how they
reach their listeners is written once, here. A listener that raises is a harness bug, so the
exception propagates instead of being hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

E = TypeVar("E")


@dataclass
class Stream(Generic[E]):
    """Events of one type to every subscribed listener, in subscription order."""

    listeners: list[Callable[[E], None]] = field(default_factory=list)

    def subscribe(self, listener: Callable[[E], None]) -> Callable[[E], None]:
        self.listeners.append(listener)
        return listener

    def unsubscribe(self, listener: Callable[[E], None]) -> None:
        self.listeners.remove(listener)

    def emit(self, event: E) -> None:
        for listener in list(self.listeners):
            listener(event)
