"""The typed failures a golden check raises: one class per way a check can miss, each with a
message that says which path, what was expected and what came back."""

from __future__ import annotations

from typing import Any


def _show(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class CheckFailure(Exception):
    """A check that did not hold. ``message`` says what path, what was expected, what came."""

    def __init__(self, check: str, path: str, expected: str, got: Any, detail: str = "") -> None:
        self.check = check
        self.path = path or "$"
        self.expected = expected
        self.got = got
        extra = f" ({detail})" if detail else ""
        self.message = f"{check} at {self.path}: expected {expected}, got {_show(got)}{extra}"
        super().__init__(self.message)

    @property
    def kind(self) -> str:
        return type(self).__name__


class NoResult(CheckFailure):
    """The tool returned an error (or no structuredContent) where a result was needed."""


class PathNotFound(CheckFailure):
    """The path selects nothing in the result."""


class ValueMismatch(CheckFailure):
    """equals / not_equals did not hold."""


class ContainmentFailure(CheckFailure):
    """contains / not_contains did not hold."""


class OutOfRange(CheckFailure):
    """A number fell outside at_least / at_most / between / confidence_range."""


class NotANumber(CheckFailure):
    """A range check met a value that is not a number."""


class PatternMismatch(CheckFailure):
    """matches: the regular expression did not match."""


class LengthMismatch(CheckFailure):
    """length: too few or too many items."""


class ItemsFailed(CheckFailure):
    """every_item / any_item: the nested check failed on items."""


class SchemaViolation(CheckFailure):
    """schema_valid: the result does not validate against the tool's outputSchema."""


class UnexpectedToolError(CheckFailure):
    """no_tool_error: the tool returned isError=true."""


class MissingToolError(CheckFailure):
    """tool_error: a result came back where an error was expected, or the message is wrong."""


class WrongProduct(CheckFailure):
    """asked_product: the answer is about another product or strength, and does not say so."""


class RankOrderFailure(CheckFailure):
    """ranked_before: id A did not rank above id B."""


class UnresolvedCitation(CheckFailure):
    """citations_resolve: a citation has no chunk id, or source.passages cannot show it."""


class NotChecked(Exception):
    """The check found nothing to judge (no figure for any id it knows): recorded as not
    checked, never as a pass of that check."""

    def __init__(self, check: str, path: str, reason: str) -> None:
        self.check = check
        self.path = path or "$"
        self.message = f"{check} at {self.path}: not checked ({reason})"
        super().__init__(self.message)
