"""The load warm-up blames only the tool that did not answer: a fake MCP server (plain HTTP,
JSON replies, in this process) with one tool that answers, one that fails and one that
hangs; the warm-up names exactly the failing and the hanging one, each with its error, and
the run proceeds; when the server stops answering altogether after the hang, the tools not
reached are named as not warmed (not blamed) and the run is aborted before locust starts.
A call the warm-up's own deadline cuts is not blamed on its tool."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from load.client import warm_up
from load.profiles import LocustProfile
from load.run import run_profile

CALL_DEADLINE_S = 0.5
READ_ONLY = {"readOnlyHint": True}
# sorted as the warm-up walks them: the hanging tool first, so a stuck server leaves two
TOOLS = ("archive", "echo", "fail", "slow")


@dataclass
class Behaviour:
    """What the fake does: ``stuck_after_hang`` makes every request after the hanging call
    wait too (a server whose one event loop the hung tool blocks)."""

    stuck_after_hang: bool = False
    slow_s: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)
    hung: threading.Event = field(default_factory=threading.Event)
    calls: list[str] = field(default_factory=list)


def _handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: dict[str, Any] | None = None) -> None:
            data = json.dumps(payload).encode() if payload is not None else b""
            with contextlib.suppress(OSError):  # the client gave up on this call
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        def _wait(self) -> None:
            behaviour.release.wait(30)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if behaviour.stuck_after_hang and behaviour.hung.is_set():
                self._wait()
            if "id" not in body:
                self._send(202)
                return
            method = body.get("method")
            if method == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"},
                }
            elif method == "tools/list":
                result = {
                    "tools": [
                        {"name": t, "inputSchema": {"type": "object"}, "annotations": READ_ONLY}
                        for t in TOOLS
                    ]
                }
            else:
                tool = body["params"]["name"]
                behaviour.calls.append(tool)
                if tool == "archive":
                    behaviour.hung.set()
                    self._wait()
                if tool == "slow":
                    time.sleep(behaviour.slow_s)
                failed = tool == "fail"
                text = "boom: the fail tool always fails" if failed else "ok"
                result = {"content": [{"type": "text", "text": text}], "isError": failed}
            self._send(200, {"jsonrpc": "2.0", "id": body["id"], "result": result})

    return Handler


@contextlib.contextmanager
def serving(behaviour: Behaviour) -> Iterator[str]:
    """The fake on a loopback port, its /mcp URL; every waiting request released after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(behaviour))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        behaviour.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake() -> Iterator[tuple[str, Behaviour]]:
    behaviour = Behaviour()
    with serving(behaviour) as url:
        yield url, behaviour


@pytest.fixture
def examples(tmp_path: Path) -> str:
    path = tmp_path / "examples.json"
    path.write_text(json.dumps({tool: [{}] for tool in TOOLS}))
    return f"examples:{path}"


def test_only_the_failing_and_the_hanging_tool_are_named_each_with_its_error(
    fake: tuple[str, Behaviour], examples: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url, behaviour = fake
    report = warm_up(url, rounds=2, mix=examples, call_deadline_s=CALL_DEADLINE_S)
    assert report.hung == ["archive"] and not report.aborted and not report.cut_short
    assert set(report.blamed) == {"archive", "fail"}
    assert "no complete reply within the 0.5 s deadline" in report.blamed["archive"]
    assert "boom: the fail tool always fails" in report.blamed["fail"]
    assert report.not_warmed == []
    # the hung tool is called once; the others every round
    assert behaviour.calls.count("archive") == 1 and behaviour.calls.count("echo") == 2
    printed = capsys.readouterr().err.splitlines()
    assert printed == report.lines() and len(printed) == 2, printed
    assert any(line.startswith("warm-up: fail failed: isError: boom") for line in printed)
    assert any(line.startswith("warm-up: archive did not answer: ") for line in printed)
    assert not any("echo" in line or "slow" in line for line in printed), printed


def test_a_server_that_stops_answering_blames_the_hung_tool_and_aborts(
    fake: tuple[str, Behaviour], examples: str
) -> None:
    url, behaviour = fake
    behaviour.stuck_after_hang = True
    started = time.monotonic()
    report = warm_up(url, rounds=2, mix=examples, call_deadline_s=CALL_DEADLINE_S)
    took = time.monotonic() - started
    assert report.aborted and report.hung == ["archive"] and report.failures == {}
    assert set(report.blamed) == {"archive"}
    assert report.not_warmed == ["echo", "fail", "slow"]
    assert behaviour.calls == ["archive"]  # nothing else was called once it was stuck
    assert took < 4 * CALL_DEADLINE_S + 2, took  # the hung call and one probe
    (line,) = report.lines()
    assert line.startswith("warm-up: the server answered nothing after archive's call hung")
    assert "not warmed (not blamed): echo, fail, slow" in line


def test_a_call_the_warm_ups_own_deadline_cuts_is_not_blamed(
    fake: tuple[str, Behaviour], tmp_path: Path
) -> None:
    url, behaviour = fake
    behaviour.slow_s = 1.0
    path = tmp_path / "slow.json"
    path.write_text(json.dumps({"echo": [{}], "slow": [{}]}))
    report = warm_up(url, rounds=3, mix=f"examples:{path}", call_deadline_s=5.0, deadline_s=0.6)
    assert report.cut_short and report.cut_during == "slow"
    assert report.blamed == {} and report.hung == []
    assert report.not_warmed == ["slow"]
    (line,) = report.lines()
    assert "stopped at its 0.6 s deadline" in line and "during slow's call (not blamed" in line


def test_the_run_is_aborted_after_the_warm_up_with_the_hung_tool_named(
    fake: tuple[str, Behaviour], examples: str, tmp_path: Path
) -> None:
    url, behaviour = fake
    behaviour.stuck_after_hang = True
    run = run_profile(
        "latency",
        url,
        tmp_path,
        LocustProfile(users=1, time_s=60),
        quiet=True,
        mix=examples,
        call_deadline_s=CALL_DEADLINE_S,
    )
    assert run.exit_code == 2 and not run.cut_short
    assert run.summary["aborted"] == "the server answered nothing after archive's warm-up call hung"
    assert run.summary["warm_up"]["blamed"].keys() == {"archive"}
    assert run.summary["warm_up"]["not_warmed"] == ["echo", "fail", "slow"]
    assert not (tmp_path / "latency.json").exists()  # locust never started
