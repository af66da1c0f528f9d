"""The query texts a structured look-up makes, and their vectors, stored in the index.

odb.get asked for a DIN, a brand, or a brand and strength runs its vector path on the text
those fields make (`odb_formulary.vector_query`); every such text follows from a formulary row.
Each is embedded here alone (batch of one, one ONNX thread, as the server embeds a query) so
the stored vector is the one the model would compute for that call; the server looks it up
(`stored_query_vectors`). A text left out only costs a model run, never a different answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from reference_server.config import Settings
from reference_server.embedding import LocalMiniLM, embedder_name
from reference_server.retrieval.odb_formulary import vector_query
from reference_server.retrieval.odb_rows import DrugQuery
from reference_server.stored_query_vectors import write

WORKERS = 2  # model sessions embedding at once (each single-threaded, as the server's are)


def drug_queries(ohip_db: Path) -> Iterator[DrugQuery]:
    """The structured odb.get requests every formulary product answers: its DIN, its brand,
    its brand or generic name with the strength as the formulary writes it, and its generic
    name alone."""
    conn = sqlite3.connect(f"file:{ohip_db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT din, brand_name, generic_name, strength FROM odb_drugs ORDER BY din"
        ).fetchall()
    finally:
        conn.close()
    for din, brand, generic, strength in rows:
        yield DrugQuery(din=din)
        for name in (brand, generic):
            if name:
                yield DrugQuery(drug=name)
                if strength:
                    yield DrugQuery(drug=name, strength=strength)


def known_texts(ohip_db: Path) -> list[str]:
    """Each distinct query text, in a stable order."""
    return sorted({vector_query(q) for q in drug_queries(ohip_db)})


def embed_alone(settings: Settings, texts: list[str]) -> np.ndarray:
    """One vector per text, each from its own model run: the bits a query would get."""
    if not texts:
        return np.zeros((0, LocalMiniLM.dimension), dtype=np.float32)
    models = [LocalMiniLM.from_settings(settings, threads=1) for _ in range(WORKERS)]
    shares = [texts[i::WORKERS] for i in range(WORKERS)]

    def embed_share(i: int) -> list[np.ndarray]:
        return [models[i].embed([t])[0] for t in shares[i]]

    with ThreadPoolExecutor(WORKERS) as pool:
        done = list(pool.map(embed_share, range(WORKERS)))
    vectors = np.empty((len(texts), LocalMiniLM.dimension), dtype=np.float32)
    for i, share in enumerate(done):
        vectors[i::WORKERS] = share
    return vectors


def build(index_dir: Path, settings: Settings) -> int:
    """Store the known query texts' vectors next to the index's databases; how many."""
    if settings.embedding != "local" or settings.embeds_static("odb"):
        return 0  # a paid API, or odb's static table: queries are embedded when asked
    texts = known_texts(index_dir / "ohip.db")
    write(index_dir, embedder_name(settings), texts, embed_alone(settings, texts))
    return len(texts)
