"""The catalogue built in a background thread, so the server answers `initialize` and
`tools/list` at once: reading an in-process reference server, golden examples and the index
take seconds, and a host's handshake timeout is often ten. A call waits for the catalogue."""

from __future__ import annotations

import threading
from collections.abc import Callable

from reference_server.errors import Problem
from tool_search import models as m
from tool_search.requests import CapabilityRequest, DetailsRequest, SearchRequest
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

    def search(self, request: SearchRequest) -> m.SearchResponse:
        return self.get().search(request)

    def details(self, request: DetailsRequest) -> m.ToolDetailsResponse:
        return self.get().details(request)

    def categories(self) -> m.CategoriesResponse:
        return self.get().categories()

    def capability(self, request: CapabilityRequest) -> m.CapabilityResponse:
        return self.get().capability(request)

    def category_problem(self, value: str) -> Problem | None:
        return self.get().category_problem(value)
