"""The catalogue built in a background thread, so the server answers `initialize` and
`tools/list` at once: reading an in-process reference server, golden examples and the index
take seconds, and a host's handshake timeout is often ten. A call waits for the catalogue."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tool_search.service import ToolSearchService


class BackgroundService:
    """The four answers of a ToolSearchService that is still being built."""

    def __init__(self, build: Callable[[], ToolSearchService]):
        self._service: ToolSearchService | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(
            target=self._build, args=(build,), name="build-catalogue", daemon=True
        )
        self._thread.start()

    def _build(self, build: Callable[[], ToolSearchService]) -> None:
        try:
            self._service = build()
        except BaseException as exc:  # reported to every call, not lost in the thread
            self._error = exc
        finally:
            self._ready.set()

    def get(self) -> ToolSearchService:
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"the catalogue could not be built: {self._error}")
        assert self._service is not None
        return self._service

    def search(self, request: Any) -> dict[str, Any]:
        return self.get().search(request)

    def details(self, request: Any) -> dict[str, Any]:
        return self.get().details(request)

    def categories(self) -> dict[str, Any]:
        return self.get().categories()

    def capability(self, request: Any) -> dict[str, Any]:
        return self.get().capability(request)

    def category_problem(self, value: str) -> Any:
        return self.get().category_problem(value)
