"""Is the built index the one this code expects? The server refuses to start when it is not.

Kept apart from `build.py` on purpose: the builder's own source is part of the index hash, so
editing it means rebuilding every index.
"""

from __future__ import annotations

import json
from pathlib import Path

from reference_server.config import CORPUS_DIR, Settings
from reference_server.embedding import embedder_name
from reference_server.index.build import corpus_hash


def index_problem(settings: Settings, corpus_dir: Path = CORPUS_DIR) -> str | None:
    """Why the server must not start on this index (absent, incomplete, or built from another
    corpus, builder or embedding model than this code's), or None when it is current."""
    index_dir = settings.index_dir
    manifest_path = index_dir / "manifest.json"
    parts = (settings.opa_db, settings.ohip_db, settings.chroma_dir)
    missing = [p.name for p in parts if not p.exists()]
    if not manifest_path.exists() or missing:
        what = ", ".join(missing) or "manifest.json"
        return f"the corpus index at {index_dir} is missing ({what}): run `make index` first"
    try:
        built = json.loads(manifest_path.read_text()).get("corpus_hash")
    except (OSError, ValueError) as exc:
        return f"the corpus index manifest {manifest_path} is unreadable ({exc}): run `make index`"
    expected = corpus_hash(corpus_dir, embedder_name(settings))
    if built != expected:
        return (
            f"the corpus index at {index_dir} was built by another version of the corpus or "
            f"builder (index {str(built)[:12]}, this code {expected[:12]}): run `make index`"
        )
    return None
