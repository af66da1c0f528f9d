"""The harness's MCP client sessions record every result as it came.

The MCP SDK re-validates a result's `structuredContent` against the tool's outputSchema on the
client and raises on a mismatch. The harness judges results (the `schema_valid` check, the
security and fuzz findings) rather than refusing them, and the load and CPU measurements must not
count a client-side check no server spends, so every session the harness opens turns it off here.
"""

from __future__ import annotations

from typing import Any


async def _accept_any_result(name: str, result: Any) -> None:
    """The SDK's client-side outputSchema validation, switched off."""


def record_results_as_they_come(client: Any) -> None:
    """Switch off the SDK's outputSchema re-check on an entered `fastmcp.Client`'s session."""
    client.session.validate_tool_result = _accept_any_result
