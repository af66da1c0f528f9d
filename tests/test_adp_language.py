"""adp.get's reading of a question: income only where stated as income, social assistance with
its negation. Pure functions, no index: the cases are the phrasings the derived families vary."""

from __future__ import annotations

import pytest

from reference_server.tools.adp.language import assistance_of, income_of


@pytest.mark.parametrize(
    ("text", "income"),
    [
        ("Is a $2,400 power wheelchair covered?", None),
        ("The scooter costs $3,100; what does ADP pay?", None),
        ("power wheelchair for a patient with income $19,000", 19000.0),
        ("Does ADP cover hearing aids? family income $30k", 30000.0),
        ("A $3,100 scooter for a patient who earns $26,000 a year", 26000.0),
        ("walker; she makes $22,000 a year", 22000.0),
        ("brings in $1,500 a month", 18000.0),
        ("walker for a 3 year old", None),
    ],
)
def test_income_is_read_only_where_stated_as_income(text: str, income: float | None) -> None:
    assert income_of(text) == income


@pytest.mark.parametrize(
    ("text", "on", "program"),
    [
        ("patient on ODSP", True, "odsp"),
        ("she receives Ontario Works", True, "ontario_works"),
        ("patient on OW", True, "ontario_works"),
        ("child on ACSD", True, "acsd"),
        ("not on ODSP or Ontario Works", False, None),
        ("she is no longer receiving ODSP", False, None),
        ("a walker for daily use", None, None),
    ],
)
def test_social_assistance_is_read_with_its_negation(
    text: str, on: bool | None, program: str | None
) -> None:
    reading = assistance_of(text)
    assert reading[0] is on
    if on:
        assert reading[1] == program
