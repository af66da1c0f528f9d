"""The index fingerprint (corpus hash) and whether a built index is current, without the builders.

The server checks its index before it serves; importing the builders for that would pull the
build side (ingestion, the embedding writer) into every server process. The hash covers the
corpus, the embedding model's name and the builder source files, read as bytes by path, so
editing a builder still asks for a rebuild.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from reference_server.config import CORPUS_DIR, Settings
from reference_server.embedding import embedder_name

_PACKAGE = Path(__file__).resolve().parent.parent
# The builder code an index depends on, in the order it is hashed; the CPSO level rule
# (ingest/opa_cpso.section_level) is applied at index time too. The builder and the server
# both hash through corpus_hash below.
CODE_FILES = (
    _PACKAGE / "index" / "build.py",
    _PACKAGE / "index" / "opa_builder.py",
    _PACKAGE / "index" / "off_tables.py",
    _PACKAGE / "index" / "off_corpus.py",
    _PACKAGE / "index" / "off_vector_docs.py",
    _PACKAGE / "index" / "off_ohip_docs.py",
    _PACKAGE / "index" / "off_adp_docs.py",
    _PACKAGE / "index" / "off_odb_docs.py",
    _PACKAGE / "index" / "off_doc_fields.py",
    _PACKAGE / "catalog.py",
    _PACKAGE / "ingest" / "opa_cpso.py",
    _PACKAGE / "index" / "bm25_impacts.py",
    _PACKAGE / "index" / "known_queries.py",
    _PACKAGE / "static_embedding.py",
)


def corpus_hash(corpus_dir: Path, embedder_name: str) -> str:
    digest = hashlib.sha256(embedder_name.encode())
    for path in sorted(
        p for p in corpus_dir.rglob("*") if p.is_file() and "_skeletons" not in p.parts
    ):
        digest.update(str(path.relative_to(corpus_dir)).encode())
        digest.update(path.read_bytes())
    for path in CODE_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


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
