"""The shared pieces: durations, the percentile definition, golden calls, the MCP session."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from evals.run.scenario import load_scenarios
from ocm_common.durations import duration_arg, locust_time, parse_duration
from ocm_common.golden import GOLDEN_DIR, golden_calls
from ocm_common.mcp_http import McpSession
from ocm_common.mcp_messages import PROTOCOL_VERSION, initialize_body
from ocm_common.percentiles import DEFINITION, pct, percentile


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("20s", 20), ("1m30s", 90), ("2h", 7200), ("90", 90), ("1.5", 1.5), (" 5m ", 300), (7, 7)],
)
def test_durations_as_locust_users_write_them(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "20x", "s", "1m1m", "-5", "5 minutes", "m30s1"])
def test_a_bad_duration_is_refused_with_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"20s, 1m30s"):
        parse_duration(text)
    with pytest.raises(argparse.ArgumentTypeError):
        duration_arg(text)


def test_locust_gets_whole_seconds() -> None:
    assert locust_time(90.4) == "90s" and locust_time(0.2) == "1s"


def test_the_percentile_is_linear_interpolation_by_hand() -> None:
    # 10 values 1..10: rank 0.95 * 9 = 8.55 -> 9 + 0.55 * (10 - 9) = 9.55; median 5.5.
    values = list(range(1, 11))
    assert pct(values, 95) == pytest.approx(9.55)
    assert pct(values, 50) == pytest.approx(5.5)
    assert np.isnan(pct([], 95))
    assert percentile(np.array([[1.0, 2.0], [3.0, 5.0]]), 50, axis=1).tolist() == [1.5, 4.0]
    assert "linear" in DEFINITION


def test_golden_calls_are_the_scenarios_that_expect_an_answer() -> None:
    """Each scenario that expects an answer, as written; one whose id comes from the backend
    (ids_from) cannot be called as written, so its lookup calls stand in its place."""
    expected: list[tuple[str, str, dict[str, object]]] = []
    for s in load_scenarios(GOLDEN_DIR):
        if s.lookups:
            expected += [(f"{s.id}#lookup{n}", x.tool, x.args) for n, x in enumerate(s.lookups)]
        elif not s.expects_error:
            expected.append((s.id, s.tool, s.args))
    assert [(c.scenario, c.tool, c.arguments) for c in golden_calls()] == expected
    assert any(s.endswith("#lookup0") for s, _, _ in expected)


def test_the_offered_version_is_the_sdks_newest_with_the_initialize_handshake() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert HANDSHAKE_PROTOCOL_VERSIONS[-1] == PROTOCOL_VERSION


def test_the_session_keeps_the_version_and_session_the_server_answered() -> None:
    session = McpSession(token="t")
    assert session.headers()["MCP-Protocol-Version"] == PROTOCOL_VERSION
    body = initialize_body()
    assert body["params"]["protocolVersion"] == PROTOCOL_VERSION
    reply = {"jsonrpc": "2.0", "id": body["id"], "result": {"protocolVersion": "2025-03-26"}}
    text = "event: message\ndata: " + json.dumps(reply) + "\n\n"
    session.read(body, 200, "text/event-stream", text, "abc")
    headers = session.headers()
    assert headers["MCP-Protocol-Version"] == "2025-03-26"
    assert headers["Mcp-Session-Id"] == "abc" and headers["Authorization"] == "Bearer t"


@pytest.mark.parametrize("time", ["20s", "1m30s", "45"])
def test_make_load_takes_time_as_locust_users_write_it(time: str) -> None:
    from ocm_cli.program import main

    # Parsed (argparse would raise SystemExit), then refused for its non-loopback URL.
    assert main(["load", "run", "--time", time, "--url", "http://10.0.0.1:8000/mcp"]) == 2
    with pytest.raises(SystemExit):
        main(["load", "run", "--time", "soon", "--url", "http://10.0.0.1:8000/mcp"])
