"""Errors that become MCP tool errors with a message a client can act on.

Inside a tool, bad input raises `ToolInputError` naming the field and its allowed values;
an unknown id raises `NotFoundError`. Anything else is an internal error: the server masks
it (no stack trace reaches the client) and logs it.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastmcp.exceptions import ToolError


class ToolInputError(ToolError):
    """A request field is missing or invalid."""

    def __init__(self, field: str, problem: str, allowed: Iterable[object] | str | None = None):
        self.field = field
        self.allowed = allowed
        message = f"Invalid argument '{field}': {problem}."
        if allowed is not None:
            shown = allowed if isinstance(allowed, str) else ", ".join(repr(a) for a in allowed)
            message += f" Allowed: {shown}."
        super().__init__(message)


class NotFoundError(ToolError):
    """The requested id does not exist in the corpus."""

    def __init__(self, kind: str, identifier: str, hint: str = ""):
        message = f"Not found: no {kind} with id {identifier!r}."
        if hint:
            message += f" {hint}"
        super().__init__(message)


class IndexMissingError(ToolError):
    """The corpus index has not been built."""

    def __init__(self, path: str):
        super().__init__(f"Corpus index not found at {path}: run `make index` first.")
