"""The light fingerprint module (what the server imports) and the builder agree on the hash."""

from __future__ import annotations

from pathlib import Path

from reference_server.config import CORPUS_DIR
from reference_server.index import build, fingerprint


def test_the_builder_and_the_server_hash_the_same_files() -> None:
    assert tuple(p.resolve() for p in build._CODE_FILES) == fingerprint.CODE_FILES


def test_the_builder_and_the_server_compute_the_same_hash(tmp_path: Path) -> None:
    for corpus in (CORPUS_DIR, tmp_path):
        assert fingerprint.corpus_hash(corpus, "m") == build.corpus_hash(corpus, "m")
