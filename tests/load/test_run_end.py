"""A call the end of a load run cuts short is counted against the tool only when it had already
waited its whole deadline: a call stopped 0.0 s after it was sent is the harness's doing."""

from __future__ import annotations

import pytest

from load.run import stop_timeout
from load.run_end import cut_short_is_a_failure

DEADLINE_S = 30.0


@pytest.mark.parametrize("waited_s", [0.0, 0.01, 1.0, DEADLINE_S - 0.001])
def test_a_call_stopped_before_its_deadline_is_left_out(waited_s: float) -> None:
    assert not cut_short_is_a_failure(waited_s, DEADLINE_S)


@pytest.mark.parametrize("waited_s", [DEADLINE_S, DEADLINE_S + 5.0])
def test_a_call_that_waited_its_whole_deadline_is_a_failure(waited_s: float) -> None:
    assert cut_short_is_a_failure(waited_s, DEADLINE_S)


def test_users_get_a_whole_deadline_to_finish_before_the_run_kills_them() -> None:
    # So a hung tool's call reaches its own deadline (counted) before any kill.
    assert stop_timeout(DEADLINE_S) > DEADLINE_S
