"""Show-source evidence: citations collected from any result shape, resolved in batches through
the target's source.passages, judged by the citations_resolve check and required by the gate."""

from __future__ import annotations

from typing import Any

import pytest
from evals_testkit import record

from evals.read.gate_config import GateConfig
from evals.read.gate_rules import required_check_findings
from evals.run.check_failures import NotChecked
from evals.run.checks import CheckContext, CheckSpec, UnresolvedCitation, run_check
from evals.run.citations import BATCH, CitationEvidence, cited_ids, resolve
from evals.run.outcome import CallOutcome
from evals.run.runlog import CheckOutcome
from evals.run.targets import TargetError

RESULT: dict[str, Any] = {
    "citations": [{"loc": "C124", "chunk_id": "ohip:subsection:1:p2"}, {"loc": "no id"}],
    "highlights": [{"citations": [{"chunk_id": "adp:prosthesis:205-2"}]}],
    "section": {"citation": {"text": "CPSO", "chunk_id": "cpso-virtual-care:s01"}},
    "passages": [{"chunk_id": "not-a-citation"}],
}


class FakeTarget:
    """Answers source.passages for the ids it knows; records every call."""

    def __init__(self, known: set[str], fail: str | None = None) -> None:
        self.known = known
        self.fail = fail
        self.calls: list[list[str]] = []

    async def call_tool(self, name: str, args: dict[str, Any], timeout_s: float) -> CallOutcome:
        assert name == "source.passages"
        ids = list(args["chunk_ids"])
        self.calls.append(ids)
        if self.fail == "transport":
            raise TargetError("connection refused")
        if self.fail == "tool":
            return CallOutcome(structured=None, is_error=True, text="Internal error")
        found = [{"chunk_id": i} for i in ids if i in self.known]
        if not found:
            return CallOutcome(structured=None, is_error=True, text="Not found: no chunk")
        return CallOutcome(structured={"passages": found}, is_error=False, text="")


def check(evidence: CitationEvidence | None) -> None:
    outcome = CallOutcome(structured=RESULT, is_error=False, text="")
    run_check(
        CheckContext(RESULT, outcome, citations=evidence), CheckSpec(check="citations_resolve")
    )


def test_cited_ids_walks_every_citation_shape_and_names_ones_without_id() -> None:
    ids, without = cited_ids(RESULT)
    assert ids == ["ohip:subsection:1:p2", "adp:prosthesis:205-2", "cpso-virtual-care:s01"]
    assert without == ["$.citations[1]"]
    assert cited_ids({"items": [{"code": "C124"}]}) == ([], [])


@pytest.mark.asyncio
async def test_resolve_lists_missing_ids_and_batches_by_fifty() -> None:
    many = {"citations": [{"chunk_id": f"odb:lu:{i}"} for i in range(BATCH + 5)]}
    target = FakeTarget(known={f"odb:lu:{i}" for i in range(BATCH + 4)})
    evidence = await resolve(target, many, timeout_s=5)  # type: ignore[arg-type]
    assert evidence is not None
    assert [len(c) for c in target.calls] == [BATCH, 5]
    assert evidence.cited == BATCH + 5 and evidence.missing == [f"odb:lu:{BATCH + 4}"]
    assert not evidence.ok


@pytest.mark.asyncio
async def test_resolve_counts_a_not_found_batch_as_missing_and_other_errors_as_errors() -> None:
    one = {"citations": [{"chunk_id": "x:1"}]}
    evidence = await resolve(FakeTarget(known=set()), one, timeout_s=5)  # type: ignore[arg-type]
    assert evidence is not None and evidence.missing == ["x:1"] and evidence.error is None
    for fail in ("tool", "transport"):
        target = FakeTarget(known={"x:1"}, fail=fail)
        evidence = await resolve(target, one, timeout_s=5)  # type: ignore[arg-type]
        assert evidence is not None and evidence.error and not evidence.ok
    assert await resolve(FakeTarget(known=set()), {"items": []}, timeout_s=5) is None  # type: ignore[arg-type]


def test_check_passes_on_resolved_evidence_and_is_not_checked_without_any() -> None:
    check(CitationEvidence(cited=1, resolved=["a"]))
    with pytest.raises(NotChecked):
        check(None)  # a tool whose schema has no citations: nothing to judge, not a pass


CITING_SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array"}, "citations": {"type": "array"}},
}


def test_an_answer_without_citations_fails_when_the_schema_has_them() -> None:
    """A schedule.get that dropped its citations: nothing to resolve is not a pass."""
    outcome = CallOutcome(structured={"items": [{"code": "A001"}]}, is_error=False, text="")
    ctx = CheckContext(outcome.structured, outcome, output_schema=CITING_SCHEMA, citations=None)
    with pytest.raises(UnresolvedCitation, match="at least one citation"):
        run_check(ctx, CheckSpec(check="citations_resolve"))
    # a scenario whose right answer has nothing to cite (tag no-citations) is not checked
    with pytest.raises(NotChecked):
        run_check(ctx, CheckSpec(check="citations_resolve", value=False))


@pytest.mark.parametrize(
    ("evidence", "words"),
    [
        (CitationEvidence(cited=2, resolved=["a"], missing=["b"]), "1 missing"),
        (CitationEvidence(cited=1, resolved=["a"], without_id=["$.citations[1]"]), "chunk_id"),
        (CitationEvidence(cited=1, error="Internal error"), "source.passages to answer"),
    ],
)
def test_check_fails_on_missing_unidentified_or_unanswered(
    evidence: CitationEvidence, words: str
) -> None:
    with pytest.raises(UnresolvedCitation) as info:
        check(evidence)
    assert words in info.value.message


def _with(check_name: str, passed: bool, scenario: str) -> Any:
    base = record(scenario)
    outcome = CheckOutcome(check=check_name, passed=passed, implicit=True, message="x")
    return base.model_copy(update={"checks": [*base.checks, outcome]})


def test_gate_requires_the_check_to_have_run_and_held_everywhere() -> None:
    config = GateConfig(required_checks=["citations_resolve"])
    held = required_check_findings(
        config, [_with("citations_resolve", True, "a"), _with("citations_resolve", True, "b")]
    )
    assert [f.passed for f in held] == [True]
    failed = required_check_findings(
        config, [_with("citations_resolve", True, "a"), _with("citations_resolve", False, "b")]
    )
    assert [f.passed for f in failed] == [False] and "1 of 2" in failed[0].message
    never = required_check_findings(config, [record("a")])
    assert [f.passed for f in never] == [False] and "never ran" in never[0].message


def test_committed_gate_requires_show_source() -> None:
    from evals.read.gate import DEFAULT_CONFIG
    from evals.read.gate_config import load_config

    assert "citations_resolve" in load_config(DEFAULT_CONFIG).required_checks
