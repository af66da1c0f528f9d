"""Response pieces several tools share (the provenance/confidence/citations/conflicts set)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.dual_path import PathName
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict

__all__ = ["Citation", "Evidence"]

SourceOrg = Literal["cpso", "ontario_health", "cep", "pho", "moh"]
DocumentType = Literal["policy", "advice", "guideline", "bulletin", "tool", "statement"]
Path = PathName


class Evidence(BaseModel):
    """The trio every retrieval answer carries."""

    provenance: list[Path] = Field(
        description="Retrieval paths that answered (a failed or timed-out path is absent)."
    )
    confidence: float = Field(
        ge=0.0,
        le=1.0,
        description="0.9 SQL base / 0.6 vector-only, +0.03 per corroborating passage, -0.1 per conflict.",
    )
    citations: list[Citation] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
