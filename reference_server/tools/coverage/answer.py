"""coverage.answer: one clinical question -> the domain tools in parallel -> one answer.

Intent comes from hints first (codes -> billing, device -> device, drug -> drug), then keyword
scores per domain and a formulary name probe; every domain that scores is asked, so a question
spanning billing, a device and a drug calls schedule.get, adp.get and odb.get at once with
`asyncio.gather`, each in-process through its `TOOL.run`, with its typed request, and under its own time budget
(`pipeline.ComposedTool`). A failing
domain tool becomes a trace entry with its error, never a failed answer. The synthesis keeps
each tool's evidence: highlights cite what the tool cited, conflicts are merged under the tool's
name, confidence is the average of the tool confidences (a failed tool counts 0), and follow-up
questions are asked when the tools' evidence score (the spec's, `confidence_basis.spec_score`)
averages below 0.7 or the decision needs more information. The decisions read the spec's score
whichever confidence the server publishes, so calibrating the confidence changes no decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from pydantic import BaseModel, Field

from reference_server.retrieval import drug_form, drug_strength
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict
from reference_server.tools.adp import get as adp_get
from reference_server.tools.adp.language import assistance_of
from reference_server.tools.common import ConfidenceBasis, Evidence, OpenObject
from reference_server.tools.coverage.patient import Patient, with_stated_context
from reference_server.tools.coverage.routing import (
    SETTING_WORDS,
    Intent,
    Intents,
    classify,
    domain_text,
)
from reference_server.tools.coverage.synthesis import (
    Decision,
    Domain,
    Followup,
    Highlight,
    Part,
    billing_part,
    device_part,
    drug_part,
    evidence_score,
    failed_part,
    followups_for,
    provenance_summary,
    tool_conflicts,
)
from reference_server.tools.odb import get as odb_get
from reference_server.tools.pipeline import ComposedTool, SubCall
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.schedule import get as schedule_get
from reference_server.tools.schedule.get import Code

NAME = "coverage.answer"
FOLLOWUP_BELOW = 0.7


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _calibrated(answer: Evidence | None) -> float | None:
    """A sub-tool's calibrated probability (0 for a failed tool; None: it states none)."""
    if answer is None:
        return 0.0
    basis = answer.confidence_basis
    return basis.calibrated if basis is not None else None


class DeviceHint(StrictModel):
    category: adp_get.Category | None = Field(
        default=None, description="ADP category, e.g. 'mobility' or 'comm_aids'."
    )
    type: str = Field(
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Device type, e.g. 'walker', 'power_wheelchair'.",
    )


class Hints(StrictModel):
    codes: list[Code] | None = Field(
        default=None, max_length=20, description="OHIP fee codes, e.g. ['C124', 'C122']."
    )
    device: DeviceHint | None = Field(default=None, description="Device {category, type}.")
    drug: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Drug name or ingredient.",
    )


class Request(StrictModel):
    question: str = Field(
        min_length=1, max_length=2000, pattern=NON_BLANK, description="Free-text clinical question."
    )
    hints: Hints | None = Field(default=None, description="Optional extracted entities.")
    patient: Patient | None = Field(default=None, description="Optional patient context.")


class TraceEntry(BaseModel):
    tool: str
    args: OpenObject
    started_ms: float = Field(description="Start offset from the beginning of this answer (ms).")
    duration_ms: int
    error: str | None = Field(default=None, description="Why the tool failed, if it did.")


class Response(BaseModel):
    decision: Decision
    summary: str = Field(description="One-paragraph clinician-facing answer.")
    provenance_summary: str = Field(
        description="Paths that answered across tools, e.g. 'sql+vector'."
    )
    confidence: float = Field(
        ge=0.0,
        le=1.0,
        description="Average of the tool confidences (a failed tool counts 0; 0 when no tool was "
        "consulted); each is the probability that tool's answer is right (calibrated) unless the "
        "server states the spec's evidence score (confidence_model=spec).",
    )
    confidence_basis: ConfidenceBasis | None = Field(
        default=None,
        description="The average of the tools' spec evidence scores (which the decision and the "
        "follow-ups read) and of their calibrated probabilities.",
    )
    highlights: list[Highlight]
    conflicts: list[Conflict]
    followups: list[Followup]
    trace: list[TraceEntry]


@dataclass(frozen=True)
class Query:
    question: str
    hints: Hints
    given: Patient  # the structured patient context (the billing text's care setting)
    patient: Patient  # completed by what the question states (ODB eligibility, follow-ups)
    intents: Intents


def device_request(q: Query, text: str) -> adp_get.Request:
    """adp.get's request: the device hint or the question, the income, and social assistance
    (it may be stated in a sentence the device text leaves out)."""
    device = q.hints.device
    on_assistance, program = assistance_of(q.question)
    return adp_get.Request(
        device=adp_get.Device(category=device.category, type=device.type) if device else None,
        query=None if device else text,
        patient_income=q.given.income,
        # the words name a program of the field's list; the model checks it when built
        social_assistance=cast(
            adp_get.Assistance | None,
            None if on_assistance is None else program if on_assistance else "none",
        ),
    )


def drug_request(text: str, drug: str | None) -> odb_get.Request:
    """odb.get's request: the question, the drug it names, and the strength and dosage form
    written after the name is set aside ('Janumet 50/1000 mg tablets'), so the product
    answered is the one asked about."""
    rest = re.sub(re.escape(drug), " ", text, flags=re.I) if drug else text
    strength = drug_strength.first(rest)
    form = drug_form.find(rest)
    return odb_get.Request(
        q=text,
        drug=drug or None,
        strength=strength.text[:50] if strength else None,
        form=cast(odb_get.FormWordName | None, form.form.word if form else None),
    )


def billing_request(q: Query, text: str) -> schedule_get.Request:
    """schedule.get's request: the question with its care setting ('ltc' -> W codes) and the
    codes it names (up to schedule.get's limit)."""
    if q.given.setting:
        text = f"{text} ({SETTING_WORDS[q.given.setting]})"
    return schedule_get.Request(q=text, codes=q.intents.codes[:20] or None)


def part_of(q: Query, intent: Intent, call: SubCall[Any, Any]) -> Part:
    """The domain tool's answer read through its typed response."""
    out = call.response
    if isinstance(out, schedule_get.Response):
        return billing_part(out, q.intents.codes)
    if isinstance(out, adp_get.Response):
        return device_part(out)
    if isinstance(out, odb_get.Response) and isinstance(call.request, odb_get.Request):
        return drug_part(out, call.request.q or "", q.patient)
    return failed_part(intent, call.name, call.error)


class CoverageAnswer(ComposedTool[Request, Query, Response]):
    name = NAME
    title = "Answer an Ontario coverage question"
    description = (
        "Answer an Ontario coverage question in one call: routes it to OHIP billing (schedule.get), "
        "ADP devices (adp.get) and ODB drugs (odb.get) in parallel as needed, and returns a decision "
        "(billable / eligible / covered / needs_more_info), a summary, cited highlights, conflicts, "
        "follow-up questions when unsure, and a trace of the tool calls with their timings."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(question="Is a walker covered for my 70-year-old patient?")

    async def parse(self, rt: Runtime, req: Request) -> Query:
        hints = req.hints or Hints()
        intents = await classify(
            rt, req.question, hints.codes, hints.device is not None, hints.drug
        )
        given = req.patient or Patient()
        return Query(req.question, hints, given, with_stated_context(given, req.question), intents)

    def plan(self, q: Query) -> list[SubCall[Any, Any]]:
        """One call per intent (main domain first), each with its domain tool's typed request."""
        calls: list[SubCall[Any, Any]] = []
        for intent in q.intents.ordered:
            names = [q.intents.drug or "", q.hints.drug or ""] if intent == "drug" else None
            text = domain_text(q.question, intent, names)
            if intent == "billing":
                calls.append(SubCall.planned(schedule_get.TOOL, partial(billing_request, q, text)))
            elif intent == "device":
                calls.append(SubCall.planned(adp_get.TOOL, partial(device_request, q, text)))
            else:
                request = partial(drug_request, text, q.intents.drug)
                calls.append(SubCall.planned(odb_get.TOOL, request))
        return calls

    def synthesize(self, q: Query, calls: list[SubCall[Any, Any]]) -> Response:
        domains = [
            Domain(intent, call.name, part_of(q, intent, call), call.error)
            for intent, call in zip(q.intents.ordered, calls, strict=True)
        ]
        answers = [c.response for c in calls if c.response is not None]
        decision: Decision = domains[0].part.decision if domains else "needs_more_info"
        summary = " ".join(d.part.sentence for d in domains) or (
            "The question did not name a fee code, device or drug, so no coverage source was "
            "consulted."
        )
        confidence = _mean([c.response.confidence if c.response else 0.0 for c in calls])
        spec = _mean([evidence_score(c.response) if c.response else 0.0 for c in calls])
        fitted = [_calibrated(c.response) for c in calls]
        followups = (
            followups_for(q.patient, domains)
            if spec < FOLLOWUP_BELOW or decision == "needs_more_info"
            else []
        )
        basis = (
            ConfidenceBasis(
                model="calibrated"
                if all(
                    c.response.confidence_basis is not None
                    and c.response.confidence_basis.model == "calibrated"
                    for c in calls
                    if c.response is not None
                )
                and answers
                else "spec",
                spec_score=spec,
                calibrated=_mean([f or 0.0 for f in fitted]) if None not in fitted else None,
            )
            if calls
            else None
        )
        return Response(
            decision=decision,
            summary=summary,
            provenance_summary=provenance_summary(answers),
            confidence=confidence,
            confidence_basis=basis,
            highlights=[h for d in domains for h in d.part.highlights],
            conflicts=[
                c
                for call in calls
                if call.response is not None
                for c in tool_conflicts(call.name, call.response)
            ],
            followups=followups,
            trace=[
                TraceEntry(
                    tool=c.name,
                    args=c.arguments,
                    started_ms=round(c.started_ms, 2),
                    duration_ms=round(c.duration_ms),
                    error=c.error,
                )
                for c in calls
            ],
        )


TOOL = CoverageAnswer()
