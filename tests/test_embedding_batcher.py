"""BatchingEmbedder: concurrent query texts share one model call, each caller gets its own rows."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from reference_server.config import Settings
from reference_server.embedding import CachedEmbedder
from reference_server.embedding_batcher import BatchingEmbedder
from reference_server.stage_timer import EMBED, collecting

DIM = 8
WAIT_S = 10.0


def vector_of(text: str) -> np.ndarray:
    """A vector that depends on the text alone (its SHA-256 bytes), so rows can be told apart."""
    digest = hashlib.sha256(text.encode()).digest()[:DIM]
    return np.frombuffer(digest, dtype=np.uint8).astype(np.float32)


class FakeModel:
    """Records each call's texts and thread; the first call can be held until `release`."""

    name = "fake"
    dimension = DIM

    def __init__(self, hold_first: bool = False, fail_on: str | None = None):
        self.calls: list[list[str]] = []
        self.threads: list[int] = []
        self.release = threading.Event()
        self.entered = threading.Event()
        self._hold = hold_first
        self._fail_on = fail_on

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        self.threads.append(threading.get_ident())
        self.entered.set()
        if self._hold:
            self._hold = False
            assert self.release.wait(WAIT_S)
        if self._fail_on is not None and self._fail_on in texts:
            raise RuntimeError(f"model failed on {self._fail_on}")
        return np.stack([vector_of(t) for t in texts])


class Caller(threading.Thread):
    """One thread calling `embed` once, keeping its answer or its error."""

    def __init__(
        self, batcher: BatchingEmbedder, texts: list[str], together: threading.Barrier | None = None
    ):
        super().__init__(daemon=True)
        self.batcher, self.texts, self.together = batcher, texts, together
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        if self.together is not None:
            self.together.wait(WAIT_S)
        try:
            self.vectors = self.batcher.embed(self.texts)
        except BaseException as exc:
            self.error = exc


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def hold_the_model(batcher: BatchingEmbedder, model: FakeModel, text: str = "first") -> Caller:
    """A caller whose batch is running in the (held) model, so later callers must queue."""
    leader = Caller(batcher, [text])
    leader.start()
    assert model.entered.wait(WAIT_S)
    return leader


def queue_in_order(batcher: BatchingEmbedder, texts_per_caller: list[list[str]]) -> list[Caller]:
    """Start the callers one by one, each queued before the next starts (a known order)."""
    callers = []
    for i, texts in enumerate(texts_per_caller):
        caller = Caller(batcher, texts)
        caller.start()
        wait_until(lambda n=i + 1: len(batcher._queue) == n)
        callers.append(caller)
    return callers


def finish(*callers: Caller) -> None:
    for c in callers:
        c.join(WAIT_S)
        assert not c.is_alive()


def assert_own_rows(caller: Caller) -> None:
    assert caller.error is None
    assert caller.vectors is not None
    np.testing.assert_array_equal(caller.vectors, np.stack([vector_of(t) for t in caller.texts]))


def test_a_call_alone_runs_at_once_in_its_own_thread():
    model = FakeModel()
    batcher = BatchingEmbedder(model, max_batch=16)
    vectors = batcher.embed(["warfarin dose"])
    np.testing.assert_array_equal(vectors, vector_of("warfarin dose")[None, :])
    assert model.calls == [["warfarin dose"]]
    assert model.threads == [threading.get_ident()]
    assert (batcher.batches, batcher.batched_texts) == (1, 1)


def test_calls_queued_behind_a_running_batch_share_the_next_model_call():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=16)
    leader = hold_the_model(batcher, model)
    texts = [f"query {i}" for i in range(6)]
    callers = queue_in_order(batcher, [[t] for t in texts])
    model.release.set()
    finish(leader, *callers)
    assert model.calls == [["first"], texts]
    for c in (leader, *callers):
        assert_own_rows(c)
    assert (batcher.batches, batcher.batched_texts) == (2, 7)
    assert batcher.mean_batch_size == 3.5


def test_threads_released_together_all_get_their_own_rows():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=16)
    leader = hold_the_model(batcher, model)
    together = threading.Barrier(8)
    callers = [Caller(batcher, [f"text {i}", f"other {i}"], together) for i in range(8)]
    for c in callers:
        c.start()
    wait_until(lambda: len(batcher._queue) == 8)
    model.release.set()
    finish(leader, *callers)
    for c in callers:
        assert_own_rows(c)
    assert len(model.calls) == 2  # 16 texts: one batch behind the held one
    assert sorted(model.calls[1]) == sorted(t for c in callers for t in c.texts)


def test_max_batch_is_respected_in_arrival_order():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=3)
    leader = hold_the_model(batcher, model)
    texts = [f"q{i}" for i in range(7)]
    callers = queue_in_order(batcher, [[t] for t in texts])
    model.release.set()
    finish(leader, *callers)
    assert model.calls == [["first"], texts[0:3], texts[3:6], texts[6:7]]
    for c in callers:
        assert_own_rows(c)


def test_a_call_larger_than_max_batch_goes_whole_and_alone():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=2)
    leader = hold_the_model(batcher, model)
    callers = queue_in_order(batcher, [["a", "b", "c"], ["d"]])
    model.release.set()
    finish(leader, *callers)
    assert model.calls == [["first"], ["a", "b", "c"], ["d"]]
    for c in callers:
        assert_own_rows(c)


def test_duplicate_texts_are_embedded_once_and_each_caller_gets_its_rows():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=16)
    leader = hold_the_model(batcher, model)
    callers = queue_in_order(batcher, [["same"], ["same"], ["x", "same", "x"]])
    model.release.set()
    finish(leader, *callers)
    assert model.calls == [["first"], ["same", "x"]]
    for c in callers:
        assert_own_rows(c)
    assert callers[2].vectors is not None and callers[2].vectors.shape == (3, DIM)
    assert batcher.batched_texts == 3  # "first", "same", "x"


def test_a_model_error_reaches_every_caller_of_that_batch_and_only_them():
    model = FakeModel(hold_first=True, fail_on="bad")
    batcher = BatchingEmbedder(model, max_batch=2)
    leader = hold_the_model(batcher, model)
    failing = queue_in_order(batcher, [["ok 1"], ["bad"], ["ok 2"]])
    model.release.set()
    finish(leader, *failing)
    assert model.calls == [["first"], ["ok 1", "bad"], ["ok 2"]]
    assert_own_rows(leader)
    for c in failing[:2]:
        assert isinstance(c.error, RuntimeError) and "bad" in str(c.error)
    assert_own_rows(failing[2])
    np.testing.assert_array_equal(batcher.embed(["after"]), vector_of("after")[None, :])


def test_an_error_alone_is_raised_and_the_batcher_still_works():
    model = FakeModel(fail_on="bad")
    batcher = BatchingEmbedder(model, max_batch=16)
    with pytest.raises(RuntimeError, match="bad"):
        batcher.embed(["bad"])
    assert not batcher._busy
    np.testing.assert_array_equal(batcher.embed(["good"]), vector_of("good")[None, :])
    assert (batcher.batches, batcher.batched_texts) == (1, 1)  # the failed call made none


def test_waiting_for_another_calls_batch_is_timed_as_the_waiters_embed_stage():
    model = FakeModel(hold_first=True)
    batcher = BatchingEmbedder(model, max_batch=16)
    cached = CachedEmbedder(batcher, size=0)
    leader = hold_the_model(batcher, model)
    held_s = 0.2
    timed: dict[str, float] = {}

    def waiter() -> None:
        with collecting() as times:
            cached.embed(["waiting"])
        timed.update(times.seconds)

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    wait_until(lambda: len(batcher._queue) == 1)
    time.sleep(held_s)
    model.release.set()
    thread.join(WAIT_S)
    finish(leader)
    assert timed[EMBED] >= held_s


def test_max_batch_is_read_from_the_environment_and_must_be_positive():
    assert Settings.from_env(env={}).embed_max_batch == 1  # off by default (an option for speed)
    assert Settings.from_env(env={"OCM_EMBED_MAX_BATCH": "16"}).embed_max_batch == 16
    with pytest.raises(ValueError):
        Settings.from_env(env={"OCM_EMBED_MAX_BATCH": "0"})
    with pytest.raises(ValueError):
        BatchingEmbedder(FakeModel(), max_batch=0)


REAL_TEXTS = [
    "Is apixaban covered by the ODB formulary?",
    "limited use code for semaglutide",
    "what does the schedule of benefits pay for a mini assessment",
    "ADP funding for a power wheelchair",
    "coverage",
]


@pytest.fixture(scope="module")
def real_model():
    from reference_server.embedding import LocalMiniLM

    try:
        return LocalMiniLM.from_settings(Settings.from_env(), threads=1)
    except Exception as exc:  # no model file here: nothing to compare
        pytest.skip(f"local model cannot load: {exc}")


class HeldModel:
    """The real model, with its first call held so that the others queue into one batch."""

    def __init__(self, model):
        self.model, self.name, self.dimension = model, model.name, model.dimension
        self.release, self.entered = threading.Event(), threading.Event()
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(WAIT_S)
        return self.model.embed(texts)


# Batched and solo vectors: bit-identical on AVX2 (this project's AMD EPYC), within 3e-8 on an
# SSE-only CPU (qemu-x86_64 -cpu Nehalem: the float kernels sum a padded batch in another
# order). Any CPU stays within the cross-machine noise the rankings are built for
# (`ranking.py`: about 1e-6 on a dot product).
SOLO_TOLERANCE = 1e-6


def test_real_model_batched_vectors_equal_solo_vectors_within_cpu_noise(real_model):
    solo = {t: real_model.embed([t])[0] for t in ["held", *REAL_TEXTS]}
    held = HeldModel(real_model)
    batcher = BatchingEmbedder(held, max_batch=16)
    leader = Caller(batcher, ["held"])
    leader.start()
    assert held.entered.wait(WAIT_S)
    callers = queue_in_order(batcher, [[t] for t in REAL_TEXTS])
    held.release.set()
    finish(leader, *callers)
    assert held.calls == [["held"], REAL_TEXTS]
    for c in callers:
        assert c.error is None and c.vectors is not None
        assert np.allclose(c.vectors[0], solo[c.texts[0]], rtol=0, atol=SOLO_TOLERANCE), c.texts[0]


def test_make_embedder_batches_query_embeddings_only_when_asked(real_model):
    from reference_server.embedding import LocalMiniLM, make_embedder

    on = make_embedder(Settings.from_env(env={"OCM_EMBED_MAX_BATCH": "16"}))
    off = make_embedder(Settings.from_env(env={}))
    assert isinstance(on, CachedEmbedder) and isinstance(on.inner, BatchingEmbedder)
    assert isinstance(off, CachedEmbedder) and isinstance(off.inner, LocalMiniLM)
    assert isinstance(make_embedder(Settings.from_env(env={}), for_queries=False), LocalMiniLM)
