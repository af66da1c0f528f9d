"""Which model each tool family embeds with: `static_embedding` names the families that take the
static table (comma-separated, in any order, one name per set), every collection is embedded and
searched with its family's model, the index records the families, and a server whose families
need only the table never loads MiniLM."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from reference_server.catalog import ALL_COLLECTIONS, EMBEDDING_FAMILIES, embedding_family
from reference_server.config import Settings
from reference_server.embedding import (
    CollectionEmbedders,
    embedder_name,
    family_embedder_name,
)
from reference_server.embedding_model import MODEL_NAMES
from reference_server.static_embedding import STATIC_NAME


def test_families_read_from_a_comma_separated_variable_sorted_once() -> None:
    settings = Settings.from_env({"OCM_STATIC_EMBEDDING": "odb, adp+odb"})
    assert settings.static_embedding == ("adp", "odb")
    assert settings.embeds_static("odb") and not settings.embeds_static("opa")
    assert Settings.from_env({}).static_embedding == Settings().static_embedding
    with pytest.raises(ValidationError, match="opa"):
        Settings.from_env({"OCM_STATIC_EMBEDDING": "odb,drugs"})


def test_every_collection_belongs_to_one_family() -> None:
    assert {embedding_family(c) for c in ALL_COLLECTIONS} == {"opa", "schedule", "adp", "odb"}
    assert embedding_family("odb_documents") == "odb" and embedding_family("adp_v1") == "adp"
    assert embedding_family("ohip_chunks") == "schedule"
    assert "tool_search" in EMBEDDING_FAMILIES


def test_the_index_name_records_the_static_families() -> None:
    minilm = MODEL_NAMES["packaged"]
    assert embedder_name(Settings(static_embedding=())) == minilm
    both = Settings(static_embedding=("odb", "adp"))
    assert embedder_name(both) == f"{minilm}+{STATIC_NAME}[adp,odb]"
    assert family_embedder_name(both, "odb") == STATIC_NAME
    assert family_embedder_name(both, "opa") == minilm
    # tool search keeps its own vectors: the corpus index is named by the corpus families only
    assert embedder_name(Settings(static_embedding=("tool_search",))) == minilm


def test_collections_take_their_familys_embedder_made_on_first_use(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    made: list[bool] = []

    class Described:
        def __init__(self, static: bool) -> None:
            self.static, self.name, self.dimension = static, str(static), 2
            self.hits = self.misses = 1

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0]] * len(texts)

    def make(settings: Settings, for_queries: bool = True, *, static: bool = False, index_dir=None):  # type: ignore[no-untyped-def]
        made.append(static)
        return Described(static)

    monkeypatch.setattr("reference_server.embedding.make_embedder", make)
    embedders = CollectionEmbedders(Settings(static_embedding=("adp", "odb")))
    assert embedders.for_collection("odb_documents").static is True  # type: ignore[attr-defined]
    assert embedders.for_collection("adp_v1") is embedders.for_collection("odb_documents")
    assert made == [True]  # the model is not loaded until a MiniLM collection asks for it
    assert embedders.for_collection("opa_cpso_corpus").static is False  # type: ignore[attr-defined]
    assert made == [True, False] and embedders.hits == 2
