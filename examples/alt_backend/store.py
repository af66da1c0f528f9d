"""Passages this backend can show (``source.passages``), keyed by its own ids.

Id scheme (slash-separated, readable): ``odb/din/<DIN>``, ``odb/group/<item number>``,
``odb/lu/<LU code>``, ``ohip/fee/<fee code>``, ``adp/<manual>/<section>``,
``spec/cep-income-thresholds``.
"""

from __future__ import annotations

from dataclasses import dataclass

from examples.alt_backend.payloads import Citation


@dataclass(frozen=True)
class Passage:
    chunk_id: str
    text: str
    source: str
    section: str | None = None
    page: int | None = None


class PassageStore:
    def __init__(self) -> None:
        self._by_id: dict[str, Passage] = {}

    def add(self, passage: Passage) -> None:
        self._by_id[passage.chunk_id] = passage

    def get(self, chunk_id: str) -> Passage | None:
        return self._by_id.get(chunk_id.strip())

    def __contains__(self, chunk_id: object) -> bool:
        return isinstance(chunk_id, str) and chunk_id.strip() in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)


def citation(passage: Passage, loc: str) -> Citation:
    """A citation naming a public key in ``loc`` and this backend's passage id."""
    return {
        "source": passage.source,
        "loc": loc,
        "chunk_id": passage.chunk_id,
        "page": passage.page,
    }
