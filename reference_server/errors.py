"""Errors that become MCP tool errors with a message a client can act on.

Inside a tool, bad input raises `ToolInputError` naming the field and its allowed values;
a call with several problems lists every one of them (a client fixes them in one round).
An unknown id raises `NotFoundError`. Anything else is an internal error (`InternalError`):
the client gets a generic message and an error id, never the exception's class, text or
traceback (which may hold SQL, file paths or data); the server log keeps all of it under the
same id, so a report quoting the id leads to the detail.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fastmcp.exceptions import ToolError

log = logging.getLogger("reference_server.internal")

# Every error written for clients (input problems, unknown ids, failed look-ups) derives from it.
ClientFacingError = ToolError


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a call: the field (dotted path, `arguments` for the call as a whole),
    what is wrong, and what would be accepted (a list of values, a range in words, or None)."""

    field: str
    problem: str
    allowed: Sequence[object] | str | None = None

    def describe(self) -> str:
        text = f"'{self.field}': {self.problem.rstrip('.')}."
        if self.allowed is not None:
            shown = (
                self.allowed
                if isinstance(self.allowed, str)
                else ", ".join(repr(a) for a in self.allowed)
            )
            text += f" Allowed: {shown}."
        return text


class ToolInputError(ToolError):
    """One or more request fields are missing or invalid."""

    def __init__(
        self,
        field: str,
        problem: str,
        allowed: Iterable[object] | str | None = None,
        *,
        more: Sequence[Problem] = (),
    ):
        shown = allowed if allowed is None or isinstance(allowed, str) else list(allowed)
        self.problems: list[Problem] = [Problem(field, problem, shown), *more]
        self.field = field
        self.allowed = shown
        if len(self.problems) == 1:
            message = f"Invalid argument {self.problems[0].describe()}"
        else:
            lines = "\n".join(f"- {p.describe()}" for p in self.problems)
            message = f"Invalid arguments ({len(self.problems)} problems):\n{lines}"
        super().__init__(message)

    @classmethod
    def from_problems(cls, problems: Sequence[Problem]) -> ToolInputError:
        first, *rest = problems
        return cls(first.field, first.problem, first.allowed, more=rest)


class NotFoundError(ToolError):
    """The requested id does not exist in the corpus."""

    def __init__(self, kind: str, identifier: str, hint: str = ""):
        shown = identifier if len(identifier) <= 120 else identifier[:120] + "..."
        message = f"Not found: no {kind} with id {shown!r}."
        if hint:
            message += f" {hint}"
        super().__init__(message)


class PathsFailedError(ToolError):
    """Retrieval failed and found nothing, so whether the id exists is unknown (not a
    NotFoundError): the client should try again."""


class IndexMissingError(ToolError):
    """The corpus index has not been built."""

    def __init__(self, path: str):
        super().__init__(f"Corpus index not found at {path}: run `make index` first.")


def log_internal(where: str, exc: BaseException) -> str:
    """Log an unexpected exception (with its traceback) under a new error id, and return the id."""
    error_id = secrets.token_hex(6)
    log.error(
        "internal error %s in %s: %s: %s",
        error_id,
        where,
        type(exc).__name__,
        exc,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return error_id


def masked(where: str, exc: BaseException) -> str:
    """What a client may see of an unexpected exception: that it happened, and its error id."""
    return f"internal error (error id {log_internal(where, exc)})"


class InternalError(ToolError):
    """An unexpected exception inside a tool, masked for the client and logged in full."""

    def __init__(self, tool: str, exc: BaseException):
        self.error_id = log_internal(tool, exc)
        super().__init__(
            f"{tool} failed with an internal error (error id {self.error_id}); the server "
            "logged the details under that id. Try again, or report the id."
        )
