"""The patient context a coverage question states in words: age, care setting, drug plan.

Clinicians write "for my 72-year-old patient", "a 19-year-old who has a private drug plan",
"in long-term care"; ODB eligibility turns on exactly these, so coverage.answer reads them from
the question when the structured ``patient`` argument does not give them. A structured value
always wins over the text. `Patient` is the structured context coverage.answer accepts, shared
by the tool and its synthesis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from reference_server.tools.request_model import StrictModel

Setting = Literal["acute", "community", "ltc"]
Plan = Literal["ODB", "private", "none"]

AGE = re.compile(
    r"\b(?:(\d{1,3})[\s-]*(?:years?|yrs?|y)[\s-]*old\b|(\d{1,3})\s*(?:yo|y/o)\b|"
    r"aged?\s+(\d{1,3})\b)",
    re.I,
)
LTC = re.compile(r"\b(?:long[\s-]term[\s-]care|ltc|nursing home|home for special care)\b", re.I)
HOSPITAL = re.compile(r"\b(?:in hospital|inpatient|admitted)\b", re.I)
NO_PLAN = re.compile(
    r"\b(?:no|without|doesn't have|does not have|has no|lacks)\s+(?:a\s+|any\s+)?"
    r"(?:private\s+)?(?:drug\s+plan|drug\s+coverage|insurance|benefits|plan)\b|\buninsured\b",
    re.I,
)
PRIVATE = re.compile(
    r"\b(?:private|employer|work|group)\s+(?:drug\s+)?(?:plan|insurance|coverage|benefits)\b",
    re.I,
)
ON_ODB = re.compile(r"\b(?:on|has|with)\s+(?:the\s+)?(?:odb|ontario drug benefit)\b", re.I)


@dataclass(frozen=True)
class StatedPatient:
    age: int | None = None
    setting: Setting | None = None
    plan: Plan | None = None


def stated_patient(question: str) -> StatedPatient:
    """What the question says about the patient (None where it says nothing)."""
    age = None
    match = AGE.search(question)
    if match:
        value = int(next(g for g in match.groups() if g))
        age = value if value <= 130 else None
    setting: Setting | None = (
        "ltc" if LTC.search(question) else "acute" if HOSPITAL.search(question) else None
    )
    plan: Plan | None = None
    if NO_PLAN.search(question):
        plan = "none"
    elif PRIVATE.search(question):
        plan = "private"
    elif ON_ODB.search(question):
        plan = "ODB"
    return StatedPatient(age, setting, plan)


class Patient(StrictModel):
    age: int | None = Field(
        default=None,
        ge=0,
        le=130,
        description="Age in years: ODB eligibility (65 or over; under 25 through OHIP+).",
    )
    setting: Setting | None = Field(
        default=None,
        description=(
            "Care setting: billing context for the fee-code search; 'ltc' residents are "
            "ODB-eligible."
        ),
    )
    plan: Plan | None = Field(
        default=None,
        description="Drug plan: 'ODB', 'private' (pays first for under 25s) or 'none'.",
    )
    income: float | None = Field(
        default=None, ge=0, le=10_000_000, description="Annual income (CAD), for the CEP check."
    )


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
