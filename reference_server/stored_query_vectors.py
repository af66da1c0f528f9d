"""Query vectors the index stored for texts known before any call, looked up by token ids.

A DIN, or a brand and its strength, carries no free text, yet odb.get's vector path still
searches with the vector of the text those fields make ('DIN 02425483', 'Lipitor 20mg') and
cites what it finds. Those texts follow from the formulary, so the index builder embeds each
one alone, with the query model (`index/known_queries.py`), and the server looks the vector up
instead of running the model per call.

The key is the text's token ids, not the text: the model sees only the ids, so any text with
the same ids (another case, other spacing) gets exactly the vector the model would compute, and
a text the index did not foresee simply goes to the model. Stored vectors are used only when
the index was built with the model the server embeds with.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

TEXTS_FILE = "known_queries.json"
VECTORS_FILE = "known_queries.npy"

TokenIds = Callable[[Sequence[str]], list[tuple[int, ...]]]


class StoredQueryVectors:
    """Vectors by token ids; `find` answers the texts it holds and leaves the rest."""

    def __init__(self, keys: list[tuple[int, ...]], vectors: np.ndarray, token_ids: TokenIds):
        if len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} stored query texts but {len(vectors)} vectors")
        self._rows = {key: row for row, key in enumerate(keys)}
        self._vectors = vectors
        self._token_ids = token_ids

    def __len__(self) -> int:
        return len(self._rows)

    def find(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each text whose token ids the index holds."""
        if not texts:
            return {}
        found: dict[str, np.ndarray] = {}
        for text, key in zip(texts, self._token_ids(texts), strict=True):
            row = self._rows.get(key)
            if row is not None:
                found[text] = np.asarray(self._vectors[row], dtype=np.float32)
        return found

    @classmethod
    def load(
        cls, index_dir: Path, model_name: str, token_ids: TokenIds
    ) -> StoredQueryVectors | None:
        """The index's stored vectors, or None when it has none or another model made them."""
        texts_path, vectors_path = index_dir / TEXTS_FILE, index_dir / VECTORS_FILE
        if not (texts_path.exists() and vectors_path.exists()):
            return None
        stored = json.loads(texts_path.read_text())
        if stored.get("model") != model_name:
            log.warning(
                "stored query vectors were made by %s, the server embeds with %s: not used",
                stored.get("model"),
                model_name,
            )
            return None
        vectors = np.load(vectors_path, mmap_mode="r")  # shared by every worker's page cache
        return cls(token_ids(stored["texts"]), vectors, token_ids)


def write(index_dir: Path, model_name: str, texts: list[str], vectors: np.ndarray) -> None:
    """Store `texts` and their vectors (row i is text i) in an index directory."""
    (index_dir / TEXTS_FILE).write_text(json.dumps({"model": model_name, "texts": texts}))
    np.save(index_dir / VECTORS_FILE, vectors.astype(np.float32))
