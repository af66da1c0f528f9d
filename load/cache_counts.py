"""The server's query-embedding cache and batch counters as the load run sees them (each reply's
`_meta.cache`), per server process: a worker dumps its counts to the master, which merges them
and reports the run's hit rate and mean embedding batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ocm_common.json_types import JsonValue


def count(value: JsonValue) -> int:
    """A counter the server sent, as `int()` reads it (a TypeError for a list, object or null)."""
    if isinstance(value, int | float | str):
        return int(value)
    raise TypeError(f"not a count: {value!r}")


class CacheCounts:
    """The server's query-embedding cache and batch counts (hits, misses, model batches, texts
    in them), per server process, first and last seen."""

    def __init__(self) -> None:
        self.first: dict[str, tuple[int, ...]] = {}
        self.last: dict[str, tuple[int, ...]] = {}

    def see(self, cache: JsonValue) -> None:
        """One reply's `_meta.cache` (anything but an object naming its process is ignored)."""
        if not isinstance(cache, dict) or "process" not in cache:
            return
        counts = tuple(
            count(cache.get(k, 0))
            for k in ("embed_hits", "embed_misses", "embed_batches", "embed_batched_texts")
        )
        self.first.setdefault(str(cache["process"]), counts)
        self.last[str(cache["process"])] = counts

    def merge(self, data: Mapping[str, Mapping[str, Sequence[int]]]) -> None:
        """A worker's `dump` (its tuples arrive as lists)."""
        for proc, counts in data.get("first", {}).items():
            old = self.first.get(proc)
            self.first[proc] = tuple(counts) if old is None else min(old, tuple(counts))
        for proc, counts in data.get("last", {}).items():
            old = self.last.get(proc)
            self.last[proc] = tuple(counts) if old is None else max(old, tuple(counts))

    def dump(self) -> dict[str, dict[str, tuple[int, ...]]]:
        return {"first": dict(self.first), "last": dict(self.last)}

    def hit_rate(self) -> float | None:
        hits = sum(self.last[p][0] - self.first[p][0] for p in self.last)
        misses = sum(self.last[p][1] - self.first[p][1] for p in self.last)
        return round(hits / (hits + misses), 4) if hits + misses else None

    def mean_batch(self) -> float | None:
        """Texts per embedding-model call during the run (None: no batched model calls seen)."""
        batches = sum(self.last[p][2] - self.first[p][2] for p in self.last)
        texts = sum(self.last[p][3] - self.first[p][3] for p in self.last)
        return round(texts / batches, 2) if batches else None
