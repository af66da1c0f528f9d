"""Stored query vectors: looked up by token ids, used only for the model that made them, and
equal bit for bit to what the model computes for the same text alone; the query embedder names
each call's stage by where its vectors came from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from reference_server.config import Settings
from reference_server.embedding import (
    CachedEmbedder,
    CollectionEmbedders,
    LocalMiniLM,
    make_embedder,
)
from reference_server.index.known_queries import drug_queries, embed_alone, known_texts
from reference_server.retrieval.odb_formulary import vector_query
from reference_server.stage_timer import StageTimes, collecting
from reference_server.static_embedding import StaticEmbedder
from reference_server.stored_query_vectors import TEXTS_FILE, StoredQueryVectors, write


def lowercase_words(texts: Sequence[str]) -> list[tuple[int, ...]]:
    """A stand-in tokenizer: case-blind, one id per word."""
    return [tuple(hash(w) for w in t.lower().split()) for t in texts]


class CountingModel:
    """A model that returns a vector made from the text's length, and counts what it embeds."""

    name = "counting"
    dimension = 2

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded += texts
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def stored(tmp_path: Path, texts: list[str], model: str = "counting") -> StoredQueryVectors:
    vectors = np.array([[100.0 + i, 0.0] for i in range(len(texts))], dtype=np.float32)
    write(tmp_path, model, texts, vectors)
    found = StoredQueryVectors.load(tmp_path, "counting", lowercase_words)
    assert found is not None
    return found


def test_a_text_is_found_by_its_token_ids_whatever_its_case(tmp_path: Path) -> None:
    vectors = stored(tmp_path, ["DIN 02425483", "Lipitor 20mg"])
    found = vectors.find(["din 02425483", "LIPITOR   20mg", "Is Lipitor covered?"])
    assert set(found) == {"din 02425483", "LIPITOR   20mg"}
    assert found["din 02425483"].tolist() == [100.0, 0.0]
    assert found["LIPITOR   20mg"].tolist() == [101.0, 0.0]
    assert vectors.find([]) == {}


def test_vectors_another_model_made_are_not_used(tmp_path: Path) -> None:
    write(tmp_path, "another-model", ["DIN 1"], np.zeros((1, 2), dtype=np.float32))
    assert StoredQueryVectors.load(tmp_path, "counting", lowercase_words) is None
    assert StoredQueryVectors.load(tmp_path / "none", "counting", lowercase_words) is None


def test_texts_and_vectors_must_pair_up() -> None:
    with pytest.raises(ValueError, match="2 stored query texts but 1 vectors"):
        StoredQueryVectors([(1,), (2,)], np.zeros((1, 2)), lowercase_words)


def test_the_embedder_asks_cache_then_stored_then_model_and_names_the_stage(
    tmp_path: Path,
) -> None:
    model = CountingModel()
    embedder = CachedEmbedder(model, size=8, stored=stored(tmp_path, ["DIN 7"]))
    calls = [["DIN 7"], ["DIN 7"], ["free text"], ["DIN 7", "other"]]
    stages = []
    for texts in calls:
        with collecting(StageTimes()) as times:
            out = embedder.embed(texts)
        stages.append(set(times.as_ms()))
        assert out.shape == (len(texts), 2)
    assert stages == [{"embed_stored"}, {"embed_cached"}, {"embed"}, {"embed"}]
    assert model.embedded == ["free text", "other"]  # never a stored text
    assert embedder.stored_hits == 1  # the second DIN 7 came from the cache
    assert embedder.hits == 2 and embedder.misses == 3


def test_without_a_cache_stored_vectors_still_answer(tmp_path: Path) -> None:
    model = CountingModel()
    embedder = CachedEmbedder(model, size=0, stored=stored(tmp_path, ["DIN 7"]))
    assert embedder.embed(["DIN 7", "x"]).tolist() == [[100.0, 0.0], [1.0, 1.0]]
    assert model.embedded == ["x"]


def test_known_texts_are_those_odb_get_makes_from_each_product(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "ohip.db"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE odb_drugs (din TEXT, brand_name TEXT, generic_name TEXT, strength TEXT)"
    )
    conn.executemany(
        "INSERT INTO odb_drugs VALUES (?,?,?,?)",
        [("02425483", "Lipitor", "ATORVASTATIN", "20mg"), ("00000299", "EES-200", "", "")],
    )
    conn.commit()
    conn.close()
    assert known_texts(db) == sorted(
        {
            "DIN 02425483",
            "Lipitor",
            "Lipitor 20mg",
            "ATORVASTATIN",
            "ATORVASTATIN 20mg",
            "DIN 00000299",
            "EES-200",
        }
    )
    assert {vector_query(q) for q in drug_queries(db)} == set(known_texts(db))


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    try:
        return LocalMiniLM.from_settings(Settings.from_env(), threads=1)
    except FileNotFoundError as missing:
        pytest.skip(f"embedding model not installed: {missing}")


def test_a_vector_embedded_alone_is_the_one_a_query_gets(model: LocalMiniLM) -> None:
    texts = ["DIN 02425483", "Lipitor 20mg", "ATORVASTATIN", "Taro-Dasatinib 20mg"]
    stored_vectors = embed_alone(Settings.from_env(), texts)
    for text, vector in zip(texts, stored_vectors, strict=True):
        assert np.array_equal(model.embed([text])[0], vector), text


def test_token_ids_leave_padding_out_and_ignore_case(model: LocalMiniLM) -> None:
    short, long_, upper = model.token_ids(["DIN 1", "a much longer text than the first", "din 1"])
    assert len(short) < len(long_) and short == upper
    assert short[0] == 101 and short[-1] == 102  # [CLS] ... [SEP], no [PAD] (0)


def test_the_server_embedder_uses_the_index_vectors_when_built(settings: Settings) -> None:
    """The stored texts are odb.get's; when odb embeds with the static table (the default), a
    query there costs no model run anyway, and the index stores none."""
    if settings.embeds_static("odb"):
        assert not (settings.index_dir / TEXTS_FILE).exists()
        odb = CollectionEmbedders(settings).for_collection("odb_documents")
        assert isinstance(odb, CachedEmbedder) and isinstance(odb.inner, StaticEmbedder)
        return
    embedder = make_embedder(settings)
    assert isinstance(embedder, CachedEmbedder)
    assert embedder.stored is not None, "a current local-model index stores query vectors"
    some_din = next(q for q in drug_queries(settings.ohip_db) if q.din)
    text = vector_query(some_din)
    assert set(embedder.stored.find([text, "Is it covered?"])) == {text}
    off = make_embedder(settings.model_copy(update={"stored_query_vectors": False}))
    assert isinstance(off, CachedEmbedder) and off.stored is None
