"""Vector search over the Chroma collections, with the project's own embedder.

Queries are embedded here (never by Chroma's default embedding function, which would
download a model) and sent to Chroma as vectors; Chroma does the nearest-neighbour search.
Chunk payloads (text + metadata) are immutable once the index is built, so they are read
from Chroma once per collection and kept in memory: a query asks Chroma only for ids and
distances, which is several times faster than fetching payloads on every query. Several
collections are searched concurrently. Similarity is 1 - cosine distance.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from reference_server.config import Settings
from reference_server.embedding import Embedder
from reference_server.retrieval import chroma_client

WHERE_CACHE_SIZE = 256  # distinct metadata filters remembered by `get_where`
_FANOUT = ThreadPoolExecutor(max_workers=6, thread_name_prefix="chroma")


@dataclass(frozen=True)
class VectorHit:
    id: str
    text: str
    metadata: dict[str, Any]
    similarity: float


def _matches(metadata: dict[str, Any], where: dict[str, Any] | None) -> bool:
    """Evaluate the subset of Chroma's `where` language the tools use ($and, $in, equality)."""
    if not where:
        return True
    if "$and" in where:
        return all(_matches(metadata, w) for w in where["$and"])
    for key, cond in where.items():
        value = metadata.get(key)
        if isinstance(cond, dict):
            if "$in" in cond and value not in cond["$in"]:
                return False
            if "$eq" in cond and value != cond["$eq"]:
                return False
        elif value != cond:
            return False
    return True


class VectorClient:
    """One Chroma client (embedded or a server, see `chroma_client`), shared; collections and
    their payloads are loaded once."""

    def __init__(self, settings: Settings, embedder: Embedder):
        self.settings = settings
        self.embedder = embedder
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._payloads: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {}
        self._indexes: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._where_ids: dict[tuple[str, str], list[str]] = {}
        self._lock = threading.Lock()

    def _collection(self, name: str) -> Any:
        with self._lock:
            if self._client is None:
                self._client = chroma_client.connect(self.settings)
            if name not in self._collections:
                collection = self._client.get_collection(name)
                payloads: dict[str, tuple[str, dict[str, Any]]] = {}
                for data in chroma_client.pages(collection, ["documents", "metadatas"]):
                    for i, doc_id in enumerate(data["ids"]):
                        payloads[doc_id] = (
                            data["documents"][i] or "",
                            dict(data["metadatas"][i] or {}),
                        )
                self._payloads[name] = payloads
                self._collections[name] = collection
            return self._collections[name]

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed([text])[0].tolist()

    def search(
        self,
        collection: str,
        query: str,
        n_results: int = 10,
        where: dict[str, Any] | None = None,
        query_vector: list[float] | None = None,
    ) -> list[VectorHit]:
        """Nearest chunks; `where` is applied by Chroma (exact) and re-checked on the payloads."""
        vector = query_vector if query_vector is not None else self.embed_query(query)
        chroma = self._collection(collection)
        payloads = self._payloads[collection]
        if not payloads:
            return []
        result = chroma.query(
            query_embeddings=[vector],
            n_results=min(n_results, len(payloads)),
            where=where or None,
            include=["distances"],
        )
        hits = []
        for doc_id, distance in zip(result["ids"][0], result["distances"][0], strict=True):
            text, metadata = payloads[doc_id]
            if _matches(metadata, where):
                hits.append(VectorHit(doc_id, text, metadata, max(0.0, 1.0 - float(distance))))
        return hits

    def search_many(
        self,
        collections: list[str],
        query: str,
        n_results: int = 10,
        where: dict[str, Any] | None = None,
    ) -> list[VectorHit]:
        """Search several collections concurrently with one query embedding; merged by similarity."""
        vector = self.embed_query(query)
        if len(collections) == 1:
            return self.search(collections[0], query, n_results, where, vector)
        parts = _FANOUT.map(
            lambda name: self.search(name, query, n_results, where, vector), collections
        )
        hits = [h for part in parts for h in part]
        return sorted(hits, key=lambda h: -h.similarity)[:n_results]

    def get(self, collection: str, ids: list[str]) -> list[VectorHit]:
        self._collection(collection)
        payloads = self._payloads[collection]
        return [VectorHit(i, *payloads[i], 1.0) for i in ids if i in payloads]

    def get_where(self, collection: str, where: dict[str, Any]) -> list[VectorHit]:
        """All chunks of a collection matching a metadata filter (no similarity ranking).

        Payloads never change, so the matching ids are computed once per filter (a scan of
        the collection) and remembered: a repeated filter costs its result, not the corpus."""
        self._collection(collection)
        key = (collection, json.dumps(where, sort_keys=True, default=str))
        ids = self._where_ids.get(key)
        if ids is None:
            payloads = self._payloads[collection]
            ids = [i for i, (_, m) in payloads.items() if _matches(m, where)]
            with self._lock:
                if len(self._where_ids) >= WHERE_CACHE_SIZE:
                    self._where_ids.pop(next(iter(self._where_ids)))
                self._where_ids[key] = ids
        return self.get(collection, ids)

    def ids_by(self, collection: str, field: str, lower: bool = True) -> dict[str, list[str]]:
        """Chunk ids by one metadata field's values (';'-joined lists split), built once.

        Exact look-ups by name (a brand, a DIN, a fee code) need no similarity search and no
        scan per query.
        """
        key = (collection, field + (":lower" if lower else ""))
        if key not in self._indexes:
            self._collection(collection)
            index: dict[str, list[str]] = {}
            for doc_id, (_, metadata) in self._payloads[collection].items():
                raw = str(metadata.get(field, ""))
                for value in (raw.lower() if lower else raw).split(";"):
                    if value:
                        index.setdefault(value, []).append(doc_id)
            with self._lock:
                self._indexes[key] = index
        return self._indexes[key]


class HitsByValue(Mapping[str, list[VectorHit]]):
    """A read-only view: metadata value -> the chunks carrying it, fetched on access."""

    def __init__(self, vectors: VectorClient, collection: str, field: str):
        self._vectors, self._collection = vectors, collection
        self._index = vectors.ids_by(collection, field, lower=False)

    def __getitem__(self, value: str) -> list[VectorHit]:
        return self._vectors.get(self._collection, self._index[value])

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)
