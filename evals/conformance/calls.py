"""The one call classifier: how a ``tools/call`` ended, as every conformance check sees it.

A call is answered, a tool error, a crash (an internal JSON-RPC error, or an error text that is
an exception's: a traceback, a file and line, an OS error number, an exception class name, an
internal path, the framework's wording for an unhandled exception), a protocol error (another
JSON-RPC error) or no answer (dropped, timed out). A crash is never mistaken for an ordinary
tool error, and vice versa; fuzz and security judge error texts with the same signs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from evals.run.outcome import CallOutcome

INTERNAL_ERROR = -32603
# the MCP SDK client's own codes for a closed connection and for no answer in time
CONNECTION_CLOSED, REQUEST_TIMEOUT = -32000, -32001

STACK_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|^\s+at [\w.$]+\(", re.M
)
# How frameworks word an exception the tool did not handle (FastMCP: "Error calling tool 'x'",
# with or without the exception's message); a deliberate tool error keeps its own text.
UNHANDLED = re.compile(r"^Error calling tool '[^']*'", re.M)
EXCEPTION_SIGNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("a Python traceback", r"Traceback \(most recent call last\)"),
        ("a source file and line", r"File \"[^\"]+\.py\", line \d+|\bat [\w.$]+\([\w.]+:\d+\)"),
        ("an OS error number", r"\[Errno \d+\]"),
        (
            "an exception class name",
            r"\b(?:[A-Z][a-z0-9]+)+(?:Error|Exception)\b(?=: |\()|"
            r"\b(?:KeyError|IndexError|AttributeError|ZeroDivisionError|TypeError|"
            r"NameError|AssertionError|RecursionError|UnboundLocalError)\b",
        ),
        (
            "an internal path",
            r"(?<![\w/])/(?:home|srv|opt|usr|var|app)/[\w.\-/]+\.(?:py|js|ts|go|rb)\b",
        ),
    )
)
NOT_FOUND = re.compile(r"^\s*not found\b", re.I)

Kind = Literal["answered", "tool-error", "crash", "protocol-error", "no-answer"]


def exception_signs(text: str) -> list[str]:
    """The signs of an exception's insides in a text."""
    return [label for label, p in EXCEPTION_SIGNS if p.search(text)]


def crash_signs(text: str) -> list[str]:
    """Why an error text is an unhandled exception's: its signs, or the framework's wording."""
    signs = exception_signs(text)
    if UNHANDLED.search(text):
        signs.append("the framework's wording for an unhandled exception")
    return signs


@dataclass(frozen=True)
class Classified:
    """One call as the checks see it: the outcome (None without an answer), how it ended, and
    for a JSON-RPC error its code and message."""

    kind: Kind
    outcome: CallOutcome | None
    error_code: int | None = None
    error_text: str = ""
    timed_out: bool = False

    @property
    def text(self) -> str:
        return self.outcome.text if self.outcome is not None else self.error_text


def classify(outcome: CallOutcome | None, error: BaseException | None) -> Classified:
    """Answered, tool error, crash, protocol error or no answer (see the module docstring)."""
    if outcome is not None:
        if not outcome.is_error:
            return Classified("answered", outcome)
        return Classified("crash" if crash_signs(outcome.text) else "tool-error", outcome)
    cause = error.__cause__ if error is not None and error.__cause__ is not None else error
    code = getattr(getattr(cause, "error", None), "code", None)
    text = str(cause or error or "")
    if code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):  # made up by the client: no answer came
        return Classified("no-answer", None, None, text, code == REQUEST_TIMEOUT)
    if isinstance(code, int):
        kind: Kind = "crash" if code == INTERNAL_ERROR or crash_signs(text) else "protocol-error"
        return Classified(kind, None, code, text)
    timed_out = isinstance(cause, TimeoutError) or "timed out" in text.lower()
    return Classified("no-answer", None, None, text, timed_out)


def ending(call: Classified) -> str:
    """How a call ended, for the report: its kind, with a tool error that says 'not found' (an
    id the corpus lacks, the one failure a schema-valid call may have) told apart."""
    if call.kind == "tool-error" and NOT_FOUND.search(call.text):
        return "not-found"
    return call.kind
