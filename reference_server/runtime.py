"""Shared runtime for all tools: settings, database clients, vector client, embedder.

Created once per server and opened lazily on first use, so building a server (e.g. for
`tools/list`) is cheap and a missing index surfaces as a clear tool error.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable
from functools import cached_property

from reference_server.catalog import ALL_COLLECTIONS
from reference_server.config import Faults, Settings
from reference_server.embedding import CollectionEmbedders
from reference_server.retrieval import opa_freshness
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient
from reference_server.scoring import calibrated

PROCESS_ID = uuid.uuid4().hex[:12]


WarmUpCall = Callable[["Runtime"], Awaitable[None]]
# Per-path and per-tool timeouts for the warm-up calls: a first build may take longer than a
# client call is given (1 s for adp.get's section index at 100x), and it must finish.
WARM_UP_TIMEOUT_MS = 120_000.0


class Runtime:
    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.Lock()
        # one ordinary call per tool (`Tool.warm_up_call`), set by `server.build_server`
        self.warm_up_calls: list[WarmUpCall] = []

    @cached_property
    def opa_sql(self) -> SqlClient:
        return SqlClient(self.settings.opa_db)

    @cached_property
    def ohip_sql(self) -> SqlClient:
        return SqlClient(self.settings.ohip_db)

    @cached_property
    def embedder(self) -> CollectionEmbedders:
        with self._lock:
            return CollectionEmbedders(self.settings)

    @cached_property
    def vectors(self) -> VectorClient:
        return VectorClient(self.settings, self.embedder)

    @cached_property
    def calibration(self) -> calibrated.CalibrationModel:
        """The fitted confidence models (scoring/calibration.yaml), read when the server starts
        (`warm_up`); a file that cannot be read stops the start, naming the problem."""
        return calibrated.load(self.settings.calibration_file or calibrated.MODEL_FILE)

    def _run_warm_up_calls(self) -> None:
        """Run each tool once, so the values it builds once per process (indexes over reference
        tables, decoded documents) exist before the first client call. Built on a client call
        they took up to 1 s at 100x, past the 500 ms SQL timeout: that call lost its SQL path,
        and each call that came before the build finished started one of its own.

        The calls run without the client timeouts (so every build completes) and without
        injected faults, in a thread of
        their own (uvicorn builds the app inside its event loop). A failing call is logged and
        skipped: the tool builds what it needs on its first client call instead.
        """
        if not self.warm_up_calls:
            return
        relaxed = copy.copy(self)  # shares the stores opened above (cached_property values)
        relaxed.settings = self.settings.model_copy(
            update={
                "sql_timeout_ms": WARM_UP_TIMEOUT_MS,
                "vector_timeout_ms": WARM_UP_TIMEOUT_MS,
                "tool_timeout_ms": WARM_UP_TIMEOUT_MS,
                "faults": Faults(),  # injected delays and failures are for client calls
                "rerank": "off",  # a warm-up must not send billable requests to a reranker
            }
        )

        async def run_all() -> None:
            for call in self.warm_up_calls:
                try:
                    await call(relaxed)
                except Exception as exc:  # a warm-up is best effort
                    logging.getLogger(__name__).warning("warm-up call failed: %r", exc)

        thread = threading.Thread(target=asyncio.run, args=(run_all(),), name="warm-up")
        thread.start()
        thread.join()

    def cache_stats(self) -> dict[str, int | str]:
        """This process's cumulative query-embedding cache and batch counts (load runs report the
        hit rate and the mean batch size; no batches counted when batching is off).

        `process` tells apart the processes of a multi-worker server, whose counts are separate.
        """
        embedder = self.__dict__.get("embedder")
        parts = embedder.parts() if embedder is not None else []
        # concurrent misses share model calls (each part's model, when batching is on)
        batchers = [getattr(p, "inner", None) for p in parts]
        return {
            "process": PROCESS_ID,
            "embed_hits": int(getattr(embedder, "hits", 0)),
            "embed_misses": int(getattr(embedder, "misses", 0)),
            "embed_stored": int(getattr(embedder, "stored_hits", 0)),  # misses needing no model
            "embed_batches": sum(int(getattr(b, "batches", 0)) for b in batchers),
            "embed_batched_texts": sum(int(getattr(b, "batched_texts", 0)) for b in batchers),
        }

    def warm_up(self) -> None:
        """Load the model and open the stores now rather than on the first call."""
        self.calibration  # noqa: B018 - read now: a broken file stops the start, not a call
        self.opa_sql.one("SELECT 1 AS ok")
        self.ohip_sql.one("SELECT 1 AS ok")
        for name in ALL_COLLECTIONS:
            self.vectors.search(name, "warm up", n_results=1)
        # The freshness probe's decoded documents: built on a first call, they took over the
        # 500 ms SQL timeout at 100x, so that call answered from the vector path alone.
        opa_freshness.sql_documents(self.opa_sql, None, None)
        opa_freshness.vector_documents(self.vectors)
        self._run_warm_up_calls()
        # What is loaded now lives as long as the process: take it out of the collector's
        # sight, and collect the young generation less often. Full collections re-scanned
        # these long-lived objects and paused every call on the worker, which showed as the
        # tail of paced load; frozen, they are no longer scanned.
        gc.collect()
        gc.freeze()
        gc.set_threshold(5_000, 20, 20)
