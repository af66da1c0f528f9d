"""Values derived from a read-only store, built once per process: the one cache the server has.

The index never changes while the server runs, so where decoding what a store returns costs
more than reading it (JSON in every row, a dict per chunk), the decoded value can be kept and
shared between calls. `SqlClient.derived` and `VectorClient.derived` hold one each; values that
depend only on the committed corpus (not on a store) use `PROCESS`.

A value that exists once (a table's index) is kept for the life of the process. A family of
values keyed by what a call asked (one per metadata filter) is bounded with `keep`: beyond it
the oldest member is forgotten, so the cache cannot grow with the variety of requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

T = TypeVar("T")


class DerivedValues:
    """Named values built on first use; callers share them and must not edit them.

    One build per name: callers that arrive while it runs wait for it rather than start their
    own (a slow build can outlast a path's timeout; the timed-out call's build goes on in its
    thread, and every caller arriving meanwhile would otherwise start another, slowing all).
    """

    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}
        self._building: dict[Hashable, threading.RLock] = {}
        self._families: dict[Hashable, OrderedDict[Hashable, None]] = {}
        self._lock = threading.Lock()

    def get(
        self,
        name: Hashable,
        build: Callable[[], T],
        *,
        family: Hashable | None = None,
        keep: int | None = None,
    ) -> T:
        """The value called `name`, built by `build` once. With `family` and `keep`, at most
        `keep` members of the family are kept (the oldest is forgotten first)."""
        with self._lock:
            if name in self._values:
                return cast(T, self._values[name])
            building = self._building.setdefault(name, threading.RLock())
        with building:  # re-entrant: a build may ask for its own name again
            with self._lock:
                if name in self._values:
                    return cast(T, self._values[name])
            value = build()
            with self._lock:
                self._building.pop(name, None)
                kept = self._values.setdefault(name, value)
                if family is not None and keep is not None:
                    self._admit(family, name, keep)
                return cast(T, kept)

    def _admit(self, family: Hashable, name: Hashable, keep: int) -> None:
        members = self._families.setdefault(family, OrderedDict())
        members[name] = None
        while len(members) > keep:
            old, _ = members.popitem(last=False)
            self._values.pop(old, None)

    def members(self, family: Hashable) -> list[Any]:
        """The values a bounded family holds now, oldest first."""
        with self._lock:
            names = list(self._families.get(family, ()))
            return [self._values[n] for n in names if n in self._values]

    def get_latest(self, name: str, version: Hashable, build: Callable[[], T]) -> T:
        """Like `get`, for a value that also depends on something that changes while the server
        runs (the day): the value of `version` is built once, and it replaces older versions."""
        return self.get((name, version), build, family=("latest", name), keep=1)


# Values read from the committed corpus files (not from a store): one per process.
PROCESS = DerivedValues()
