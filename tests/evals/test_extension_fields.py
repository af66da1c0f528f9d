"""A check on a field the spec does not ask for is judged only where the backend publishes it."""

from __future__ import annotations

from typing import Any

from evals.run.checks import CheckSpec
from evals.run.extension_fields import declares, read_shapes, shape, unpublished_extension
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.scenario import Scenario
from evals.run.scenario_checks import evaluate_checks

EXTENSIONS = ("stale_documents[*].staleness", "provenance_issues")

# The reference server's way: stale documents are a $ref'd object that declares `staleness`.
DECLARING: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Stale": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "staleness": {"type": "string"}},
        }
    },
    "properties": {
        "stale_documents": {"type": "array", "items": {"$ref": "#/$defs/Stale"}},
        "provenance_issues": {"anyOf": [{"type": "array"}, {"type": "null"}]},
    },
}
# The spec's way: a stale document has a title (and no label).
SPEC_SHAPED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "stale_documents": {
            "type": "array",
            "items": {"type": "object", "properties": {"title": {"type": "string"}}},
        }
    },
}

LABEL = CheckSpec(check="equals", path="stale_documents[0].staleness", value="superseded")
EVERY_LABEL = CheckSpec(
    check="every_item",
    path="stale_documents",
    item=CheckSpec(check="equals", path="staleness", value="superseded"),
)
TITLE = CheckSpec(check="equals", path="stale_documents[0].title", value="Cervical")


def test_the_paths_a_check_reads_include_its_items() -> None:
    assert shape("stale_documents[0].staleness") == ("stale_documents", "[*]", "staleness")
    assert shape("") == shape("$") == ()
    assert list(read_shapes(EVERY_LABEL)) == [
        ("stale_documents",),
        ("stale_documents", "[*]", "staleness"),
    ]


def test_a_schema_declares_through_refs_unions_and_items() -> None:
    assert declares(DECLARING, shape("stale_documents[*].staleness"))
    assert declares(DECLARING, shape("provenance_issues"))
    assert not declares(SPEC_SHAPED, shape("stale_documents[*].staleness"))
    assert declares(SPEC_SHAPED, shape("stale_documents[*].title"))
    assert not declares(None, shape("stale_documents"))


def test_only_an_unpublished_extension_goes_unchecked() -> None:
    theirs = {"stale_documents": [{"title": "Cervical"}]}
    ours = {"stale_documents": [{"title": "Cervical", "staleness": "superseded"}]}
    assert unpublished_extension(LABEL, EXTENSIONS, SPEC_SHAPED, theirs) == EXTENSIONS[0]
    assert unpublished_extension(EVERY_LABEL, EXTENSIONS, SPEC_SHAPED, theirs) == EXTENSIONS[0]
    # declared (even if this answer lacks it), answered, not an extension, or none listed: judged
    assert unpublished_extension(LABEL, EXTENSIONS, DECLARING, theirs) is None
    assert unpublished_extension(LABEL, EXTENSIONS, SPEC_SHAPED, ours) is None
    assert unpublished_extension(TITLE, EXTENSIONS, SPEC_SHAPED, theirs) is None
    assert unpublished_extension(LABEL, (), SPEC_SHAPED, theirs) is None


def _judged(answer: dict[str, Any], schema: dict[str, Any]) -> dict[str, tuple[bool, bool]]:
    scenario = Scenario(
        id="stale-label",
        title="a stale document's label",
        tool="opa.freshness_probe",
        expect=[LABEL, TITLE],
        version=1,
        source="tests",
    )
    outcome = CallOutcome(structured=answer, is_error=False, text="")
    info = ToolInfo("opa.freshness_probe", {}, schema)
    checks = evaluate_checks(
        scenario, outcome, info, (), frozenset({"citations_resolve"}), extensions=EXTENSIONS
    )
    return {c.path: (c.passed, c.checked) for c in checks if not c.implicit}


def test_a_backend_that_declares_the_field_still_fails_without_it() -> None:
    theirs = {"stale_documents": [{"title": "Cervical"}]}
    assert _judged(theirs, SPEC_SHAPED) == {
        "stale_documents[0].staleness": (True, False),  # not checked, not passed
        "stale_documents[0].title": (True, True),
    }
    assert _judged(theirs, DECLARING)["stale_documents[0].staleness"] == (False, True)
    wrong = {"stale_documents": [{"title": "Cervical", "staleness": "likely_stale"}]}
    assert _judged(wrong, SPEC_SHAPED)["stale_documents[0].staleness"] == (False, True)


def test_advice_that_follows_from_an_extension_is_judged_only_with_it() -> None:
    advice = CheckSpec(
        check="any_item",
        path="recommendations",
        item=CheckSpec(check="mentions", path="", value="unverified"),
        follows_from="provenance_issues",
    )
    theirs = {"recommendations": ["Re-ingest Virtual Care"]}
    assert ("provenance_issues",) in list(read_shapes(advice))
    assert unpublished_extension(advice, EXTENSIONS, SPEC_SHAPED, theirs) == "provenance_issues"
    assert unpublished_extension(advice, EXTENSIONS, DECLARING, theirs) is None
