"""Query embeddings that arrive together run as one model call.

Tool steps run in a thread pool, so under load several calls in one process want a query vector
at the same time; the model runs one batch at a time, and per text a batch of 8 costs about
0.7x the CPU of 8 single runs, with the same vectors. A call that finds the model idle runs at
once, alone: no timer, no wait. Calls that arrive while it is busy queue; when the running batch
ends, the oldest queued call becomes the leader and runs every queued text (up to `max_batch`)
in one `inner.embed`, then hands each caller its own rows. So no call waits longer than the
batch ahead of it, and each thread runs at most its own batch.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from reference_server.embedding import Embedder


@dataclass(eq=False)
class _Request:
    """One caller's texts, and what the batch that carried them gave back."""

    texts: list[str]
    leads: bool = False  # this caller runs the next batch
    done: bool = False
    vectors: np.ndarray | None = None
    error: BaseException | None = field(default=None, repr=False)


class BatchingEmbedder:
    """Runs the texts of concurrent `embed` calls through `inner` in shared batches."""

    def __init__(self, inner: Embedder, max_batch: int):
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.max_batch = max_batch
        self._queue: deque[_Request] = deque()
        self._busy = False  # a leader is running a batch (or about to)
        self._changed = threading.Condition()
        self.batches = 0  # model calls made
        self.batched_texts = 0  # texts those calls embedded (after merging duplicates)

    @property
    def mean_batch_size(self) -> float | None:
        """Texts per model call so far (None before the first)."""
        return self.batched_texts / self.batches if self.batches else None

    def embed(self, texts: list[str]) -> np.ndarray:
        request = _Request(list(texts))
        batch: list[_Request] = []
        with self._changed:
            self._queue.append(request)
            if not self._busy:
                self._busy = request.leads = True
            while not (request.leads or request.done):
                self._changed.wait()
            if request.leads:
                batch = self._take_batch()
        if batch:
            self._run(batch)
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _take_batch(self) -> list[_Request]:
        """The oldest queued calls, the leader first, while their distinct texts fit
        `max_batch` (the leader's own texts always go, however many)."""
        batch = [self._queue.popleft()]
        distinct = set(batch[0].texts)
        while self._queue:
            grown = distinct | set(self._queue[0].texts)
            if len(grown) > self.max_batch:
                break
            distinct = grown
            batch.append(self._queue.popleft())
        return batch

    def _run(self, batch: list[_Request]) -> None:
        """One model call for the batch; then the next queued call leads, or the model idles."""
        try:
            distinct = list(dict.fromkeys(t for r in batch for t in r.texts))
            vectors = self.inner.embed(distinct) if distinct else None
            row = {t: i for i, t in enumerate(distinct)}
            for r in batch:
                if vectors is None:
                    r.vectors = np.zeros((0, self.dimension), dtype=np.float32)
                else:
                    r.vectors = vectors[[row[t] for t in r.texts]]
        except BaseException as exc:  # every caller of the batch gets the model's error
            for r in batch:
                r.error = exc
            distinct = []
        finally:
            with self._changed:
                if distinct:
                    self.batches += 1
                    self.batched_texts += len(distinct)
                for r in batch:
                    r.done = True
                if self._queue:
                    self._queue[0].leads = True
                else:
                    self._busy = False
                self._changed.notify_all()
