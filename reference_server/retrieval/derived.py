"""Values derived from a read-only store, built once per process.

The index never changes while the server runs, so where decoding what a store returns costs
more than reading it (JSON in every row, a dict per chunk), the decoded value can be kept and
shared between calls. `SqlClient.derived` and `VectorClient.derived` hold one each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class DerivedValues:
    """Named values built on first use; callers share them and must not edit them.

    One build per name: callers that arrive while it runs wait for it rather than start their
    own (at 100x a build can outlast the 500 ms SQL timeout; the timed-out call's build goes
    on in its thread, and ten more calls each started another, slowing all of them).
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._building: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()

    def get(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name in self._values:
                return self._values[name]  # type: ignore[no-any-return]
            building = self._building.setdefault(name, threading.RLock())
        with building:  # re-entrant: a build may ask for its own name again
            with self._lock:
                if name in self._values:
                    return self._values[name]  # type: ignore[no-any-return]
            value = build()
            with self._lock:
                self._building.pop(name, None)
                return self._values.setdefault(name, value)  # type: ignore[no-any-return]

    def get_latest(self, name: str, version: Hashable, build: Callable[[], T]) -> T:
        """Like `get`, for a value that also depends on something that changes while the server
        runs (the day): the value of `version` is built once, and it replaces older versions."""
        key = f"{name}@{version}"
        value = self.get(key, build)
        with self._lock:
            for old in [k for k in self._values if k.startswith(f"{name}@") and k != key]:
                del self._values[old]
        return value
