"""Vector search over the Chroma collections, with the project's own embedder.

Queries are embedded here (never by Chroma's default embedding function, which would
download a model). Chunk payloads (text + metadata) are immutable once the index is built, so
they are read from Chroma once per collection and kept in memory. Collections up to
`exact_search_max` vectors keep their vectors too and are searched exactly (a flat index, one
matrix product): HNSW is approximate (recall@40 was 0.92 on the ODB collection at Chroma's
default ef_search), and its misses differ between two builds of the same data (the embedded
store and a Chroma server answered differently), which made scores depend on the build rather
than the retrieval model. Larger collections are searched by Chroma's HNSW index, asking only
for ids and distances. Several collections are searched concurrently. Similarity is
1 - cosine distance; ties are broken by chunk id, so answers are reproducible.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

import numpy as np

from reference_server import ranking
from reference_server.config import Settings
from reference_server.embedding import CollectionEmbedders, Embedder
from reference_server.retrieval import chroma_client, flat_scan
from reference_server.retrieval.derived import DerivedValues

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

WHERE_CACHE_SIZE = 256  # distinct metadata filters remembered by `get_where`
# Filtered subsets kept as exact indexes: of an HNSW collection, or a selective filter's rows of
# a flat one (each under half the collection, so at most 8 x 50k vectors, ~600 MB at 384 dims).
SUBSET_CACHE_SIZE = 8
OVERFETCH = 2.0  # broad filters on HNSW: fetch this many times the expected share, then filter
MAX_FETCH = 20_000  # widest unfiltered HNSW fetch (~85 ms at 300k) before Chroma's filter
ID_BATCH = 5000  # ids per Chroma `get` when reading a subset's vectors
_FANOUT = ThreadPoolExecutor(max_workers=6, thread_name_prefix="chroma")

# A value of chunk metadata as Chroma stores it (scalars only: lists are ";"-joined strings).
MetadataValue: TypeAlias = str | int | float | bool
# An embedding as Chroma returns it (a numpy row) or as the embedder gives it (a list).
Vector: TypeAlias = np.ndarray | list[float]
# One chunk's metadata as Chroma returns it (None: no value stored under that key).
ChunkMetadata: TypeAlias = dict[str, MetadataValue | None]
# The filter operators the tools use, `{"field": {"$in": [...]}}` or `{"field": {"$eq": v}}`.
Condition = TypedDict("Condition", {"$in": list[MetadataValue], "$eq": MetadataValue}, total=False)
# A `where` filter in the subset of Chroma's language `_matches` evaluates: field equality, a
# `Condition`, or `{"$and": [filters]}`.
Where: TypeAlias = dict[str, MetadataValue | Condition | list["Where"]]


@dataclass(frozen=True)
class VectorHit:
    id: str
    text: str
    metadata: dict[str, Any]
    similarity: float


@dataclass(frozen=True)
class FlatIndex:
    """Every vector of one collection at unit length, rows in chunk-id order (exact search)."""

    ids: list[str]
    matrix: np.ndarray  # float32, (rows, dim)
    row_of: dict[str, int]

    @classmethod
    def build(cls, vectors: dict[str, Vector]) -> FlatIndex:
        ids = sorted(vectors)
        if not ids:
            return cls([], np.zeros((0, 0), dtype=np.float32), {})
        matrix = np.asarray([vectors[i] for i in ids], dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms == 0, 1.0, norms)
        return cls(ids, matrix, {doc_id: row for row, doc_id in enumerate(ids)})

    def nearest(
        self, vector: list[float], n_results: int, rows: np.ndarray | None, threads: int = 1
    ) -> list[tuple[str, float]]:
        """The n most similar rows (all rows, or only `rows`), by similarity rounded as
        `ranking` states, ties broken by id; a large matrix is scanned on up to `threads`
        threads (flat_scan.py: the same scores)."""
        candidates = np.arange(len(self.ids)) if rows is None else rows
        if len(candidates) == 0 or n_results <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        query = query / norm if norm else query
        if len(candidates) * 2 < len(self.ids):  # a selective filter: score only its rows
            raw = self.matrix[candidates] @ query
        else:
            raw = flat_scan.products(self.matrix, query, threads)
            raw = raw if rows is None else raw[candidates]
        kept = flat_scan.leading(raw, n_results)
        candidates, raw = candidates[kept], raw[kept]
        scores = ranking.similarities(raw)  # last-bit differences between CPUs reorder nothing
        if n_results < len(candidates):
            # Everything tied with the n-th best stays in, so the id tie-break decides.
            cutoff = np.partition(scores, len(scores) - n_results)[len(scores) - n_results]
            keep = scores >= cutoff
            candidates, scores = candidates[keep], scores[keep]
        order = np.lexsort((candidates, -scores))[:n_results]  # rows are in id order
        return [(self.ids[candidates[i]], float(scores[i])) for i in order]


def _matches(metadata: ChunkMetadata, where: Where | None) -> bool:
    """Evaluate the subset of Chroma's `where` language the tools use ($and, $in, equality)."""
    if not where:
        return True
    conjunction = where.get("$and")
    if isinstance(conjunction, list):
        return all(_matches(metadata, w) for w in conjunction)
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


def _where_key(collection: str, where: Where) -> tuple[str, str]:
    return collection, json.dumps(where, sort_keys=True, default=str)


class VectorClient:
    """One Chroma client (embedded or a server, see `chroma_client`), shared; collections and
    their payloads are loaded once."""

    def __init__(self, settings: Settings, embedder: Embedder | CollectionEmbedders):
        self.settings = settings
        self.embedder = embedder
        self._client: Any = None
        self._collections: dict[str, Collection] = {}
        self._payloads: dict[str, dict[str, tuple[str, ChunkMetadata]]] = {}
        self._flat: dict[str, FlatIndex] = {}
        self._lock = threading.Lock()
        # name indexes, per-filter ids, rows and subset indexes, decoded payload views: each
        # built once (retrieval/derived.py); the per-filter families are bounded
        self.derived = DerivedValues()

    def _collection(self, name: str) -> Any:
        with self._lock:
            if self._client is None:
                self._client = chroma_client.connect(self.settings)
            if name not in self._collections:
                collection = self._client.get_collection(name)
                exact = collection.count() <= self.settings.exact_search_max
                include = ["documents", "metadatas"] + (["embeddings"] if exact else [])
                payloads: dict[str, tuple[str, ChunkMetadata]] = {}
                vectors: dict[str, Vector] = {}
                for data in chroma_client.pages(collection, include):
                    for i, doc_id in enumerate(data["ids"]):
                        payloads[doc_id] = (
                            data["documents"][i] or "",
                            dict(data["metadatas"][i] or {}),
                        )
                        if exact:
                            vectors[doc_id] = data["embeddings"][i]
                self._payloads[name] = payloads
                if exact:
                    self._flat[name] = FlatIndex.build(vectors)
                self._collections[name] = collection
            return self._collections[name]

    def embedder_for(self, collection: str) -> Embedder:
        """The query embedder of a collection (its family's model, `CollectionEmbedders`; a
        plain embedder serves every collection)."""
        if isinstance(self.embedder, CollectionEmbedders):
            return self.embedder.for_collection(collection)
        return self.embedder

    def embed_query(self, text: str, collection: str) -> list[float]:
        return self.embedder_for(collection).embed([text])[0].tolist()

    def search(
        self,
        collection: str,
        query: str,
        n_results: int = 10,
        where: Where | None = None,
        query_vector: list[float] | None = None,
    ) -> list[VectorHit]:
        """Nearest chunks matching `where`: exact on a flat index, else `_search_large`."""
        vector = query_vector if query_vector is not None else self.embed_query(query, collection)
        chroma = self._collection(collection)
        payloads = self._payloads[collection]
        if not payloads:
            return []
        flat = self._flat.get(collection)
        if flat is not None:
            rows = self._rows_where(collection, flat, where) if where else None
            if rows is not None and len(rows) > 0 and len(rows) * 2 < len(flat.ids):
                flat, rows = self._flat_subset(collection, flat, where or {}, rows), None
            return self._flat_hits(
                payloads, flat.nearest(vector, n_results, rows, self.settings.exact_scan_threads)
            )
        return self._search_large(collection, chroma, vector, n_results, where)

    def _flat_subset(
        self, collection: str, flat: FlatIndex, where: Where, rows: np.ndarray
    ) -> FlatIndex:
        """A selective filter's rows as their own flat index, copied once per filter.

        Scoring a filter's rows copies them out of the matrix first, and the copy cost as much
        as the product (100x corpus: opa.policy_check's advice filter, 25-30 ms over CPSO's 97k
        vectors). The kept copy gives the same scores (same rows, same product) and the same
        tie-break (rows stay in id order)."""

        def build() -> FlatIndex:
            ids = [flat.ids[row] for row in rows]
            return FlatIndex(ids, flat.matrix[rows], {doc_id: i for i, doc_id in enumerate(ids)})

        key = ("subset_flat", *_where_key(collection, where))
        return self.derived.get(key, build, family="subset_flat", keep=SUBSET_CACHE_SIZE)

    def _search_large(
        self,
        collection: str,
        chroma: Any,
        vector: list[float],
        n_results: int,
        where: Where | None,
    ) -> list[VectorHit]:
        """A collection above the exact-search limit: Chroma's HNSW, unfiltered.

        Chroma applies a `where` filter by checking the metadata of the whole collection, which
        took ~1 s per query at 300k chunks (odb_documents at 100x). So a filter matching few
        chunks is searched exactly over just their vectors (read once per filter), and a broad
        one by an unfiltered HNSW query fetching enough extra hits to filter here; Chroma's own
        filtered query is the fallback when that still comes up short."""
        payloads = self._payloads[collection]
        if where:
            ids = self._ids_where(collection, where)
            if not ids:
                return []
            if len(ids) <= self.settings.exact_search_max:
                subset = self._subset_index(collection, chroma, where, ids)
                return self._flat_hits(
                    payloads,
                    subset.nearest(vector, n_results, None, self.settings.exact_scan_threads),
                )
            # Near-duplicates cluster (synthetic copies especially), so the filtered-out share
            # near a query can be far above the average: widen the fetch before giving up.
            # Fetching n + (chunks the filter rejects) always leaves n that pass.
            enough = min(n_results + len(payloads) - len(ids), len(payloads))
            fetch = int(n_results * OVERFETCH * len(payloads) / len(ids)) + 10
            while True:
                fetch = min(fetch, enough, MAX_FETCH)
                hits = self._hnsw(chroma, payloads, vector, fetch, None, where)
                if len(hits) >= n_results or fetch == enough:
                    return hits[:n_results]
                if fetch == MAX_FETCH:
                    break
                fetch *= 8
        return self._hnsw(chroma, payloads, vector, min(n_results, len(payloads)), where, where)

    @staticmethod
    def _hnsw(
        chroma: Any,
        payloads: dict[str, tuple[str, ChunkMetadata]],
        vector: list[float],
        n_results: int,
        chroma_where: Where | None,
        where: Where | None,
    ) -> list[VectorHit]:
        result = chroma.query(
            query_embeddings=[vector],
            n_results=n_results,
            where=chroma_where or None,
            include=["distances"],
        )
        hits = []
        for doc_id, distance in zip(result["ids"][0], result["distances"][0], strict=True):
            text, metadata = payloads[doc_id]
            if _matches(metadata, where):
                similarity = ranking.similarity(max(0.0, 1.0 - float(distance)))
                hits.append(VectorHit(doc_id, text, metadata, similarity))
        return ranking.best_first(hits, lambda h: h.similarity, lambda h: h.id)

    @staticmethod
    def _flat_hits(
        payloads: dict[str, tuple[str, ChunkMetadata]], found: list[tuple[str, float]]
    ) -> list[VectorHit]:
        return [VectorHit(i, *payloads[i], max(0.0, similarity)) for i, similarity in found]

    def _subset_index(
        self, collection: str, chroma: Any, where: Where, ids: list[str]
    ) -> FlatIndex:
        """The vectors of one filter's chunks as an exact index, read once per filter."""

        def build() -> FlatIndex:
            vectors: dict[str, Vector] = {}
            for start in range(0, len(ids), ID_BATCH):
                data = chroma.get(ids=ids[start : start + ID_BATCH], include=["embeddings"])
                vectors.update(zip(data["ids"], data["embeddings"], strict=True))
            return FlatIndex.build(vectors)

        key = ("subset_flat", *_where_key(collection, where))
        return self.derived.get(key, build, family="subset_flat", keep=SUBSET_CACHE_SIZE)

    def search_many(
        self,
        collections: list[str],
        query: str,
        n_results: int = 10,
        where: Where | None = None,
        query_vector: list[float] | None = None,
    ) -> list[VectorHit]:
        """Search several collections concurrently with one query embedding per model they
        embed with; merged by similarity. `query_vector`: the query's vector when the caller
        has embedded it already, by the model every one of the collections embeds with."""
        by_model: dict[int, list[float]] = {}
        vectors: dict[str, list[float]] = {}
        for name in collections:
            model = self.embedder_for(name)
            if id(model) not in by_model:
                by_model[id(model)] = (
                    query_vector if query_vector is not None else model.embed([query])[0].tolist()
                )
            vectors[name] = by_model[id(model)]
        if len(collections) == 1:
            return self.search(collections[0], query, n_results, where, vectors[collections[0]])
        parts = _FANOUT.map(
            lambda name: self.search(name, query, n_results, where, vectors[name]), collections
        )
        hits = [h for part in parts for h in part]
        return ranking.best_first(hits, lambda h: h.similarity, lambda h: h.id)[:n_results]

    def get(self, collection: str, ids: list[str]) -> list[VectorHit]:
        self._collection(collection)
        payloads = self._payloads[collection]
        return [VectorHit(i, *payloads[i], 1.0) for i in ids if i in payloads]

    def get_where(self, collection: str, where: Where) -> list[VectorHit]:
        """All chunks of a collection matching a metadata filter (no similarity ranking).

        Payloads never change, so the matching ids are computed once per filter (a scan of
        the collection) and remembered: a repeated filter costs its result, not the corpus."""
        self._collection(collection)
        return self.get(collection, self._ids_where(collection, where))

    def _ids_where(self, collection: str, where: Where) -> list[str]:

        def build() -> list[str]:
            payloads = self._payloads[collection]
            return [i for i, (_, m) in payloads.items() if _matches(m, where)]

        key = ("where_ids", *_where_key(collection, where))
        return self.derived.get(key, build, family="where_ids", keep=WHERE_CACHE_SIZE)

    def _rows_where(self, collection: str, flat: FlatIndex, where: Where) -> np.ndarray:
        """Flat-index rows matching a filter, computed once per filter (like `get_where`)."""

        def build() -> np.ndarray:
            matching = self._ids_where(collection, where)
            return np.array(sorted(flat.row_of[i] for i in matching), dtype=np.intp)

        key = ("where_rows", *_where_key(collection, where))
        return self.derived.get(key, build, family="where_rows", keep=WHERE_CACHE_SIZE)

    def ids_by(self, collection: str, field: str, lower: bool = True) -> dict[str, list[str]]:
        """Chunk ids by one metadata field's values (';'-joined lists split), built once.

        Exact look-ups by name (a brand, a DIN, a fee code) need no similarity search and no
        scan per query.
        """

        def build() -> dict[str, list[str]]:
            self._collection(collection)
            index: dict[str, list[str]] = {}
            for doc_id, (_, metadata) in self._payloads[collection].items():
                raw = str(metadata.get(field, ""))
                for value in (raw.lower() if lower else raw).split(";"):
                    if value:
                        index.setdefault(value, []).append(doc_id)
            return index

        return self.derived.get(("ids_by", collection, field, lower), build)


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
