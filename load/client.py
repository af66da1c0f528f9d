"""The shared MCP client (ocm_common.mcp_http) as load uses it: loopback only, and a warm-up."""

from __future__ import annotations

from load.safety import require_loopback
from load.taskmix import TaskMix
from ocm_common import mcp_http
from ocm_common.mcp_http import Reply

__all__ = ["McpClient", "Reply", "warm_up"]


class McpClient(mcp_http.McpClient):
    """`ocm_common.mcp_http.McpClient` that refuses any server but one on this machine."""

    def __init__(self, url: str, token: str | None = None):
        super().__init__(require_loopback(url), token)


def warm_up(url: str, rounds: int = 4, mix: str = "golden", allow_writes: bool = False) -> None:
    """Every tool's calls of the task mix a few times, so first-call costs in each server
    process (lazy caches, first query plans) are not measured as load."""
    with McpClient(url) as client:
        listing = client.tools_list() if mix == "schema" else None
        tasks = TaskMix.from_source(mix, listing=listing, seed=0, allow_writes=allow_writes)
        for _ in range(rounds):
            for tool in tasks.tools:
                client.call(tool, tasks.pick(tool, vary=False).arguments)
