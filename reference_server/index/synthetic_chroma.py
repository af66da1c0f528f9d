"""The synthetic copies in the Chroma collections: every chunk copied `factor - 1` times, its
metadata transformed by the same roles as the SQL columns of the same name, its embedding the
original plus small Gaussian noise (no embedding pass per copy).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import Progress

from reference_server.config import Settings
from reference_server.index.synthetic_values import (
    BATCH,
    CATEGORICAL_MAX,
    ID_NAME,
    TITLE,
    Roles,
    refers_to_id,
    synthetic_id,
    synthetic_title,
)
from reference_server.retrieval import chroma_client
from reference_server.retrieval.vector import ChunkMetadata

NOISE_SIGMA = 0.025  # per dimension, for 384-d unit vectors: cosine to the original ~0.9


def metadata_roles(metadatas: list[ChunkMetadata], sql: Roles) -> Roles:
    """Metadata keys: an id if SQL's same name (or what it refers to) is one, else by kind."""
    ids = {name for name, role in sql.by_name.items() if role == "id"}
    roles: dict[str, str] = {}
    for key in {key for m in metadatas for key in m}:
        found = [m[key] for m in metadatas if key in m]
        values = [v for v in found if isinstance(v, str)]
        if len(values) != len(found):  # not all text
            roles[key] = "category"
        elif key in ids or refers_to_id(key, ids) or ID_NAME.search(key):
            roles[key] = "id"
        elif TITLE.search(key):
            roles[key] = "title"
        elif any(v[:1] in ("{", "[") for v in values):
            roles[key] = "text"  # JSON blocks, as in `sql_roles`
        elif len(set(values)) <= CATEGORICAL_MAX and len(set(values)) * 2 < len(values):
            roles[key] = "category"
        else:
            roles[key] = "text"
    return Roles(roles)


def _noisy(vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = vectors + rng.normal(0.0, NOISE_SIGMA, size=vectors.shape).astype(vectors.dtype)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def scale_collections(
    source_dir: Path, out_dir: Path, factor: int, sql: Roles, progress: Progress
) -> dict[str, int]:
    """Copy every collection with `factor - 1` synthetic copies of each chunk; counts."""
    source = chroma_client.connect(Settings(index_dir=source_dir))
    (out_dir / "chroma").mkdir(parents=True, exist_ok=True)
    target = chroma_client.connect(Settings(index_dir=out_dir), writable=True)
    collections = [source.get_collection(c.name) for c in source.list_collections()]
    task = progress.add_task("chroma: chunks", total=sum(c.count() for c in collections) * factor)
    counts: dict[str, int] = {}
    for col in collections:
        rows: dict[str, list[Any]] = {"ids": [], "documents": [], "metadatas": [], "embeddings": []}
        for page in chroma_client.pages(col, ["documents", "metadatas", "embeddings"]):
            for key in rows:
                rows[key].extend(page[key])
        vectors = np.asarray(rows["embeddings"], dtype=np.float32)
        roles = metadata_roles(rows["metadatas"], sql)
        out = target.create_collection(col.name, metadata=col.metadata)
        rng = np.random.default_rng(zlib.crc32(col.name.encode()))
        for k in range(factor):
            ids = rows["ids"] if k == 0 else [synthetic_id(i, k) for i in rows["ids"]]
            docs = (
                rows["documents"]
                if k == 0
                else [synthetic_title(d or "", k) for d in rows["documents"]]
            )
            metas = (
                rows["metadatas"]
                if k == 0
                else [
                    {key: roles.transform(key)(v, k) for key, v in (m or {}).items()}
                    for m in rows["metadatas"]
                ]
            )
            embs = vectors if k == 0 else _noisy(vectors, rng)
            for start in range(0, len(ids), BATCH):
                end = start + BATCH
                out.add(
                    ids=ids[start:end],
                    documents=docs[start:end],
                    metadatas=metas[start:end],
                    embeddings=embs[start:end],
                )
                progress.advance(task, len(ids[start:end]))
        counts[col.name] = out.count()
    return counts
