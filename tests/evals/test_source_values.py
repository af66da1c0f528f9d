"""source_values: every figure an answer gives for an id the source lists is the source's, read
from any object that names the id, in any number spelling; nothing to judge is not a pass."""

from __future__ import annotations

from typing import Any

import pytest

from evals.run.check_failures import NotChecked, ValueMismatch
from evals.run.check_library import as_number
from evals.run.checks import CheckContext, CheckSpec, run_check
from evals.run.outcome import CallOutcome

# From the ODB formulary extract as the derived odb.din cases carry it (individual_price per DIN)
SOURCE = {"02443937": 2.7131, "02545333": 0.6783}
SPEC = CheckSpec(
    check="source_values", path="$", key="din", field="price", value=SOURCE, tolerance=0.00005
)


def _run(result: dict[str, Any]) -> None:
    outcome = CallOutcome(structured=result, is_error=False, text="")
    run_check(CheckContext(result, outcome), SPEC)


def test_numbers_as_backends_write_them() -> None:
    assert as_number(2.71) == 2.71
    assert as_number("$2.71") == 2.71
    assert as_number("1,250.00 CAD") == 1250.0
    assert as_number("no price") is None and as_number(True) is None


def test_every_listed_price_is_judged_wherever_the_answer_puts_it() -> None:
    _run(
        {
            "interchangeable": [
                {"din": "02545333", "price": 0.6783},
                {"din": "09999999", "price": 9},
            ],
            "price_comparison": {"requested_din": "02443937", "requested_price": "$2.7131"},
        }
    )


def test_a_price_fifteen_percent_high_fails_naming_the_din() -> None:
    with pytest.raises(ValueMismatch, match=r"02443937: 3\.1200\d \(source 2\.7131\)"):
        _run({"lowest_cost": {"din": "02443937", "price": round(2.7131 * 1.15, 5)}})


def test_an_answer_with_no_price_for_a_listed_din_is_not_checked() -> None:
    with pytest.raises(NotChecked, match="no price given"):
        _run({"coverage": {"din": "02443937", "covered": True}, "interchangeable": []})
