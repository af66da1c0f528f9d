"""`make index`: build opa.db, ohip.db and the Chroma collections from the committed corpus.

Idempotent: a manifest records a hash of the corpus files, the builder code and the
embedding model; when nothing changed the build is skipped. Builds go to a temporary
directory that replaces the old index only when complete, so a failed build never leaves
a half-written index behind.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reference_server.catalog import EMBEDDING_FAMILIES, embedding_family
from reference_server.config import CORPUS_DIR, Settings
from reference_server.embedding import Embedder, LocalMiniLM, embedder_name, make_embedder
from reference_server.embedding_model import packaged_files
from reference_server.index import known_queries, off_tables, off_vector_docs, opa_builder
from reference_server.index.fingerprint import corpus_hash
from reference_server.index.types import VectorDoc
from reference_server.static_embedding import StaticEmbedder, distill, table_path

BATCH = 32
# Long tabular documents (drug groups, fee subsections) lead with what they are about; their
# first 128 tokens carry the names and classes a query matches, at half the embedding cost.
MAX_TOKENS = {"odb_documents": 128, "ohip_chunks": 192}
DEFAULT_MAX_TOKENS = 256


def _build_db(
    path: Path, fill: Callable[[sqlite3.Connection, Path], dict[str, int]], corpus_dir: Path
) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        counts = fill(conn, corpus_dir)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    return counts


def _write_collections(
    chroma_dir: Path,
    collections: dict[str, list[VectorDoc]],
    settings: Settings,
    progress: Progress,
) -> None:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    models: dict[bool, Embedder] = {}
    client = chromadb.PersistentClient(
        path=str(chroma_dir), settings=ChromaSettings(anonymized_telemetry=False)
    )
    total = sum(len(docs) for docs in collections.values())
    task = progress.add_task("embedding chunks", total=total)
    for name, docs in collections.items():
        static = settings.embeds_static(embedding_family(name))
        if static not in models:
            models[static] = make_embedder(
                settings, for_queries=False, static=static, index_dir=chroma_dir.parent
            )
        embedder = models[static]
        if isinstance(embedder, LocalMiniLM | StaticEmbedder):
            embedder.set_max_tokens(MAX_TOKENS.get(name, DEFAULT_MAX_TOKENS))
        collection = client.create_collection(
            name, metadata={"hnsw:space": "cosine", "embedder": embedder.name}
        )
        # Sort by length so each batch pads to similar lengths (dynamic padding stays cheap).
        ordered = sorted(docs, key=lambda d: len(d.text))
        for start in range(0, len(ordered), BATCH):
            batch = ordered[start : start + BATCH]
            vectors = embedder.embed([d.text for d in batch])
            collection.add(
                ids=[d.id for d in batch],
                documents=[d.text for d in batch],
                metadatas=[d.metadata or {"_": ""} for d in batch],  # type: ignore[misc]
                embeddings=vectors.tolist(),  # type: ignore[arg-type]
            )
            progress.advance(task, len(batch))


def _distill_static(
    settings: Settings, index_dir: Path, collections: dict[str, list[VectorDoc]]
) -> dict[str, object]:
    """The static table (static_embedding.py) distilled from the packaged MiniLM over the
    tokenizer's pieces and this corpus's words, written into the index being built."""
    minilm = LocalMiniLM.from_settings(settings.model_copy(update={"embed_model": "packaged"}), 2)
    texts = [d.text for docs in collections.values() for d in docs]
    return distill(
        minilm,
        packaged_files()[1],
        texts,
        table_path(index_dir),
        settings.static_name,
        refit=settings.static_table == "fitted",
    )


def build_index(
    settings: Settings, corpus_dir: Path = CORPUS_DIR, force: bool = False
) -> dict[str, object]:
    """Build the whole index; returns the manifest (skipped=True when already current)."""
    index_dir = settings.index_dir
    embedded_with = embedder_name(settings)
    digest = corpus_hash(corpus_dir, embedded_with)
    manifest_path = index_dir / "manifest.json"
    if not force and manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("corpus_hash") == digest:
            return {**manifest, "skipped": True}

    started = time.perf_counter()
    tmp = index_dir.with_name(index_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as progress:
        step = progress.add_task("building SQLite", total=2)
        opa_counts = _build_db(tmp / "opa.db", opa_builder.build_sql, corpus_dir)
        progress.advance(step)
        off_counts = _build_db(tmp / "ohip.db", off_tables.build_sql, corpus_dir / "off")
        progress.advance(step)
        collections = {
            **opa_builder.vector_documents(corpus_dir),
            **off_vector_docs.vector_documents(corpus_dir / "off"),
        }
        static = None
        if any(settings.embeds_static(f) for f in EMBEDDING_FAMILIES):
            progress.add_task("distilling the static embedding table from MiniLM", total=None)
            static = _distill_static(settings, tmp, collections)
        _write_collections(tmp / "chroma", collections, settings, progress)
        progress.add_task("embedding known query texts", total=None)
        known = known_queries.build(tmp, settings)
    manifest = {
        "corpus_hash": digest,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "embedder": embedded_with,
        "tables": {**opa_counts, **off_counts},
        "collections": {name: len(docs) for name, docs in collections.items()},
        "known_query_vectors": known,
        **({"static_embedding": static} if static else {}),
        "seconds": round(time.perf_counter() - started, 1),
    }
    conn = sqlite3.connect(tmp / "opa.db")
    conn.execute(
        "INSERT INTO ingestion_log (built_at, corpus_hash, documents, sections, embedder, notes) VALUES (?,?,?,?,?,?)",
        (
            manifest["built_at"],
            digest,
            opa_counts["opa_documents"],
            opa_counts["opa_sections"],
            embedded_with,
            json.dumps(manifest["collections"]),
        ),
    )
    conn.commit()
    conn.close()
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(index_dir, ignore_errors=True)
    tmp.rename(index_dir)
    return {**manifest, "skipped": False}
