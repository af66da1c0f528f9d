"""The shared MCP client (ocm_common.mcp_http) as load uses it: loopback only, and a warm-up
that ends within its own deadline, whatever the server does, and blames only the tools whose
own call failed or went unanswered.

What the warm-up says, one line per finding, each naming the tool and its error:

- ``warm-up: <tool> failed: <error>``: the call was answered with an error; the run proceeds
  (its calls count against that tool);
- ``warm-up: <tool> did not answer: <error> (not called again)``: the call hit its own call
  deadline; the run proceeds (its calls count against that tool, each after its deadline);
- ``warm-up: the server answered nothing after <tool>'s call hung ...``: after a call went
  unanswered, ``tools/list`` went unanswered too, so the server itself stopped answering: the
  warm-up stops and the run is aborted (exit 2); the tools not called are named as not warmed,
  not blamed;
- ``warm-up: stopped at its <n> s deadline ...``: the warm-up's own deadline (or the run's
  overall one) ended it; a call it cut is not blamed on its tool, and the tools not warmed
  are named. The run proceeds.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import httpx

from load.safety import require_loopback
from load.taskmix import TaskMix
from ocm_common import mcp_http
from ocm_common.mcp_http import (
    CALL_DEADLINE_S,
    CallDeadlineError,
    McpCallError,
    OutputSchemas,
    Reply,
)
from ocm_common.mcp_messages import rpc

__all__ = ["WARM_UP_DEADLINE_S", "McpClient", "Reply", "WarmUp", "warm_up"]
WARM_UP_DEADLINE_S = 120.0


class McpClient(mcp_http.McpClient):
    """`ocm_common.mcp_http.McpClient` that refuses any server but one on this machine."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = CALL_DEADLINE_S):
        super().__init__(require_loopback(url), token, timeout_s)

    def __enter__(self) -> McpClient:
        return self

    def unanswered(self, deadline_s: float) -> str | None:
        """Why the server does not answer ``tools/list`` within ``deadline_s`` (None when it
        does): whether the server, not one tool, has stopped answering."""
        body = rpc("tools/list")
        try:
            response = self._post(body, max(deadline_s, 0.001))
            self.session.read(
                body,
                response.status_code,
                response.headers.get("content-type", ""),
                response.text,
            )
        except CallDeadlineError as exc:
            return f"tools/list: {exc}"
        except (httpx.HTTPError, McpCallError) as exc:
            return f"tools/list: {type(exc).__name__}: {exc}"
        return None


@dataclass
class WarmUp:
    """What the warm-up did: calls made; the tools blamed, each with its first error (answered
    with an error: ``failures``; no complete reply within the call deadline: ``hung``, in
    order, and ``hung_errors``); whether the server stopped answering altogether after a hung
    call (``server_unanswered``, the probe's error: the run is then aborted); whether a
    deadline ended it (``cut_short``: the warm-up's own or the run's overall deadline, a call it
    cut not blamed); and the tools never called (``not_warmed``, not blamed)."""

    calls: int = 0
    failures: dict[str, str] = field(default_factory=dict)
    hung: list[str] = field(default_factory=list)
    hung_errors: dict[str, str] = field(default_factory=dict)
    server_unanswered: str | None = None
    cut_short: bool = False
    cut_during: str | None = None  # the tool whose call the deadline cut, if any
    not_warmed: list[str] = field(default_factory=list)
    deadline_s: float = WARM_UP_DEADLINE_S
    seconds: float = 0.0

    @property
    def blamed(self) -> dict[str, str]:
        """Exactly the tools whose own warm-up call failed or went unanswered, with the error."""
        return {**self.failures, **{t: self.hung_errors.get(t, "no reply") for t in self.hung}}

    @property
    def aborted(self) -> bool:
        """The server stopped answering (not one tool): the run is not started."""
        return self.server_unanswered is not None

    def lines(self) -> list[str]:
        out = [f"warm-up: {tool} failed: {error}" for tool, error in self.failures.items()]
        for tool in self.hung:
            if self.aborted and tool == self.hung[-1]:
                continue  # said below, with what the server did after it
            out.append(
                f"warm-up: {tool} did not answer: {self.hung_errors.get(tool, 'no reply')} "
                "(not called again)"
            )
        untouched = (
            f"; not warmed (not blamed): {', '.join(self.not_warmed)}" if self.not_warmed else ""
        )
        if self.aborted:
            tool = self.hung[-1]
            out.append(
                f"warm-up: the server answered nothing after {tool}'s call hung "
                f"({self.hung_errors.get(tool, 'no reply')}), not even {self.server_unanswered}"
                f"; stopped, the run is not started{untouched}"
            )
        elif self.cut_short:
            during = (
                f" during {self.cut_during}'s call (not blamed: the warm-up's deadline, not "
                "the call's, ended it)"
                if self.cut_during
                else ""
            )
            out.append(
                f"warm-up: stopped at its {self.deadline_s:g} s deadline after "
                f"{self.seconds:.1f} s{during}{untouched}"
            )
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
    `call_deadline_s` and the whole warm-up within `deadline_s`. Only a tool whose own call
    failed or hit its call deadline is blamed (a hung one is not called again here; the run
    itself counts its calls as failures); after a call hangs the server is asked for
    `tools/list`, and when that goes unanswered too the warm-up stops (`WarmUp.aborted`)
    without blaming the tools it did not reach."""
    started = time.monotonic()
    report = WarmUp(deadline_s=deadline_s)

    def remaining() -> float:
        return deadline_s - (time.monotonic() - started)

    # initialize and tools/list: the usual deadline (a slow start is not a hung tool)
    with McpClient(url, timeout_s=min(CALL_DEADLINE_S, deadline_s)) as client:
        listing = client.tools_list()
        schemas = OutputSchemas.from_tools_list(listing)
        tasks = TaskMix.from_source(mix, listing=listing, seed=0, allow_writes=allow_writes)
        called: set[str] = set()
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
                if reply.timed_out and limit < call_deadline_s:
                    report.cut_short, report.cut_during = True, tool  # ours, not the tool's
                    break
                called.add(tool)
                if reply.timed_out:
                    report.hung.append(tool)
                    report.hung_errors[tool] = reply.error or "no reply"
                    probe = min(call_deadline_s, remaining())
                    why = client.unanswered(probe) if probe > 0 else "no time left"
                    if why is not None and probe < call_deadline_s:
                        report.cut_short = True  # our deadline, not the server, ended the probe
                        break
                    report.server_unanswered = why
                    if report.aborted:
                        break
                elif reply.error and not (
                    tasks.tool_errors_ok and reply.error.startswith("isError")
                ):
                    report.failures.setdefault(tool, reply.error)
            if report.cut_short or report.aborted:
                break
        report.not_warmed = [t for t in tasks.tools if t not in called]
    report.seconds = time.monotonic() - started
    for line in report.lines():
        print(line, file=sys.stderr)
    return report
