"""The optional dynamic-int8 model: made once, close to the packaged (default) model, and
recorded by name, so an index built with one is refused by a server set to the other."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reference_server.config import Settings
from reference_server.embedding import LocalMiniLM, embedder_name, family_embedder_name
from reference_server.embedding_model import MODEL_NAMES, derived_dynamic_int8, packaged_files
from reference_server.index.fingerprint import corpus_hash, index_problem

TEXTS = [
    "Is a continuous glucose monitor covered for a child with type 1 diabetes?",
    "OHIP fee code A007 intermediate assessment",
    "What must a physician do before ending the physician-patient relationship?",
    "Routine practices for hand hygiene in a primary care clinic",
]


@pytest.fixture(scope="module")
def int8_settings(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings for the dynamic-int8 model, derived once into a private cache."""
    cache = tmp_path_factory.mktemp("models")
    return settings.model_copy(update={"embed_model": "dynamic-int8", "model_cache_dir": cache})


def test_the_derived_model_is_made_once_and_reused(int8_settings: Settings) -> None:
    """Asking again neither re-derives nor rewrites it, so server workers starting together
    cost nothing."""
    source, _ = packaged_files()
    first = derived_dynamic_int8(source, int8_settings.model_cache_dir)
    written = first.stat().st_mtime_ns
    again = derived_dynamic_int8(source, int8_settings.model_cache_dir)
    assert again == first and again.stat().st_mtime_ns == written
    assert not [p for p in int8_settings.model_cache_dir.iterdir() if p.is_dir()], "no work dir"


def test_the_default_model_is_the_packaged_float_one(settings: Settings) -> None:
    """The default must be the model whose vectors do not depend on the CPU (embedding_model)."""
    assert Settings().embed_model == "packaged"
    assert family_embedder_name(settings, "opa") == MODEL_NAMES["packaged"]
    # the static table's vectors are a weighted mean summed in a fixed order: CPU-free too
    assert embedder_name(settings).startswith(MODEL_NAMES["packaged"] + "+static")


def test_derived_vectors_stay_close_to_the_packaged_models(
    settings: Settings, int8_settings: Settings
) -> None:
    # A live reading: the int8 kernels are this CPU's (VNNI, AVX2 or ARM's dot product differ in
    # their rounding and saturation). Expected on every one of them: cosine above 0.97.
    fast = LocalMiniLM.from_settings(int8_settings).embed(TEXTS)
    packaged = LocalMiniLM.from_settings(settings).embed(TEXTS)
    cosine = (fast * packaged).sum(axis=1)
    assert cosine.min() > 0.97, cosine
    assert not np.allclose(fast, packaged), "the two variants must be different models"
    # Each text is still nearest to itself across the two models (rankings survive).
    assert list((fast @ packaged.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_each_model_names_its_index(settings: Settings, tmp_path: Path) -> None:
    minilm_only = settings.model_copy(update={"static_embedding": ()})
    names = {
        embedder_name(minilm_only.model_copy(update={"embed_model": variant}))
        for variant in MODEL_NAMES
    }
    assert names == set(MODEL_NAMES.values())
    custom = embedder_name(minilm_only.model_copy(update={"model_dir": tmp_path}))
    assert str(tmp_path) in custom
    assert len({corpus_hash(tmp_path, name) for name in [*names, custom]}) == 3
    # An index built with the default model is refused by a server set to the other one.
    problem = index_problem(settings.model_copy(update={"embed_model": "dynamic-int8"}))
    assert problem and "make index" in problem


def test_an_unknown_model_is_rejected_with_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"dynamic-int8.*packaged"):
        Settings.from_env({"OCM_EMBED_MODEL": "fp16"})
