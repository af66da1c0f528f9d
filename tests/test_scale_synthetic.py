"""The synthetic scale generator: marked copies of every record, in the real shapes, in a
separate index; the real index is never touched."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings as ChromaSettings
from rich.progress import Progress

from evals.run.scenario import load_scenarios
from reference_server.catalog import OHIP_FEES_BM25, OPA_SECTIONS_BM25
from reference_server.config import Settings
from reference_server.index.synthetic_chroma import scale_collections
from reference_server.index.synthetic_sqlite import corpus_tables, scale_database, sql_roles
from reference_server.index.synthetic_values import (
    PREFIX,
    ROWID_STRIDE,
    Roles,
    mutate_value,
    synthetic_id,
)
from reference_server.ranking import SCORE_DECIMALS
from reference_server.retrieval.bm25_impacts import Bm25Impacts
from reference_server.retrieval.sql import SqlClient

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def test_ids_titles_and_text_are_marked_deterministically() -> None:
    assert synthetic_id("cpso-consent:s01", 3) == "synthetic-3-cpso-consent:s01"
    assert synthetic_id("02471469;02471477", 2) == "synthetic-2-02471469;synthetic-2-02471477"
    text = "Screening for colorectal cancer every two years with FIT"
    assert mutate_value(text, 4) == mutate_value(text, 4)
    assert mutate_value(text, 4) != text and len(mutate_value(text, 4).split()) == len(text.split())
    # JSON keeps its keys, so tools reading structured columns still parse synthetic rows.
    assert mutate_value('{"name": "Ontario Breast Screening"}', 2).startswith('{"name": ')
    # Identifiers inside JSON are ids too: a copy of a program block is another program.
    block = json.loads(mutate_value('{"key": "cervical", "steps": [{"source_id": "a;b"}]}', 2))
    assert block == {
        "key": "synthetic-2-cervical",
        "steps": [{"source_id": "synthetic-2-a;synthetic-2-b"}],
    }


@pytest.mark.parametrize("db", ["opa.db", "ohip.db"])
def test_every_table_gets_marked_copies_and_originals_stay(
    settings: Settings, tmp_path: Path, db: str
) -> None:
    path = tmp_path / db
    shutil.copy2(settings.index_dir / db, path)
    conn = sqlite3.connect(path)
    roles = sql_roles(conn)
    base, fts = corpus_tables(conn)
    tables = base + fts
    assert {"opa_sections", "opa_sections_fts"} <= set(tables) or "odb_drugs" in tables
    before = {t: conn.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall() for t in tables}
    conn.close()
    with Progress(disable=True) as progress:
        counts = scale_database(path, 3, progress)
    conn = sqlite3.connect(path)
    for table, count in counts.items():
        original = before[table]
        assert count == 3 * len(original), table
        real = conn.execute(
            f'SELECT * FROM "{table}" WHERE rowid < ? ORDER BY rowid', (ROWID_STRIDE,)
        ).fetchall()
        assert real == original, f"{table}: real rows changed"
        columns = [d[0] for d in conn.execute(f'SELECT * FROM "{table}" LIMIT 0').description]
        for col in columns:
            role = roles.by_name.get(col)
            if role not in ("id", "title"):
                continue
            values = [
                r[0]
                for r in conn.execute(
                    f'SELECT "{col}" FROM "{table}" WHERE rowid >= ?', (ROWID_STRIDE,)
                )
            ]
            texts = [v for v in values if isinstance(v, str) and v]
            assert all(v.startswith(PREFIX) for v in texts), f"{table}.{col} not marked"
    # FTS rows mirror their base rows (same rowid), so keyword search finds synthetic records.
    if db == "ohip.db":
        pairs = conn.execute(
            "SELECT f.code, s.code FROM ohip_fee_fts f JOIN ohip_fee_schedule s "
            "ON s.rowid = f.rowid WHERE f.rowid >= ?",
            (ROWID_STRIDE,),
        ).fetchall()
        assert pairs and all(a == b and a.startswith(PREFIX) for a, b in pairs)
    if db == "opa.db":
        n = conn.execute(
            "SELECT count(*) FROM opa_sections_fts WHERE opa_sections_fts MATCH 'screening' "
            "AND section_id LIKE 'synthetic-%'"
        ).fetchone()[0]
        assert n > 0
    conn.close()
    # The BM25 impacts are written again for the scaled table: synthetic rows rank, and the
    # ranking is still FTS5's bm25() over the scaled table (idf and average length changed).
    spec = OPA_SECTIONS_BM25 if db == "opa.db" else OHIP_FEES_BM25
    conn = sqlite3.connect(path)
    weights = ", ".join(
        repr(dict(spec.weights).get(d[0], 0.0))
        for d in conn.execute(f"SELECT * FROM {spec.fts_table} LIMIT 0").description
    )
    expected = conn.execute(
        f"SELECT rowid, bm25({spec.fts_table}, {weights}) AS s FROM {spec.fts_table} "
        f'WHERE {spec.fts_table} MATCH \'"screening" OR "visit"\' ORDER BY s, rowid'
    ).fetchall()
    conn.close()
    got = Bm25Impacts(SqlClient(path), spec).top(["screening", "visit"], 10**6)
    assert any(row >= ROWID_STRIDE for row, _ in got)
    # FTS5's bm25() at the precision rankings compare (reference_server.ranking)
    precision = 10.0**-SCORE_DECIMALS
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=0, abs=precision)


def test_no_golden_scenario_names_a_synthetic_record() -> None:
    for scenario in load_scenarios(GOLDEN):
        assert PREFIX not in str(scenario.args).lower(), scenario.id
        assert not any(doc.startswith(PREFIX) for doc in scenario.relevant), scenario.id


def test_collections_get_marked_copies_with_nearby_vectors(tmp_path: Path) -> None:
    source = tmp_path / "src"
    client = chromadb.PersistentClient(
        path=str(source / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(60, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    collection = client.create_collection("opa_test_corpus", metadata={"hnsw:space": "cosine"})
    collection.add(
        ids=[f"doc-{i}:s01" for i in range(60)],
        embeddings=vectors,  # type: ignore[arg-type]
        documents=[f"Guidance paragraph number {i} about screening" for i in range(60)],
        metadatas=[
            {"document_id": f"doc-{i}", "title": f"Doc {i}", "source_org": "cpso", "n": i}
            for i in range(60)
        ],
    )
    out = tmp_path / "out"
    with Progress(disable=True) as progress:
        counts = scale_collections(source, out, 2, Roles({"document_id": "id"}), progress)
    assert counts == {"opa_test_corpus": 120}
    scaled = chromadb.PersistentClient(
        path=str(out / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    ).get_collection("opa_test_corpus")
    copy = scaled.get(ids=["synthetic-1-doc-7:s01"], include=["metadatas", "embeddings"])
    meta = copy["metadatas"][0]  # type: ignore[index]
    assert meta["document_id"] == "synthetic-1-doc-7"
    assert str(meta["title"]).startswith("synthetic 1: ")
    assert meta["source_org"] == "cpso" and meta["n"] == 7
    cosine = float(np.dot(copy["embeddings"][0], vectors[7]))  # type: ignore[index]
    assert 0.8 < cosine < 0.99


def test_a_scaled_index_keeps_the_query_models_of_the_one_it_copies(tmp_path: Path) -> None:
    """The copies' vectors are the originals', so the scaled index serves with the same models:
    the static table (and stored query vectors) go with it, unchanged."""
    from reference_server import static_embedding, stored_query_vectors
    from reference_server.index.synthetic import build_scaled

    source = tmp_path / "index"
    chromadb.PersistentClient(
        path=str(source / "chroma"), settings=ChromaSettings(anonymized_telemetry=False)
    )
    (source / "manifest.json").write_text(json.dumps({"corpus_hash": "described"}))
    kept = (static_embedding.TABLE_FILE, stored_query_vectors.TEXTS_FILE)
    for name in kept:
        (source / name).write_bytes(b"described " + name.encode())
    build_scaled(source, 2, tmp_path / "index-x2")
    for name in kept:
        assert (tmp_path / "index-x2" / name).read_bytes() == (source / name).read_bytes()
