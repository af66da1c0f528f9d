"""The derived dynamic-int8 model: made once, close to the packaged model, and recorded by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reference_server.config import Settings
from reference_server.embedding import LocalMiniLM, embedder_name
from reference_server.embedding_model import MODEL_NAMES, derived_dynamic_int8, packaged_files
from reference_server.index.build import corpus_hash
from reference_server.index.check import index_problem

TEXTS = [
    "Is a continuous glucose monitor covered for a child with type 1 diabetes?",
    "OHIP fee code A007 intermediate assessment",
    "What must a physician do before ending the physician-patient relationship?",
    "Routine practices for hand hygiene in a primary care clinic",
]


def test_the_derived_model_is_made_once_and_reused(settings: Settings) -> None:
    """The configured cache already holds it (the index build made it); asking again neither
    re-derives nor rewrites it, so starting server workers together costs nothing."""
    source, _ = packaged_files()
    first = derived_dynamic_int8(source, settings.model_cache_dir)
    written = first.stat().st_mtime_ns
    again = derived_dynamic_int8(source, settings.model_cache_dir)
    assert again == first and again.stat().st_mtime_ns == written
    assert not [p for p in settings.model_cache_dir.iterdir() if p.is_dir()], "no work dir left"


def test_derived_vectors_stay_close_to_the_packaged_models(settings: Settings) -> None:
    fast = LocalMiniLM.from_settings(settings).embed(TEXTS)
    packaged = LocalMiniLM.from_settings(
        settings.model_copy(update={"embed_model": "packaged"})
    ).embed(TEXTS)
    cosine = (fast * packaged).sum(axis=1)
    assert cosine.min() > 0.97, cosine
    assert not np.allclose(fast, packaged), "the two variants must be different models"
    # Each text is still nearest to itself across the two models (rankings survive).
    assert list((fast @ packaged.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_each_model_names_its_index(settings: Settings, tmp_path: Path) -> None:
    names = {
        embedder_name(settings.model_copy(update={"embed_model": variant}))
        for variant in MODEL_NAMES
    }
    assert names == set(MODEL_NAMES.values())
    custom = embedder_name(settings.model_copy(update={"model_dir": tmp_path}))
    assert str(tmp_path) in custom
    assert len({corpus_hash(tmp_path, name) for name in [*names, custom]}) == 3
    # An index built with the default model is refused by a server set to the packaged one.
    problem = index_problem(settings.model_copy(update={"embed_model": "packaged"}))
    assert problem and "make index" in problem


def test_an_unknown_model_is_rejected_with_the_allowed_values() -> None:
    with pytest.raises(ValueError, match=r"dynamic-int8.*packaged"):
        Settings.from_env({"OCM_EMBED_MODEL": "fp16"})
