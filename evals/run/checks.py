"""Declarative checks on a tool result, registered by name.

A check is a small function ``fn(ctx, spec) -> None`` that raises a typed :class:`CheckFailure`
subclass with a readable message (which path, what was expected, what came back). The
``@check`` decorator records the name and the spec fields the check needs, so a golden file
that names an unknown check or forgets a field is rejected when it is loaded, not when it runs.

Path semantics: a path without ``[*]`` selects one value and must exist. A path with ``[*]``
selects the list of matches; value checks (equals, contains, length, exists) look at that list,
while scalar checks (at_least, at_most, between, matches, confidence_range) must hold for every
match and need at least one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evals.run.check_failures import (
    CheckFailure,
    ContainmentFailure,
    ItemsFailed,
    LengthMismatch,
    MissingToolError,
    NoResult,
    NotANumber,
    NotChecked,
    OutOfRange,
    PathNotFound,
    PatternMismatch,
    RankOrderFailure,
    SchemaViolation,
    UnexpectedToolError,
    UnresolvedCitation,
    ValueMismatch,
    WrongProduct,
)
from evals.run.citations import CitationEvidence
from evals.run.jsonpath import PathSyntaxError, parse
from evals.run.outcome import CallOutcome
from ocm_common.json_types import Arguments, JsonSchema
from ocm_common.registry import Registry

__all__ = [
    "CHECKS",
    "CheckContext",
    "CheckFailure",
    "CheckSpec",
    "ContainmentFailure",
    "ItemsFailed",
    "LengthMismatch",
    "MissingToolError",
    "NoResult",
    "NotANumber",
    "NotChecked",
    "OutOfRange",
    "PathNotFound",
    "PatternMismatch",
    "RankOrderFailure",
    "SchemaViolation",
    "UnexpectedToolError",
    "UnresolvedCitation",
    "ValueMismatch",
    "WrongProduct",
    "check",
    "run_check",
]


class CheckSpec(BaseModel):
    """One entry of a scenario's ``expect`` list."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    check: str
    path: str = ""
    value: Any = None
    tolerance: float | None = Field(default=None, ge=0)
    min: float | None = None
    max: float | None = None
    pattern: str | None = None
    ignore_case: bool = False
    item: CheckSpec | None = None
    allow_empty: bool = False
    field: str | None = None
    key: str | None = None
    before: str | None = None
    after: str | None = None
    # an extension field this check is about though it reads another (advice that follows from
    # it): the check is judged only where the backend publishes that field
    follows_from: str | None = None

    @model_validator(mode="after")
    def _known_and_complete(self) -> CheckSpec:
        validate_spec(self)
        return self

    def describe(self) -> str:
        return f"{self.check}({self.path or '$'})"


@dataclass(frozen=True)
class CheckContext:
    """What a check can look at: the value paths resolve against, the whole outcome, the
    tool's published outputSchema and the ranked ids the result retrieved."""

    data: Any
    outcome: CallOutcome
    output_schema: JsonSchema | None = None
    retrieved_ids: tuple[str, ...] = ()
    citations: CitationEvidence | None = None
    args: Arguments = field(default_factory=dict)  # the arguments the tool was called with

    def on(self, data: Any) -> CheckContext:
        """The same context with paths resolving against ``data`` (for nested item checks)."""
        return CheckContext(
            data, self.outcome, self.output_schema, self.retrieved_ids, self.citations, self.args
        )


# ----------------------------------------------------------------------------- failures
# ----------------------------------------------------------------------------- registry

CheckFn = Callable[[CheckContext, CheckSpec], None]


@dataclass(frozen=True)
class CheckDef:
    """A registered check: its function and the spec fields it cannot do without."""

    name: str
    fn: CheckFn
    needs: frozenset[str] = field(default_factory=frozenset)
    needs_result: bool = True
    doc: str = ""


# The checks live in check_library.py and check_evidence.py (registered on import); the
# registry imports them when first read, so this module, which they import, never imports them.
CHECKS: Registry[CheckDef] = Registry(
    "check",
    plugins=("evals.run.check_library", "evals.run.check_evidence"),
    entry_point_group="ocm.checks",
)
NEEDS_MORE_INFO = "needs_more_info"


def check(
    name: str, *, needs: tuple[str, ...] = (), needs_result: bool = True
) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as the check called ``name`` in golden files."""
    return CHECKS.decorator(
        name,
        lambda fn: CheckDef(name, fn, frozenset(needs), needs_result, (fn.__doc__ or "").strip()),
    )


def validate_spec(spec: CheckSpec) -> None:
    """Reject unknown checks, missing fields, bad paths and bad regexes at load time."""
    if spec.check not in CHECKS:
        known = ", ".join(sorted(CHECKS))
        raise ValueError(f"unknown check {spec.check!r}; known checks: {known}")
    definition = CHECKS[spec.check]
    missing = sorted(name for name in definition.needs if name not in spec.model_fields_set)
    if missing:
        raise ValueError(f"check {spec.check!r} needs field(s): {', '.join(missing)}")
    try:
        parse(spec.path)
        parse(spec.follows_from or "")
    except PathSyntaxError as exc:
        raise ValueError(str(exc)) from None
    if spec.pattern is not None:
        try:
            re.compile(spec.pattern)
        except re.error as exc:
            raise ValueError(f"pattern {spec.pattern!r} is not a valid regex: {exc}") from None
    if spec.min is not None and spec.max is not None and spec.min > spec.max:
        raise ValueError(f"min {spec.min} is greater than max {spec.max}")


def run_check(ctx: CheckContext, spec: CheckSpec) -> None:
    """Run one check; raises a :class:`CheckFailure` subclass when it does not hold."""
    definition = CHECKS[spec.check]
    if definition.needs_result and ctx.data is None:
        reason = (
            f"tool error: {ctx.outcome.text.strip()[:200]}"
            if ctx.outcome.is_error
            else "no structuredContent"
        )
        raise NoResult(spec.check, spec.path, "a structured result", None, reason)
    definition.fn(ctx, spec)
