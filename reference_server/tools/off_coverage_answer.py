"""coverage.answer: one clinical question -> the domain tools in parallel -> one answer.

Intent comes from hints first (codes -> billing, device -> device, drug -> drug), then keyword
scores per domain and a formulary name probe; every domain that scores is asked, so a question
spanning billing, a device and a drug calls schedule.get, adp.get and odb.get at once with
`asyncio.gather`, each in-process through its `SPEC.run` and under its own time budget. A failing
domain tool becomes a trace entry with its error, never a failed answer. The synthesis keeps
each tool's evidence: highlights cite what the tool cited, conflicts are merged under the tool's
name, confidence is the average of the tool confidences (a failed tool counts 0), and follow-up
questions are asked when confidence is below 0.7 or the decision needs more information.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from reference_server.retrieval import drug_form, drug_strength
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict
from reference_server.tools import off_adp_get, off_odb_get, off_schedule_get
from reference_server.tools.adp_language import assistance_of
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.coverage_patient import stated_patient
from reference_server.tools.coverage_routing import (
    SETTING_WORDS,
    Intent,
    Intents,
    classify,
    domain_text,
)
from reference_server.tools.coverage_synthesis import (
    Call,
    Decision,
    Followup,
    Highlight,
    Part,
    billing_part,
    device_part,
    drug_part,
    followups_for,
    provenance_summary,
)
from reference_server.tools.off_schedule_get import Code

NAME = "coverage.answer"
FOLLOWUP_BELOW = 0.7
DOMAIN_BUDGET = 0.85  # share of the whole-tool timeout one domain tool may use


class DeviceHint(StrictModel):
    category: off_adp_get.Category | None = Field(
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


class Patient(StrictModel):
    age: int | None = Field(
        default=None,
        ge=0,
        le=130,
        description="Age in years: ODB eligibility (65 or over; under 25 through OHIP+).",
    )
    setting: Literal["acute", "community", "ltc"] | None = Field(
        default=None,
        description=(
            "Care setting: billing context for the fee-code search; 'ltc' residents are "
            "ODB-eligible."
        ),
    )
    plan: Literal["ODB", "private", "none"] | None = Field(
        default=None,
        description="Drug plan: 'ODB', 'private' (pays first for under 25s) or 'none'.",
    )
    income: float | None = Field(
        default=None, ge=0, le=10_000_000, description="Annual income (CAD), for the CEP check."
    )


class Request(StrictModel):
    question: str = Field(
        min_length=1, max_length=2000, pattern=NON_BLANK, description="Free-text clinical question."
    )
    hints: Hints | None = Field(default=None, description="Optional extracted entities.")
    patient: Patient | None = Field(default=None, description="Optional patient context.")


class TraceEntry(BaseModel):
    tool: str
    args: dict[str, Any]
    started_ms: float = Field(description="Start offset from the beginning of this answer (ms).")
    duration_ms: int
    error: str | None = Field(default=None, description="Why the tool failed, if it did.")


class Response(BaseModel):
    decision: Decision
    summary: str = Field(description="One-paragraph clinician-facing answer.")
    provenance_summary: str = Field(
        description="Paths that answered across tools, e.g. 'sql+vector'."
    )
    confidence: float = Field(ge=0.0, le=1.0, description="Average of the tool confidences.")
    highlights: list[Highlight]
    conflicts: list[Conflict]
    followups: list[Followup]
    trace: list[TraceEntry]


# ------------------------------------------------------------------------------ fan-out
def plan_calls(req: Request, intents: Intents) -> list[Call]:
    """One call per intent, with arguments in each domain tool's own request shape."""
    hints = req.hints or Hints()
    patient = req.patient or Patient()
    calls: list[Call] = []
    for intent in intents.ordered:
        names = [intents.drug or "", hints.drug or ""] if intent == "drug" else None
        text = domain_text(req.question, intent, names)
        if intent == "billing":
            if patient.setting:  # the billing context narrows the codes ('ltc' -> W codes)
                text = f"{text} ({SETTING_WORDS[patient.setting]})"
            args: dict[str, Any] = {"q": text}
            if intents.codes:
                args["codes"] = intents.codes[:20]  # schedule.get's limit
            calls.append(Call(intent, off_schedule_get.SPEC, args))
        elif intent == "device":
            if hints.device:
                device = hints.device.model_dump(exclude_none=True)
                args = {"device": device}
            else:
                args = {"query": text}
            if patient.income is not None:
                args["patient_income"] = patient.income
            # Social assistance may be stated in a sentence the device text leaves out.
            on_assistance, program = assistance_of(req.question)
            if on_assistance is not None:
                args["social_assistance"] = program if on_assistance else "none"
            calls.append(Call(intent, off_adp_get.SPEC, args))
        else:
            calls.append(Call(intent, off_odb_get.SPEC, drug_args(text, intents.drug)))
    return calls


def drug_args(text: str, drug: str | None) -> dict[str, Any]:
    """odb.get's arguments: the question, the drug it names, and the strength and dosage form
    written after the name is set aside ('Janumet 50/1000 mg tablets'), so the product
    answered is the one asked about."""
    args: dict[str, Any] = {"q": text}
    rest = text
    if drug:
        args["drug"] = drug
        rest = re.sub(re.escape(drug), " ", text, flags=re.I)
    strength = drug_strength.first(rest)
    if strength:
        args["strength"] = strength.text[:50]
    form = drug_form.find(rest)
    if form:
        args["form"] = form.form.word
    return args


async def execute(rt: Runtime, call: Call, t0: float) -> None:
    """Run one domain tool in-process; its failure is recorded on the call, not raised."""
    call.started_ms = (time.perf_counter() - t0) * 1000
    # the domain tools share the whole-tool budget with what ran before them (the name probe)
    budget_s = max(0.05, (rt.settings.tool_timeout_ms * DOMAIN_BUDGET - call.started_ms) / 1000)
    try:
        request = call.spec.request.model_validate(call.args)
        output = await asyncio.wait_for(call.spec.run(rt, request), timeout=budget_s)
        call.response = output.response.model_dump(mode="json")
    except TimeoutError:
        call.error = f"timed out after {budget_s * 1000:.0f} ms"
    except ValidationError as exc:
        call.error = f"invalid arguments: {exc.errors()[0]['msg']}"
    except Exception as exc:  # a failing domain tool degrades the answer, it never fails it
        call.error = f"{type(exc).__name__}: {str(exc)[:300]}"
    call.duration_ms = (time.perf_counter() - t0) * 1000 - call.started_ms


def with_stated_context(patient: Patient, question: str) -> Patient:
    """The structured patient context, completed by what the question states in words."""
    stated = stated_patient(question)
    return patient.model_copy(
        update={
            "age": patient.age if patient.age is not None else stated.age,
            "setting": patient.setting or stated.setting,
            "plan": patient.plan or stated.plan,
        }
    )


async def run(rt: Runtime, req: Request) -> ToolOutput:
    t0 = time.perf_counter()
    hints = req.hints or Hints()
    intents = await classify(rt, req.question, hints.codes, hints.device is not None, hints.drug)
    calls = plan_calls(req, intents)
    await asyncio.gather(*(execute(rt, c, t0) for c in calls))
    patient = with_stated_context(req.patient or Patient(), req.question)
    builders: dict[Intent, Callable[[Call], Part]] = {
        "billing": lambda c: billing_part(c, intents.codes),
        "device": device_part,
        "drug": lambda c: drug_part(c, patient),
    }
    parts: dict[Intent, Part] = {}
    for call in calls:
        if call.response is not None:
            parts[call.intent] = builders[call.intent](call)
        else:
            label = {"billing": "OHIP billing", "device": "ADP", "drug": "ODB"}[call.intent]
            parts[call.intent] = Part(
                "needs_more_info", f"{label}: {call.spec.name} could not answer ({call.error}).", []
            )
    decision: Decision = parts[calls[0].intent].decision if calls else "needs_more_info"
    summary = " ".join(parts[c.intent].sentence for c in calls) or (
        "The question did not name a fee code, device or drug, so no coverage source was consulted."
    )
    confidence = round(sum(c.confidence for c in calls) / len(calls), 4) if calls else 0.0
    conflicts = [
        Conflict(**{**c, "field": f"{call.spec.name}: {c['field']}"})
        for call in calls
        for c in (call.response or {}).get("conflicts") or []
    ]
    followups = (
        followups_for(patient, calls, parts)
        if confidence < FOLLOWUP_BELOW or decision == "needs_more_info"
        else []
    )
    response = Response(
        decision=decision,
        summary=summary,
        provenance_summary=provenance_summary(calls),
        confidence=confidence,
        highlights=[h for c in calls for h in parts[c.intent].highlights],
        conflicts=conflicts,
        followups=followups,
        trace=[
            TraceEntry(
                tool=c.spec.name,
                args=c.args,
                started_ms=round(c.started_ms, 2),
                duration_ms=round(c.duration_ms),
                error=c.error,
            )
            for c in calls
        ],
    )
    return ToolOutput(response)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Answer an Ontario coverage question in one call: routes it to OHIP billing (schedule.get), "
        "ADP devices (adp.get) and ODB drugs (odb.get) in parallel as needed, and returns a decision "
        "(billable / eligible / covered / needs_more_info), a summary, cited highlights, conflicts, "
        "follow-up questions when unsure, and a trace of the tool calls with their timings."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"question": "Is a walker covered for my 70-year-old patient?"},
)
