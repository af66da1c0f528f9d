"""Every registered check passes on a matching result and fails, typed and readable, otherwise."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from evals.run import checks as c
from evals.run.checks import CHECKS, CheckContext, CheckSpec, run_check
from evals.run.outcome import CallOutcome

RESULT: dict[str, Any] = {
    "confidence": 0.9,
    "provenance": ["sql", "vector"],
    "summary": "A007 is billable by a GP for an intermediate assessment.",
    "items": [
        {"code": "A007", "fee": 37.95, "description": "Intermediate assessment"},
        {"code": "K013", "fee": 64.15, "description": "Counselling"},
    ],
    "coverage": {"covered": True, "din": "02443937"},
    "section": {
        "section_heading": "Consent to Treatment",
        "source_url": "https://www.cpso.on.ca/en/Policies/Consent/",
        "text": "Limited to one service per hospital admission, not within 48 h.",
        "fee": "$37.95",
        "share_percent": 0.75,
    },
}
SCHEMA = {
    "type": "object",
    "required": ["confidence", "items"],
    "properties": {
        "confidence": {"type": "number"},
        "items": {"type": "array", "items": {"type": "object", "required": ["code"]}},
    },
}
IDS = ("doc-a:s01", "doc-b:s02", "doc-c:s03")


def ctx(
    result: dict[str, Any] | None = RESULT, *, is_error: bool = False, text: str = ""
) -> CheckContext:
    outcome = CallOutcome(structured=result, is_error=is_error, text=text)
    return CheckContext(result, outcome, SCHEMA, IDS, args={"codes": ["A007", "K013"]})


# (spec, passes on RESULT) pairs: one that holds and one that does not, for every check.
CASES: list[tuple[dict[str, Any], type[c.CheckFailure] | None]] = [
    ({"check": "equals", "path": "coverage.din", "value": "02443937"}, None),
    ({"check": "equals", "path": "coverage.din", "value": "02443938"}, c.ValueMismatch),
    ({"check": "equals", "path": "items[0].fee", "value": 37.9, "tolerance": 0.1}, None),
    ({"check": "equals", "path": "items[0].fee", "value": 37.9}, c.ValueMismatch),
    # numbers as any backend states them: "$37.95", a share in percent given as a fraction
    ({"check": "equals", "path": "section.fee", "value": 37.95, "tolerance": 0.001}, None),
    ({"check": "equals", "path": "section.share_percent", "value": 75, "tolerance": 0.1}, None),
    ({"check": "equals", "path": "section.fee", "value": 38, "tolerance": 0.01}, c.ValueMismatch),
    ({"check": "equals", "path": "items[*].code", "value": ["A007", "K013"]}, None),
    ({"check": "equals", "path": "nope", "value": 1}, c.PathNotFound),
    ({"check": "not_equals", "path": "coverage.covered", "value": False}, None),
    ({"check": "not_equals", "path": "coverage.covered", "value": True}, c.ValueMismatch),
    ({"check": "contains", "path": "summary", "value": "billable"}, None),
    ({"check": "contains", "path": "summary", "value": "BILLABLE", "ignore_case": True}, None),
    ({"check": "contains", "path": "summary", "value": "not covered"}, c.ContainmentFailure),
    ({"check": "contains", "path": "provenance", "value": "sql"}, None),
    ({"check": "contains", "path": "items[*].code", "value": "K999"}, c.ContainmentFailure),
    ({"check": "not_contains", "path": "provenance", "value": "web"}, None),
    ({"check": "not_contains", "path": "provenance", "value": "vector"}, c.ContainmentFailure),
    ({"check": "at_least", "path": "confidence", "value": 0.8}, None),
    ({"check": "at_least", "path": "items[*].fee", "value": 50}, c.OutOfRange),
    ({"check": "at_least", "path": "summary", "value": 1}, c.NotANumber),
    ({"check": "at_most", "path": "items[*].fee", "value": 100}, None),
    ({"check": "at_most", "path": "confidence", "value": 0.5}, c.OutOfRange),
    ({"check": "between", "path": "items[0].fee", "min": 30, "max": 40}, None),
    ({"check": "between", "path": "items[1].fee", "min": 30, "max": 40}, c.OutOfRange),
    ({"check": "matches", "path": "items[*].code", "pattern": "^[A-Z]\\d{3}$"}, None),
    ({"check": "matches", "path": "coverage.din", "pattern": "^\\d{9}$"}, c.PatternMismatch),
    ({"check": "length", "path": "items", "min": 1, "max": 2}, None),
    ({"check": "length", "path": "items", "min": 3}, c.LengthMismatch),
    ({"check": "exists", "path": "coverage.din"}, None),
    ({"check": "exists", "path": "coverage.lu_code"}, c.PathNotFound),
    (
        {"check": "every_item", "path": "items", "item": {"check": "exists", "path": "fee"}},
        None,
    ),
    (
        {
            "check": "every_item",
            "path": "items",
            "item": {"check": "at_most", "path": "fee", "value": 50},
        },
        c.ItemsFailed,
    ),
    (
        {
            "check": "any_item",
            "path": "items",
            "item": {"check": "equals", "path": "code", "value": "K013"},
        },
        None,
    ),
    (
        {
            "check": "any_item",
            "path": "items",
            "item": {"check": "equals", "path": "code", "value": "Z1"},
        },
        c.ItemsFailed,
    ),
    ({"check": "schema_valid"}, None),
    ({"check": "no_tool_error"}, None),
    ({"check": "tool_error", "field": "codes"}, c.MissingToolError),
    ({"check": "confidence_range", "min": 0.85, "max": 0.95}, None),
    ({"check": "confidence_range", "min": 0.95}, c.OutOfRange),
    ({"check": "ranked_before", "before": "doc-a:s01", "after": "doc-c:s03"}, None),
    ({"check": "ranked_before", "before": "doc-a:s01", "after": "doc-z:s09"}, None),
    ({"check": "ranked_before", "before": "doc-c:s03", "after": "doc-a:s01"}, c.RankOrderFailure),
    ({"check": "ranked_before", "before": "doc-z:s09", "after": "doc-a:s01"}, c.RankOrderFailure),
    # the fee code's fee as the OHIP Schedule states it, wherever the answer puts it
    (
        {"check": "source_values", "key": "code", "field": "fee", "value": {"A007": 37.95}},
        None,
    ),
    (
        {"check": "source_values", "key": "code", "field": "fee", "value": {"K013": 60.0}},
        c.ValueMismatch,
    ),
    (
        {"check": "contains_record", "path": "items", "value": {"code": "K013", "fee": 64.15}},
        None,
    ),
    (
        {"check": "contains_record", "path": "items", "value": {"code": "K013", "fee": 37.95}},
        c.ContainmentFailure,
    ),
    (
        {"check": "asked_product", "path": "coverage.din", "value": ["02443937"], "field": "x"},
        None,
    ),
    (
        {"check": "asked_product", "path": "coverage.din", "value": ["00000001"], "field": "x"},
        c.WrongProduct,
    ),
    # facts in prose, however worded: numbers as numbers, units in any spelling
    (
        {
            "check": "mentions",
            "path": "section.text",
            "value": ["1 service per hospital admission", "48 hours"],
        },
        None,
    ),
    ({"check": "mentions", "path": "section", "value": ["2 services"]}, c.ContainmentFailure),
    ({"check": "denies", "path": "section.text"}, None),
    ({"check": "denies", "path": "summary"}, c.ContainmentFailure),
    ({"check": "equals_arg", "path": "items[*].code", "field": "codes"}, None),
    ({"check": "equals_arg", "path": "items[*].code", "field": "ids"}, c.PathNotFound),
    # a section by its document's official URL (any spelling) and its own heading
    (
        {
            "check": "same_section",
            "path": "section",
            "value": [
                {"url": "https://cpso.on.ca/en/Policies/Consent", "heading": "consent to treatment"}
            ],
        },
        None,
    ),
    (
        {
            "check": "same_section",
            "path": "section",
            "value": [{"url": "https://cpso.on.ca/en/Policies/Consent", "heading": "Capacity"}],
        },
        c.ValueMismatch,
    ),
]


@pytest.mark.parametrize(
    ("raw", "failure"), CASES, ids=lambda v: str(v)[:60] if isinstance(v, dict) else ""
)
def test_check_on_result(raw: dict[str, Any], failure: type[c.CheckFailure] | None) -> None:
    spec = CheckSpec.model_validate(raw)
    if failure is None:
        run_check(ctx(), spec)
    else:
        with pytest.raises(failure) as info:
            run_check(ctx(), spec)
        assert info.value.message.startswith(f"{spec.check} at ")
        assert "expected" in info.value.message and "got" in info.value.message


def test_every_registered_check_is_exercised_both_ways() -> None:
    passing = {raw["check"] for raw, failure in CASES if failure is None}
    failing = {raw["check"] for raw, failure in CASES if failure is not None}
    # tool_error and no_tool_error pass/fail on error outcomes, tested below.
    # citations_resolve passes and fails on the runner's show-source evidence
    # (tests/evals/test_evals_citations.py); without any it is not checked (below)
    assert set(CHECKS) - {"tool_error", "citations_resolve"} <= passing
    assert set(CHECKS) - {"no_tool_error", "schema_valid", "citations_resolve"} <= failing


def test_nothing_to_judge_is_not_checked_never_a_pass() -> None:
    with pytest.raises(c.NotChecked):  # no runner evidence, a schema without citations
        run_check(ctx(), CheckSpec(check="citations_resolve"))
    with pytest.raises(c.NotChecked):  # no fee given for the code the source lists
        run_check(
            ctx(), CheckSpec(check="source_values", key="code", field="fee", value={"Z999": 1})
        )
    # a section named only by the backend's own id: which document it is from is not stated
    private = {"requirement": {"source_section_id": "ipac-7", "section_heading": "Consent"}}
    wanted = [{"url": "https://cpso.on.ca/en/Policies/Consent", "heading": "Consent"}]
    with pytest.raises(c.NotChecked):
        run_check(ctx(private), CheckSpec(check="same_section", path="requirement", value=wanted))
    # another official URL is stated: judged, and failed
    other = {"requirement": {"id": "ipac-7", "url": "https://www.publichealthontario.ca/x.pdf"}}
    with pytest.raises(c.ValueMismatch):
        run_check(ctx(other), CheckSpec(check="same_section", path="requirement", value=wanted))


def test_schema_valid_fails_on_invalid_result() -> None:
    bad = {"confidence": "high", "items": [{"fee": 1}]}
    with pytest.raises(c.SchemaViolation) as info:
        run_check(ctx(bad), CheckSpec(check="schema_valid"))
    message = info.value.message
    assert message.startswith("schema_valid at $.confidence: expected a result valid")
    assert "$.confidence: 'high' is not of type 'number'" in message
    assert "$.items[0]: 'code' is a required property" in message


def test_schema_valid_fails_without_published_schema() -> None:
    context = CheckContext(RESULT, CallOutcome(RESULT, False, ""), None, ())
    with pytest.raises(c.SchemaViolation, match="outputSchema"):
        run_check(context, CheckSpec(check="schema_valid"))


def test_tool_error_checks_on_error_outcome() -> None:
    error = ctx(None, is_error=True, text="codes: unknown fee code(s) Z999")
    run_check(error, CheckSpec(check="tool_error", field="codes"))
    run_check(error, CheckSpec(check="tool_error", field="codes", pattern="Z999"))
    with pytest.raises(c.MissingToolError, match="mention 'din'"):
        run_check(error, CheckSpec(check="tool_error", field="din"))
    with pytest.raises(c.MissingToolError, match="match"):
        run_check(error, CheckSpec(check="tool_error", field="codes", pattern="A007"))
    with pytest.raises(c.UnexpectedToolError, match="Z999"):
        run_check(error, CheckSpec(check="no_tool_error"))


def test_result_check_on_error_outcome_says_tool_error() -> None:
    error = ctx(None, is_error=True, text="internal failure")
    with pytest.raises(c.NoResult, match="tool error: internal failure"):
        run_check(error, CheckSpec(check="equals", path="coverage.covered", value=True))


def test_every_item_rejects_empty_list_unless_allowed() -> None:
    empty: dict[str, Any] = {"items": []}
    spec = {"check": "every_item", "path": "items", "item": {"check": "exists", "path": "code"}}
    with pytest.raises(c.ItemsFailed, match="non-empty"):
        run_check(ctx(empty), CheckSpec.model_validate(spec))
    run_check(ctx(empty), CheckSpec.model_validate({**spec, "allow_empty": True}))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"check": "equal", "path": "a", "value": 1}, "unknown check 'equal'"),
        ({"check": "equals", "path": "a"}, "needs field(s): value"),
        ({"check": "between", "path": "a", "min": 1}, "needs field(s): max"),
        ({"check": "matches", "path": "a", "pattern": "("}, "not a valid regex"),
        ({"check": "equals", "path": "a..b", "value": 1}, "empty key"),
        ({"check": "length", "path": "a", "min": 3, "max": 1}, "greater than max"),
        ({"check": "tool_error"}, "needs field(s): field"),
        ({"check": "every_item", "path": "a", "item": {"check": "nope"}}, "unknown check 'nope'"),
        ({"check": "equals", "path": "a", "value": 1, "colour": "red"}, "colour"),
    ],
)
def test_invalid_specs_are_rejected_at_load(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        CheckSpec.model_validate(raw)
