"""The embedding side of tool search: the reference server's local MiniLM (the same model
code, `reference_server.embedding`), several views of each tool, and an on-disk cache of
the views' vectors so a catalogue of thousands of tools is embedded once, not at every start.

A tool is embedded as a whole (name, title, description, argument names) and as each of
its description's sentences and each argument's description: a short question about one
facet of a tool is then compared with that facet, not with an average of all of them. A
tool's similarity is the best of its views.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from tool_search.ranking_config import RankingConfig, expanded_name
from tool_search.records import ToolRecord
from tool_search.text import split_name

DEFAULT_CACHE_DIR = Path("build/tool_search")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z(`'\"])")


def whole_text(tool: ToolRecord, expand_names: bool = False) -> str:
    args = ", ".join(split_name(p.name) for p in tool.parameters)
    title = f"{tool.title}. " if tool.title else ""
    name = (
        expanded_name(tool.name, tool.title or "", tool.description)
        if expand_names
        else split_name(tool.name)
    )
    return f"{name}. {title}{tool.description} Arguments: {args}."


def views(tool: ToolRecord, config: RankingConfig | None = None) -> list[str]:
    """The texts a tool is embedded as: the whole, then its facets."""
    config = config or RankingConfig()
    out = [whole_text(tool, config.expand_names)]
    sentences = [s.strip() for s in _SENTENCE.split(tool.description) if len(s.split()) >= 4]
    if config.lead_view and sentences:
        out.append(f"{tool.title}. {sentences[0]}" if tool.title else sentences[0])
    if len(sentences) > 1:
        out += sentences
    out += [
        f"{split_name(p.name)}: {p.description}"
        for p in tool.parameters
        if len(p.description.split()) >= 4
    ]
    return list(dict.fromkeys(out))


class VectorCache:
    """Vectors of texts already embedded with one model, in one .npz file."""

    def __init__(self, path: Path | None):
        self.path = path
        self._vectors: dict[str, np.ndarray] = {}
        if path is not None and path.exists():
            with np.load(path) as data:
                self._vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self._dirty = False

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def get(self, text: str) -> np.ndarray | None:
        return self._vectors.get(self.key(text))

    def put(self, text: str, vector: np.ndarray) -> None:
        self._vectors[self.key(text)] = vector
        self._dirty = True

    def save(self) -> None:
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors))
        vectors = np.stack(list(self._vectors.values())) if self._vectors else np.zeros((0, 384))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self.path)
        self._dirty = False


_EMBEDDER: Any = None
_EMBEDDER_LOCK = threading.Lock()


def shared_embedder() -> Any:
    """The reference server's query embedder (local MiniLM with an LRU of query vectors),
    made once per process."""
    global _EMBEDDER
    with _EMBEDDER_LOCK:
        if _EMBEDDER is None:
            from reference_server.config import Settings
            from reference_server.embedding import make_embedder

            settings = Settings.from_env()
            _EMBEDDER = make_embedder(
                settings, for_queries=True, static=settings.embeds_static("tool_search")
            )
        return _EMBEDDER


def shared_name() -> str:
    """The shared embedder's model name, without loading the model."""
    from reference_server.config import Settings
    from reference_server.embedding import family_embedder_name

    return family_embedder_name(Settings.from_env(), "tool_search")


def preload() -> None:
    """Load the shared embedder in the background (a server starts answering meanwhile)."""
    threading.Thread(target=shared_embedder, name="load-embedder", daemon=True).start()


class SemanticIndex:
    """Every view of every tool as a row of one matrix, and which tool each row belongs to."""

    def __init__(
        self,
        tools: list[ToolRecord],
        embedder: Any | None = None,
        cache_dir: Path | None = DEFAULT_CACHE_DIR,
        batch: int = 64,
        config: RankingConfig | None = None,
    ):
        self.config = config or RankingConfig()
        # The model is loaded only when a vector is missing from the cache or a query comes,
        # so a server whose catalogue vectors are cached answers `initialize` at once.
        self._embedder = embedder
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(embedder.name if embedder else shared_name()))
        cache = VectorCache(cache_dir / f"vectors-{name}.npz" if cache_dir else None)
        texts: list[str] = []
        owners: list[int] = []
        for row, tool in enumerate(tools):
            for text in views(tool, self.config):
                texts.append(text)
                owners.append(row)
        missing = list(dict.fromkeys(t for t in texts if cache.get(t) is None))
        inner = getattr(self.embedder, "inner", self.embedder) if missing else None
        for start in range(0, len(missing), batch):  # documents skip the query LRU
            chunk = missing[start : start + batch]
            assert inner is not None
            for text, vector in zip(chunk, inner.embed(chunk), strict=True):
                cache.put(text, vector)
        cache.save()
        dim = int(getattr(embedder, "dimension", 384))
        stored = [cache.get(t) for t in texts]
        self.matrix = (
            np.stack([v for v in stored if v is not None]).astype(np.float32)
            if texts
            else np.zeros((0, dim), dtype=np.float32)
        )
        self.owners = np.array(owners, dtype=np.int64)
        # every tool has at least its whole view, and a tool's views are contiguous rows
        self.starts = np.searchsorted(self.owners, np.arange(len(tools)))
        self.whole_rows = self.starts.copy()
        self.size = len(tools)

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            self._embedder = shared_embedder()
        return self._embedder

    def query_vector(self, query: str) -> np.ndarray:
        return np.asarray(self.embedder.embed([query])[0], dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        """Each tool's best cosine similarity over its views."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        return self.scores_of_vector(self.query_vector(query))

    def scores_of_vector(self, vector: np.ndarray) -> np.ndarray:
        sims = self.matrix @ vector
        best = np.maximum.reduceat(sims, self.starts)
        if self.config.semantic_pool == "max+whole":
            return best + 0.5 * sims[self.whole_rows]
        return best

    def tool_similarities(self, row: int) -> np.ndarray:
        """Cosine similarity of one tool's whole view with every tool's whole view."""
        whole = self.matrix[self.whole_rows]
        return whole @ whole[row]
