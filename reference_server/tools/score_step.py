"""The pipeline's score step, shared by every dual-path tool: the `Score` a tool's `score` step
returns, what the base judges from it (`judge`: provenance, the spec's confidence and the
calibrated one, the basis of both) and the evidence fields a response declares, filled from that
judgment (`evidence_for`, `with_evidence`), never by the tool.

Kept apart from `pipeline.py`, which runs the steps, so how a confidence is decided reads in one
place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypedDict, TypeVar

from pydantic import BaseModel

from reference_server.retrieval.dual_path import DualResult, PathName
from reference_server.scoring.calibrated import CalibrationModel, stated
from reference_server.scoring.confidence import Counts, confidence_from
from reference_server.scoring.conflicts import Conflict
from reference_server.scoring.features import NO_SIGNALS, Signals, features
from reference_server.tools.base import Resp
from reference_server.tools.common import ConfidenceBasis, SpecInputs

C = TypeVar("C")  # a citation type (most tools: scoring.citations.Citation)


@dataclass(frozen=True)
class Score(Generic[C]):
    """A tool's scoring step: what it cites, where the sources disagree, the evidence counts
    (None: the tool publishes no confidence, e.g. reading one record by id) and what it measured
    about its leading answer (`Signals`: the calibrated confidence's tool-specific evidence)."""

    citations: Sequence[C] = ()
    conflicts: Sequence[Conflict] = ()
    counts: Counts | None = None
    signals: Signals = NO_SIGNALS


@dataclass(frozen=True)
class Judged(Generic[C]):
    """What the base adds to a tool's score before `respond`: the paths that answered, the
    confidence, and what it was computed from."""

    provenance: list[PathName]
    confidence: float
    citations: list[C]
    conflicts: list[Conflict]
    confidence_basis: ConfidenceBasis | None = None


def judge(
    score: Score[C],
    found: DualResult[Any, Any],
    *,
    family: str | None = None,
    calibration: CalibrationModel | None = None,
    use: str = "calibrated",
) -> Judged[C]:
    """The spec's score from the counts; the features and the family's fitted probability; the
    one `use` names (`Settings.confidence_model`) as the confidence, the spec's when the family
    has no model (`calibrated.stated`: 0 when no path answered, at most the spec's score when
    the sources disagree or an unverified fact leads, at most the least it could have had when a
    path failed). A tool without counts publishes no confidence (0.0, no basis)."""
    conflicts = len(score.conflicts)
    spec = confidence_from(score.counts, conflicts)
    basis = None
    confidence = spec
    if score.counts is not None:
        counts = score.counts
        values = features(score.signals, counts, conflicts, found.provenance, spec)
        model = calibration.of(family) if calibration is not None else None
        fitted = (
            stated(
                model.probability(values),
                spec,
                answered=bool(found.provenance),
                # the sources disagree, or the tool marks the answer it gives weak (an
                # unverified fact leads); not its "nothing addresses this" deduction, whose rate
                # the model fits (no_answer)
                capped=conflicts > 0 or (counts.penalty > 0 and not score.signals.no_answer),
                # a path failed or was cut (or, for a model of both-path answers, did not
                # run): what it would have said is unknown, so the answer states the least it
                # could have had (the spec's "lower confidence")
                degraded_floor=model.bound_for(values, bool(found.errors)),
            )
            if model is not None
            else None
        )
        calibrated = use == "calibrated" and fitted is not None
        confidence = fitted if calibrated and fitted is not None else spec
        basis = ConfidenceBasis(
            model="calibrated" if calibrated else "spec",
            spec_score=spec,
            spec_inputs=SpecInputs(
                profile=counts.profile.name,  # type: ignore[arg-type]
                sql_records=counts.sql_records,
                vector_passages=counts.vector_passages,
                corroborated=counts.corroborated,
                conflicts=conflicts,
                penalty=counts.penalty,
            ),
            calibrated=fitted,
            family=family,
            features=values,
        )
    return Judged(
        provenance=found.provenance,
        confidence=confidence,
        citations=list(score.citations),
        conflicts=list(score.conflicts),
        confidence_basis=basis,
    )


class EvidenceFields(TypedDict, Generic[C], total=False):
    """The evidence every retrieval answer may carry, filled here from `Judged` for whichever of
    them a tool's response declares (`common.Evidence` declares all five), never by the tool:
    `respond` passes them to its response as they are."""

    provenance: list[PathName]
    confidence: float
    citations: list[C]
    conflicts: list[Conflict]
    confidence_basis: ConfidenceBasis | None


def evidence_for(response: type[BaseModel], judged: Judged[C]) -> EvidenceFields[C]:
    """The evidence fields `response` declares, from `judged`."""
    declared = response.model_fields
    evidence: EvidenceFields[C] = {}
    if "provenance" in declared:
        evidence["provenance"] = judged.provenance
    if "confidence" in declared:
        evidence["confidence"] = judged.confidence
    if "citations" in declared:
        evidence["citations"] = judged.citations
    if "conflicts" in declared:
        evidence["conflicts"] = judged.conflicts
    if "confidence_basis" in declared:
        evidence["confidence_basis"] = judged.confidence_basis
    return evidence


def with_evidence(response: type[Resp], judged: Judged[Any], fields: Mapping[str, object]) -> Resp:
    """A response from its own fields (its model's keyword arguments, by name) plus the evidence
    fields it declares."""
    return response(**evidence_for(response, judged), **fields)
