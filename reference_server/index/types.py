"""Plain shapes shared by the index builders."""

from __future__ import annotations

from dataclasses import dataclass, field

MetaValue = str | int | float | bool


@dataclass(frozen=True)
class VectorDoc:
    """One chunk to embed: its id is what tools cite and `source.passages` resolves."""

    id: str
    text: str
    metadata: dict[str, MetaValue] = field(default_factory=dict)
