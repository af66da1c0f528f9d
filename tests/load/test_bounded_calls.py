"""Every load path ends within its bound, whatever the server does: a reply kept open by
event-stream keep-alive comments fails at the call's deadline (httpx's read timeout alone
restarts with every comment and never fires), and a load run against a tool that never answers
for large inputs ends within its bound with those calls counted as failed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from load.client import warm_up
from load.profiles import LocustProfile
from load.run import run_profile, wall_clock_bound
from load.taskmix import TaskMix
from ocm_common.launcher import free_port, mcp_ready, running
from ocm_common.mcp_http import McpClient
from ocm_common.mcp_http_async import AsyncMcpClient

SERVERS = Path(__file__).parents[1] / "fixtures" / "servers"
HANGS_ON_LARGE = SERVERS / "hangs_on_large.py"
LARGEST_ANSWERED = 1000  # the fixture's square answers for |n| up to this, else never
PING_EVERY_S = 0.1
PINGS_FOR_S = 30  # how long the fixture keeps a reply open with comments
DEADLINE_S = 1.0
# Well above the deadline, to allow a loaded machine's scheduling; far below PINGS_FOR_S, so a
# client whose deadline restarts with every comment still fails.
OVERRUN_ALLOWED_S = 8.0


class _PingingHandler(BaseHTTPRequestHandler):
    """Answers initialize with JSON; a tools/call with an event stream that only ever sends
    keep-alive comments (what sse-starlette sends while a tool runs)."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("method") == "tools/call":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            with contextlib.suppress(OSError):
                for _ in range(int(PINGS_FOR_S / PING_EVERY_S)):
                    self.wfile.write(b": ping\r\n\r\n")
                    self.wfile.flush()
                    time.sleep(PING_EVERY_S)
            return
        if "id" not in body:  # a notification
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        payload = json.dumps(
            {"jsonrpc": "2.0", "id": body["id"], "result": {"protocolVersion": "2025-06-18"}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture(scope="module")
def pinging_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _PingingHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


def test_keep_alive_comments_do_not_extend_a_sync_call_past_its_deadline(pinging_url: str) -> None:
    with McpClient(pinging_url, timeout_s=DEADLINE_S) as client:
        started = time.monotonic()
        reply = client.call("anything", {})
        took = time.monotonic() - started
    assert reply.timed_out and reply.structured is None
    assert DEADLINE_S <= took < DEADLINE_S + OVERRUN_ALLOWED_S, took


def test_keep_alive_comments_do_not_extend_an_async_call_past_its_deadline(
    pinging_url: str,
) -> None:
    async def call() -> tuple[bool, float]:
        async with httpx.AsyncClient() as http:
            client = await AsyncMcpClient(pinging_url, http, timeout_s=DEADLINE_S).initialize()
            started = time.monotonic()
            reply = await client.call("anything", {})
            return reply.timed_out, time.monotonic() - started

    timed_out, took = asyncio.run(call())
    assert timed_out and DEADLINE_S <= took < DEADLINE_S + OVERRUN_ALLOWED_S, took


@contextlib.contextmanager
def _hangs_on_large() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with running(
        [sys.executable, str(HANGS_ON_LARGE), "--http", str(port)],
        ready=mcp_ready(url),
        what="hangs_on_large fixture",
        timeout_s=60,
    ):
        yield url


def _listing(url: str) -> dict[str, object]:
    with McpClient(url, timeout_s=10) as client:
        return client.tools_list()


@pytest.mark.slow
def test_a_warm_up_stops_calling_a_tool_that_hung_and_ends_within_its_deadline(
    tmp_path: Path,
) -> None:
    examples = tmp_path / "examples.json"
    examples.write_text(json.dumps({"square": [{"n": 5000}], "echo": [{"text": "hello"}]}))
    with _hangs_on_large() as url:
        started = time.monotonic()
        report = warm_up(url, rounds=3, mix=f"examples:{examples}", call_deadline_s=1.0)
        took = time.monotonic() - started
    # square(5000) never answers: called once, for 1 s, then not again; echo answers thrice
    assert report.hung == ["square"] and report.calls == 1 + 3, report
    assert not report.failures and not report.cut_short, report
    assert took < 1.0 + 5.0, took


@pytest.mark.slow
def test_load_against_a_tool_that_hangs_on_large_inputs_ends_within_its_bound(
    tmp_path: Path,
) -> None:
    deadline, warm_up_deadline, profile = 1.5, 8.0, LocustProfile(users=2, time_s=6, warmup_s=0)
    with _hangs_on_large() as url:
        mix = TaskMix.from_schemas(_listing(url), seed=0)
        large = [c for c in mix.calls["square"] if abs(c.arguments["n"]) > LARGEST_ANSWERED]
        assert large, "the generated mix must hold a call the fixture never answers"
        started = time.monotonic()
        run = run_profile(
            "latency",
            url,
            tmp_path,
            profile,
            quiet=True,
            mix="schema",
            call_deadline_s=deadline,
            warm_up_deadline_s=warm_up_deadline,
        )
        took = time.monotonic() - started
    assert took < warm_up_deadline + profile.time_s + wall_clock_bound(deadline), took
    tools = run.summary["tools"]
    assert tools["square"]["errors"] > 0, run.summary
    # echo always answers (how many calls it got depends on the draws and the machine)
    assert tools.get("echo", {}).get("errors", 0) == 0, run.summary
    assert any("no complete reply within 1.5 s" in f["error"] for f in run.summary["failures"])
    assert run.exit_code != 0
