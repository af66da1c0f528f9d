"""Values derived from a read-only store, built once per process.

The index never changes while the server runs, so where decoding what a store returns costs
more than reading it (JSON in every row, a dict per chunk), the decoded value can be kept and
shared between calls. `SqlClient.derived` and `VectorClient.derived` hold one each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class DerivedValues:
    """Named values built on first use; callers share them and must not edit them."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._lock = threading.Lock()

    def get(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name in self._values:
                return self._values[name]  # type: ignore[no-any-return]
        value = build()  # outside the lock: two first calls may both build; either is kept
        with self._lock:
            return self._values.setdefault(name, value)  # type: ignore[no-any-return]
