"""The checks one golden scenario runs: its own plus the implicit ones (no tool error, output
valid against the published schema, citations that resolve), minus those switched off by name,
each outcome a value (passed, failed with its kind and path, or not checked).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evals.run.check_failures import NotChecked
from evals.run.checks import CheckContext, CheckFailure, CheckSpec, run_check
from evals.run.citations import CitationEvidence
from evals.run.extension_fields import not_published_reason, unpublished_extension
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.runlog import CheckOutcome
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

IMPLICIT_CHECKS: tuple[str, ...] = ("no_tool_error", "schema_valid", "citations_resolve")
# A scenario whose right answer has nothing to cite (nothing found, more information needed):
# with this tag an answer without citations is not checked rather than failed.
NO_CITATIONS_TAG = "no-citations"


def planned_checks(
    scenario: Scenario, disabled: frozenset[str] = frozenset()
) -> list[tuple[CheckSpec, bool]]:
    """The scenario's checks plus the implicit ones, minus those switched off by name."""
    implicit: list[CheckSpec] = []
    if not scenario.expects_error:
        implicit = [
            CheckSpec(check=name, value=False)
            if name == "citations_resolve" and NO_CITATIONS_TAG in scenario.tags
            else CheckSpec(check=name)
            for name in IMPLICIT_CHECKS
        ]
    planned = [(spec, True) for spec in implicit] + [(spec, False) for spec in scenario.expect]
    return [(spec, flag) for spec, flag in planned if spec.check not in disabled]


def evaluate_checks(
    scenario: Scenario,
    outcome: CallOutcome,
    tool: ToolInfo | None,
    ids: Sequence[str],
    disabled: frozenset[str] = frozenset(),
    citations: CitationEvidence | None = None,
    args: Arguments | None = None,
    extensions: Sequence[str] = (),
) -> list[CheckOutcome]:
    """Run every planned check on one outcome; failures become values, not exceptions. A check
    that reads one of the tool's ``extensions`` the backend does not publish is not checked."""
    ctx = CheckContext(
        data=outcome.structured,
        outcome=outcome,
        output_schema=tool.output_schema if tool else None,
        retrieved_ids=tuple(ids),
        citations=citations,
        args=dict(args if args is not None else scenario.args),
    )
    results: list[CheckOutcome] = []
    for spec, implicit in planned_checks(scenario, disabled):
        outcome_of = partial(CheckOutcome, check=spec.check, implicit=implicit)
        try:
            unpublished = (
                None
                if outcome.is_error
                else (unpublished_extension(spec, extensions, ctx.output_schema, ctx.data))
            )
            if unpublished is not None:
                raise NotChecked(spec.check, spec.path, not_published_reason(unpublished))
            run_check(ctx, spec)
        except NotChecked as nothing:
            results.append(
                outcome_of(path=nothing.path, passed=True, checked=False, message=nothing.message)
            )
        except CheckFailure as failure:
            results.append(
                outcome_of(
                    path=failure.path, passed=False, failure=failure.kind, message=failure.message
                )
            )
        else:
            results.append(outcome_of(path=spec.path or "$", passed=True))
    return results
