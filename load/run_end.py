"""What a call still in flight when a load run ends says about the server.

Locust's stop timeout is one call deadline (`load.run.stop_timeout`), so a call to a hung tool
reaches its own deadline and is counted as failed before the run kills its user. A user killed
with a call in flight earlier than that was stopped by the harness (a user still starting, or one
whose wait had just ended as the run stopped: such calls had waited 0.0 s): the server had no
chance to answer, so the call is left out rather than counted against the tool.
"""

from __future__ import annotations


def cut_short_is_a_failure(waited_s: float, deadline_s: float) -> bool:
    """Whether a call the run's end cut short counts as failed: only once it had waited its
    whole deadline (a tool that hung), never for a call the harness stopped early."""
    return waited_s >= deadline_s
