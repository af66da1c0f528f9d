"""The builder and the server hash one list of files through one function."""

from __future__ import annotations

from reference_server.index import build, fingerprint


def test_the_builder_uses_the_servers_fingerprint() -> None:
    assert build.corpus_hash is fingerprint.corpus_hash
    assert all(path.exists() for path in fingerprint.CODE_FILES)
