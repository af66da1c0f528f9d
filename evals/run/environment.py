"""What a run measured besides the backend's answers: the model, the index and the machine.

A run log records them so a gate never compares scores made by another embedding model or
another index as if the backend had changed (`evals/read/gate.py` refuses such a pair). Only
the in-process reference server can say which model and index it used; other targets record
the machine alone.
"""

from __future__ import annotations

import json

from evals.run.outcome import BackendIdentity, Overrides
from ocm_common.machine import describe as machine

__all__ = ["backend_identity", "index_fingerprint", "machine"]


def index_fingerprint(overrides: Overrides | None = None) -> str | None:
    """The built index's corpus hash (corpus, builder code and embedding model), or None."""
    from reference_server.config import Settings

    settings = Settings.from_env(None, **(overrides or {}))
    try:
        manifest = json.loads((settings.index_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    value = manifest.get("corpus_hash")
    return str(value) if value else None


def backend_identity(overrides: Overrides) -> BackendIdentity:
    """The embedding model and index fingerprint of an in-process reference server."""
    from reference_server.config import Settings
    from reference_server.embedding import embedder_name

    return {
        "embedding_model": embedder_name(Settings.from_env(None, **overrides)),
        "index_fingerprint": index_fingerprint(overrides),
    }
