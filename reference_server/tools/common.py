"""Response pieces several tools share (the provenance/confidence/citations/conflicts set, and
what the confidence was computed from)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, WithJsonSchema

from ocm_common.json_types import JsonObject
from reference_server.retrieval.dual_path import PathName
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict

__all__ = ["Citation", "ConfidenceBasis", "Evidence", "OpenObject", "SpecInputs"]

SourceOrg = Literal["cpso", "ontario_health", "cep", "pho", "moh"]
DocumentType = Literal["policy", "advice", "guideline", "bulletin", "tool", "statement"]
Path = PathName

# A free-form JSON object in a response (the arguments of a sub-call, a decision point as the
# corpus states it): any JSON values, published as an object open to any properties.
OpenObject = Annotated[JsonObject, WithJsonSchema({"additionalProperties": True, "type": "object"})]

CONFIDENCE_DESCRIPTION = (
    "The probability that this answer is right (a 'nothing answers this' answer included), "
    "fitted on derived cases per tool family (reference_server/scoring/calibration.yaml); with "
    "the server setting confidence_model=spec, the seeds' evidence score instead (0.9 SQL base / "
    "0.6 vector-only, +0.03 per corroborating passage, -0.1 for conflicts). Both, and what they "
    "were computed from, are in confidence_basis."
)


class SpecInputs(BaseModel):
    """The seeds' confidence formula's inputs (scoring/confidence.py)."""

    profile: Literal["opa", "off", "schedule"] = Field(
        description="Which spec's reading of the formula (OPA: 000/001; OFF, schedule: 002)."
    )
    sql_records: int = Field(description="SQL records that answer.")
    vector_passages: int = Field(description="Vector passages that corroborate.")
    corroborated: int | None = Field(description="OPA: passages found by both paths.")
    conflicts: int = Field(description="Conflicts between the sources (penalised once).")
    penalty: float = Field(
        description="A deduction after the formula (an unverified fact, no relevant document)."
    )


class ConfidenceBasis(BaseModel):
    """What `confidence` was computed from: the spec's evidence score with its inputs, the
    calibrated probability with its model's family and features, and which one is `confidence`."""

    model: Literal["calibrated", "spec"] = Field(
        description="Which of the two numbers below `confidence` is."
    )
    spec_score: float = Field(ge=0.0, le=1.0, description="The seeds' evidence score.")
    spec_inputs: SpecInputs | None = Field(
        default=None, description="The formula's inputs (null: the tool publishes none)."
    )
    calibrated: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="The fitted probability of being right (null: no model for this family).",
    )
    family: str | None = Field(default=None, description="The calibration family of the tool.")
    features: dict[str, float] = Field(
        default_factory=dict,
        description="The evidence the calibrated model reads (reference_server/scoring/"
        "features.py), by name.",
    )


class Evidence(BaseModel):
    """The evidence every retrieval answer carries."""

    provenance: list[Path] = Field(
        description="Retrieval paths that answered (a failed or timed-out path is absent)."
    )
    confidence: float = Field(ge=0.0, le=1.0, description=CONFIDENCE_DESCRIPTION)
    citations: list[Citation] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    confidence_basis: ConfidenceBasis | None = Field(
        default=None,
        description="What confidence was computed from (spec score and inputs, calibrated "
        "probability and features).",
    )
