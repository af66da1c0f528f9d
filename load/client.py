"""The shared MCP client (ocm_common.mcp_http) as load uses it: loopback only, and a warm-up
that ends within its own deadline, whatever the server does."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from load.safety import require_loopback
from load.taskmix import TaskMix
from ocm_common import mcp_http
from ocm_common.mcp_http import CALL_DEADLINE_S, OutputSchemas, Reply

__all__ = ["WARM_UP_DEADLINE_S", "McpClient", "Reply", "WarmUp", "warm_up"]
WARM_UP_DEADLINE_S = 120.0


class McpClient(mcp_http.McpClient):
    """`ocm_common.mcp_http.McpClient` that refuses any server but one on this machine."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = CALL_DEADLINE_S):
        super().__init__(require_loopback(url), token, timeout_s)


@dataclass
class WarmUp:
    """What the warm-up did: calls made, the first failure per tool, the tools whose call
    hit its deadline (not called again), and whether the warm-up's own deadline cut it."""

    calls: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    hung: list[str] = field(default_factory=list)
    cut_short: bool = False
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"warm-up: {tool} failed: {error}" for tool, error in self.failures.items()]
        if self.hung:
            out.append(f"warm-up: no reply in time from {', '.join(self.hung)} (not called again)")
        if self.cut_short:
            out.append(f"warm-up: stopped at its deadline after {self.seconds:.0f} s")
        return out


def warm_up(
    url: str,
    rounds: int = 4,
    mix: str = "golden",
    allow_writes: bool = False,
    *,
    call_deadline_s: float = CALL_DEADLINE_S,
    deadline_s: float = WARM_UP_DEADLINE_S,
) -> WarmUp:
    """Every tool's calls of the task mix a few times, so first-call costs in each server
    process (lazy caches, first query plans) are not measured as load. Each call ends within
    `call_deadline_s` and the whole warm-up within `deadline_s`; a tool that hit its call
    deadline is not called again here (the run itself counts its calls as failures)."""
    started = time.monotonic()
    report = WarmUp()

    def remaining() -> float:
        return deadline_s - (time.monotonic() - started)

    # initialize and tools/list: the usual deadline (a slow start is not a hung tool)
    with McpClient(url, timeout_s=min(CALL_DEADLINE_S, deadline_s)) as client:
        listing = client.tools_list()
        schemas = OutputSchemas.from_tools_list(listing)
        tasks = TaskMix.from_source(mix, listing=listing, seed=0, allow_writes=allow_writes)
        for _ in range(rounds):
            for tool in tasks.tools:
                if tool in report.hung:
                    continue
                left = remaining()
                if left <= 0:
                    report.cut_short = True
                    break
                limit = min(call_deadline_s, left)
                arguments = tasks.pick(tool, vary=False).arguments
                reply = client.call(tool, arguments, schemas, deadline_s=limit)
                report.calls += 1
                if reply.timed_out:
                    report.hung.append(tool)
                elif reply.error and not (
                    tasks.tool_errors_ok and reply.error.startswith("isError")
                ):
                    report.failures.setdefault(tool, reply.error)
            if report.cut_short:
                break
    report.seconds = time.monotonic() - started
    for line in report.lines():
        print(line, file=sys.stderr)
    return report
