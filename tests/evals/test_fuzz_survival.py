"""A fuzz run survives the server and is bounded: a stdio server that dies on one input is
restarted and the input recorded once (shrunk against a fresh process per attempt), the other
tools still checked; a hang on a schema-valid input fails the run; a reply that is not UTF-8
JSON-RPC is a finding and the session goes on; a launch that fails is explained; the run ends
at its deadline (or on SIGTERM) with its log and record written.

The fixture servers are tests/fixtures/servers/fuzz_*.py. Every run here uses a few cases per
tool; the timings asserted leave room for a loaded machine (a FastMCP server takes 1 to 6 s to
start there)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from security_servers import stdio

from evals.run.fuzz import FuzzConfig, FuzzReport, run_fuzz
from evals.run.fuzz_cli import main
from evals.run.fuzz_session import REPLAY
from evals.run.fuzz_survival import smaller_args
from evals.run.stdio_process import read_line, request_id
from evals.run.targets import TargetError, make_target
from ocm_common.run_record import read_record


def _fuzz(name: str, *args: str, **config: Any) -> FuzzReport:
    settings: dict[str, Any] = {
        "valid": 3,
        "invalid": 0,
        "seed": 4,
        "house_rules": False,
        "call_timeout_s": 10.0,
        "deadline_s": 120.0,
        "shrink_attempts": 3,
        **config,
    }
    cfg = FuzzConfig(**settings)
    return run_fuzz(make_target(stdio(name, *args), timeout_s=cfg.call_timeout_s), cfg)


def _by(report: FuzzReport, tool: str, check: str) -> list[Any]:
    return [f for f in report.failures if f.tool == tool and f.check == check]


def _no_echoes(report: FuzzReport) -> None:
    """No finding is the dead process's echo on a later case."""
    for f in report.failures:
        assert "Connection closed" not in f.message, f.describe()
        assert "connection failed" not in f.message, f.describe()


# ----------------------------------------------------------------------------- survive the server


def test_a_server_that_dies_on_one_enum_value_is_restarted_and_every_tool_checked() -> None:
    report = _fuzz("fuzz_dies_on_enum")
    died = _by(report, "convert", "answers")
    assert len(died) == 1, [f.describe() for f in report.failures]
    finding = died[0]
    assert finding.grade == "spec-must" and finding.kind == "valid"
    # the shrunk input: the enum value that kills it, the number shrunk to 0 in a fresh process
    assert json.loads(finding.args) == {"value": 0, "unit": "inch"}, finding.describe()
    assert "the server process exited with status 7" in finding.message
    assert "no conversion table for unit 'inch'" in finding.message  # its last stderr line
    assert "happened again alone in a fresh process" in finding.message
    # the planted problems of the tools fuzzed after the restarts are found
    assert _by(report, "word_count", "output_schema"), [f.describe() for f in report.failures]
    assert _by(report, "lookup_code", "no_crash")
    _no_echoes(report)
    stats = {t.tool: t for t in report.tools}
    assert stats["convert"].restarts >= 1 and report.restarts == stats["convert"].restarts
    assert stats["convert"].shrink_calls >= 1
    assert stats["word_count"].calls.get("answered", 0) >= 1
    assert report.cut_short is None and report.exit_code == 1


def test_the_restart_cap_of_a_tool_drops_its_remaining_cases_only() -> None:
    report = _fuzz(
        "fuzz_dies_on_enum",
        restarts_per_tool=0,
        shrink_attempts=0,
        tools=["convert", "word_count"],
    )
    stats = {t.tool: t for t in report.tools}
    assert "restart cap" in stats["convert"].stopped
    assert stats["convert"].not_run, stats["convert"]
    assert any("restart cap" in note and note.startswith("convert") for note in report.notes)
    assert len(_by(report, "convert", "answers")) == 1
    assert stats["word_count"].tried >= 1 and _by(report, "word_count", "output_schema")
    assert report.cut_short is None


def test_the_run_restart_cap_cuts_the_run_short_naming_what_was_not_reached() -> None:
    report = _fuzz(
        "fuzz_dies_on_enum",
        restarts_per_run=0,
        shrink_attempts=0,
        tools=["convert", "word_count"],
    )
    assert report.cut_short is not None and "restart cap" in report.cut_short.reason
    assert report.cut_short.not_reached == ["word_count"]
    assert report.cut_short.unfinished.get("convert")
    assert len(_by(report, "convert", "answers")) == 1
    assert report.status == "cut_short" and report.exit_code == 1  # a failing finding stands


def test_a_hang_on_the_schema_minimum_is_a_failing_finding() -> None:
    report = _fuzz("fuzz_hangs_on_minimum", call_timeout_s=2.0, tools=["page"])
    hung = _by(report, "page", "answers_in_time")
    assert len(hung) == 1, [f.describe() for f in report.failures]
    assert hung[0].grade == "spec-must" and hung[0].kind == "valid"
    assert json.loads(hung[0].args) == {"number": 1}
    assert "no response within 2 s to an input the schema allows" in hung[0].message
    assert not report.ok and report.restarts == 0  # the server kept answering tools/list
    assert {t.tool: t for t in report.tools}["page"].hangs >= 1


def test_an_unreadable_reply_is_a_finding_and_the_session_goes_on(tmp_path: Path) -> None:
    examples = tmp_path / "examples.json"
    examples.write_text(
        json.dumps(
            {
                "greet": [{"name": "Ada", "style": "plain"}, {"name": "Ada", "style": "raw"}],
                "quote": [{"n": 3}, {"n": 7}],
                "noise": [{"text": "noise"}],
            }
        )
    )
    started = time.monotonic()
    code = main(
        [
            "--target",
            stdio("fuzz_unreadable"),
            *("--valid", "3", "--invalid", "0", "--seed", "2", "--database", ""),
            *("--examples", str(examples), "--call-timeout", "20", "--out", str(tmp_path)),
        ]
    )
    assert time.monotonic() - started < 60  # no call waited out its 20 s limit
    log = json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))
    unreadable = {f["tool"]: f for f in log["failures"] if f["check"] == "readable_reply"}
    assert code == 1 and set(unreadable) == {"greet", "quote", "noise"}, log["failures"]
    assert "invalid UTF-8" in unreadable["greet"]["message"]
    assert "lone surrogate" in unreadable["quote"]["message"]
    assert "wrote a line that is not valid UTF-8 JSON-RPC" in unreadable["noise"]["message"]
    assert all(f["grade"] == "spec-must" for f in unreadable.values())
    # the answered call before the unreadable reply is answered again after it (the replay)
    for tool in ({t["tool"]: t for t in log["tools"]}[name] for name in ("greet", "quote")):
        assert tool["calls"].get("answered", 0) >= 2 and tool["families"][REPLAY] == 1, tool
        assert tool["slowest_ms"] < 10_000  # ended at once, not at the 20 s limit
    assert read_record(tmp_path / "fuzz.record.json").header.status == "failed"


def test_a_stdio_line_is_read_as_utf8_json_rpc_or_said_why_not() -> None:
    message, why = read_line(b'{"jsonrpc": "2.0", "id": 3, "result": {}}')
    assert message is not None and why is None
    assert read_line(b'{"jsonrpc": "2.0", "id": 3, "result": {"t": "\xff"}}')[1] == (
        "invalid UTF-8 (byte 0xff at offset 45)"
    )
    lone = b'{"jsonrpc": "2.0", "id": 4, "result": {"t": "\\ud800"}}'
    assert read_line(lone)[1] == "a lone surrogate (\\ud800) in a JSON string"
    paired = b'{"jsonrpc": "2.0", "id": 4, "result": {"t": "\\ud83d\\ude00"}}'
    assert read_line(paired)[1] is None
    assert (read_line(b"hello")[1] or "").startswith("not JSON-RPC")
    assert request_id(lone) == 4 and request_id(b"\xff garbage") is None


def test_smaller_inputs_drop_optional_keys_then_shrink_values() -> None:
    found = list(smaller_args({"value": 17, "unit": "inch", "tags": ["a", "b"]}, {"unit"}))
    assert found[0] == {"unit": "inch", "tags": ["a", "b"]}  # an optional key dropped first
    assert {"value": 0, "unit": "inch", "tags": ["a", "b"]} in found
    assert {"value": 17, "unit": "", "tags": ["a", "b"]} in found
    assert {"value": 17, "unit": "inch", "tags": []} in found
    assert len({json.dumps(f, sort_keys=True) for f in found}) == len(found)  # no repeats
    assert list(smaller_args({"n": 0, "s": ""}, {"n", "s"})) == []  # nothing smaller


# ----------------------------------------------------------------------------- launch failures


async def test_a_launch_failure_names_the_command_its_exit_status_and_stderr() -> None:
    spec = stdio("fuzz_fails_at_launch")
    with pytest.raises(TargetError) as failed:
        async with make_target(spec, timeout_s=10):
            pass
    text = str(failed.value)
    assert "fuzz_fails_at_launch.py" in text and "exit status 4" in text
    assert "fatal: config file /etc/fuzz-fixture/server.toml not found" in text
    assert "fuzz-fixture: reading config" in text  # the lines before it too
    with pytest.raises(TargetError) as during:
        async with make_target(stdio("fuzz_fails_at_launch", "--during-initialize"), timeout_s=10):
            pass
    assert "exit status 5" in str(during.value) and "GEO_DATA_DIR" in str(during.value)


async def test_a_command_that_does_not_exist_is_named() -> None:
    with pytest.raises(TargetError, match=r"cannot start the server: command '/nonexistent/mcp"):
        async with make_target("stdio:/nonexistent/mcp-server --flag", timeout_s=5):
            pass


def test_fuzz_explains_a_launch_failure_and_still_writes_its_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--target", stdio("fuzz_fails_at_launch"), "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "harness error:" in err and "exit status 4" in err and "server.toml not found" in err
    log = json.loads((tmp_path / "fuzz.json").read_text())
    assert log["status"] == "error" and "exit status 4" in log["error"]
    assert read_record(tmp_path / "fuzz.record.json").header.status == "error"


# ----------------------------------------------------------------------------- bounded runs


def test_the_run_ends_at_its_deadline_with_its_record(tmp_path: Path) -> None:
    """A call hangs (60 s limit) past the 15 s deadline: it gets the grace, the run stops,
    and the log says what was not reached."""
    started = time.monotonic()
    code = main(
        [
            "--target",
            stdio("fuzz_hangs_on_minimum"),
            *("--valid", "3", "--invalid", "0", "--seed", "1", "--database", ""),
            *("--deadline", "15", "--call-timeout", "60", "--out", str(tmp_path)),
        ]
    )
    elapsed = time.monotonic() - started
    assert elapsed < 15 + 5 + 15, elapsed  # deadline + grace + closing the session
    log = json.loads((tmp_path / "fuzz.json").read_text())
    assert code == 2 and log["status"] == "cut_short", log["cut_short"]
    cut = log["cut_short"]
    assert "deadline" in cut["reason"] and "echo" in cut["not_reached"]
    # the call the deadline cut is not reported as a hang
    assert not [f for f in log["failures"] if f["check"] == "answers_in_time"]
    record = read_record(tmp_path / "fuzz.record.json")
    assert record.header.status == "cut_short" and record.header.exit_code == 2


def test_the_well_behaved_server_has_no_failing_findings() -> None:
    report = _fuzz("well_behaved", invalid=9, canary="ocm-canary-test")
    assert report.tools and report.ok, [f.describe() for f in report.failing]
    assert report.restarts == 0 and report.cut_short is None


@pytest.mark.slow
def test_sigterm_writes_the_record_as_interrupted(tmp_path: Path) -> None:
    """The command as a process, stopped by SIGTERM while a call hangs."""
    command = [
        sys.executable,
        "-m",
        "ocm_cli",
        "fuzz",
        *("--target", stdio("fuzz_hangs_on_minimum"), "--tool", "page"),
        *("--valid", "3", "--invalid", "0", "--database", "", "--call-timeout", "120"),
        *("--out", str(tmp_path)),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # "fuzzing ...": the run has started
        assert line.startswith("fuzzing"), line
        time.sleep(8)  # connected, page 1 hanging
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    log = json.loads((tmp_path / "fuzz.json").read_text())
    assert log["status"] == "interrupted" and "SIGTERM" in log["cut_short"]["reason"]
    assert read_record(tmp_path / "fuzz.record.json").header.status == "interrupted"
