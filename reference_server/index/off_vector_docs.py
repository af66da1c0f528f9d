"""The Dr. OFF vector documents: the three Chroma collections, each from its own builder."""

from __future__ import annotations

from pathlib import Path

from reference_server.catalog import OFF_COLLECTIONS
from reference_server.index.off_adp_docs import adp_documents
from reference_server.index.off_odb_docs import odb_documents
from reference_server.index.off_ohip_docs import ohip_documents
from reference_server.index.types import VectorDoc


def vector_documents(corpus_dir: Path) -> dict[str, list[VectorDoc]]:
    """The three Dr. OFF Chroma collections (names in `catalog.OFF_COLLECTIONS`)."""
    return {
        OFF_COLLECTIONS["ohip"]: ohip_documents(corpus_dir),
        OFF_COLLECTIONS["adp"]: adp_documents(corpus_dir),
        OFF_COLLECTIONS["odb"]: odb_documents(corpus_dir),
    }
