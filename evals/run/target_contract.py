"""What every backend answers (:class:`Target`: ``tools/list`` and ``tools/call``) and the
errors a target raises. Kept apart from the kinds a spec string names (targets.py) and from the
fastmcp client that implements them (mcp_target.py), so the stdio transport and the checks can
name these without importing either.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

from evals.run.outcome import CallOutcome, ToolInfo
from ocm_common.json_types import Arguments

# A JSON-RPC error code of the implementation-defined band the SDK does not use: the stdio
# transport makes it up (HARNESS_MARK in its data) for a request whose reply it could not read.
UNREADABLE_REPLY = -32019
HARNESS_MARK = "ocm-harness:unreadable-reply"


class TargetError(RuntimeError):
    """The backend could not be reached or answered with a protocol error (not a tool error)."""


class UnreadableReply(TargetError):
    """The server's reply to a call was not UTF-8 JSON-RPC (invalid bytes, a lone surrogate,
    not JSON), or it wrote such a line and the call then got no reply in time."""


class Target(Protocol):
    """The one contract every backend answers."""

    spec: str

    async def __aenter__(self) -> Target: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def list_tools(self) -> list[ToolInfo]: ...

    async def call_tool(
        self, name: str, args: Arguments, *, timeout_s: float | None = None
    ) -> CallOutcome: ...

    def for_mode(self, mode: str) -> Target | None:
        """The same backend forced into search ``mode``, or None when it cannot be configured
        (the runner then overrides a ``search_mode`` argument where the tool accepts one)."""
        ...
