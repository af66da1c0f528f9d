"""coverage.answer reads the patient context a question states in words; structured fields win."""

from __future__ import annotations

import pytest

from reference_server.tools.coverage.patient import (
    Patient,
    StatedPatient,
    stated_patient,
    with_stated_context,
)


@pytest.mark.parametrize(
    ("question", "stated"),
    [
        ("Is Lipitor covered for my 72-year-old patient?", StatedPatient(72, None, None)),
        ("patient is 19 yo and has a private drug plan", StatedPatient(19, None, "private")),
        ("a 45 year old without any drug coverage", StatedPatient(45, None, "none")),
        ("aged 30, covered by her employer plan", StatedPatient(30, None, "private")),
        ("resident of a nursing home", StatedPatient(None, "ltc", None)),
        ("admitted to hospital, 67 years old", StatedPatient(67, "acute", None)),
        ("my patient is on ODB", StatedPatient(None, None, "ODB")),
        ("Is Ozempic 0.68 mg/mL covered?", StatedPatient(None, None, None)),
    ],
)
def test_stated_patient(question: str, stated: StatedPatient) -> None:
    assert stated_patient(question) == stated


def test_structured_context_wins_over_the_text() -> None:
    patient = with_stated_context(
        Patient(age=70, plan="ODB"), "for a 19-year-old with a private drug plan in long-term care"
    )
    assert (patient.age, patient.plan, patient.setting) == (70, "ODB", "ltc")
