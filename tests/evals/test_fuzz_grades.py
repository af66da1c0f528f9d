"""The fuzz run's findings are graded by their source (spec MUST/SHOULD, security, house rule,
warning); crashes are told from tool errors; generation follows the published schema; the run
skips tools that may change state and plants a canary secret."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import pytest
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from mcp.types import ToolAnnotations
from pydantic import Field
from security_servers import stdio

from evals.run.fuzz import PROFILES, FuzzConfig, FuzzReport, run_fuzz
from evals.run.fuzz_checks import RULES, classify
from evals.run.fuzz_cli import main
from evals.run.outcome import CallOutcome
from evals.run.targets import make_target, server_target
from tests.run_records import assert_record

SMALL = FuzzConfig(valid=10, invalid=30, seed=3, house_rules=False, allow_writes=True)


def _fuzz(server: FastMCP, config: FuzzConfig = SMALL) -> FuzzReport:
    return run_fuzz(server_target(server, "graded"), config)


def _checks(report: FuzzReport) -> set[str]:
    return {f.check for f in report.failures}


def test_every_rule_states_its_grade_and_source() -> None:
    for rule in RULES.values():
        assert rule.grade in ("spec-must", "spec-should", "security", "house", "warning")
        assert rule.enforces and rule.reference, rule.name
        if rule.grade.startswith("spec"):
            assert rule.reference.startswith(
                ("https://modelcontextprotocol.io", "https://www.jsonrpc.org")
            )


def test_a_crash_is_told_from_a_tool_error() -> None:
    deliberate = CallOutcome(None, True, "not found: note 'x'")
    masked = CallOutcome(None, True, "Error calling tool 'lookup'")
    exception = CallOutcome(None, True, "ZeroDivisionError: division by zero")
    assert classify(deliberate, None).kind == "tool-error"
    assert classify(masked, None).kind == "crash"
    assert classify(exception, None).kind == "crash"
    assert classify(CallOutcome({"a": 1}, False, "{}"), None).kind == "answered"

    class ClientError(Exception):  # the SDK client's error for a connection that closed
        def __init__(self, code: int) -> None:
            super().__init__("Connection closed")
            self.error = type("ErrorData", (), {"code": code})()

    assert classify(None, ClientError(-32000)).kind == "no-answer"
    assert classify(None, ClientError(-32603)).kind == "crash"
    assert classify(None, ClientError(-32602)).kind == "protocol-error"


def test_house_rules_are_opt_in_for_other_backends() -> None:
    server = FastMCP("sdk-style")

    @server.tool
    def shout(text: Annotated[str, Field(min_length=1, max_length=40)]) -> str:
        return text.upper()  # the SDKs wrap it as {"result": ...}; the text is the plain value

    report = _fuzz(server)
    assert report.ok, [f.describe() for f in report.failures]
    with_house = _fuzz(
        server, FuzzConfig(valid=10, invalid=30, seed=3, house_rules=True, allow_writes=True)
    )
    assert "text_mirrors_structured" in _checks(with_house)
    assert all(f.grade == "house" for f in with_house.failures), with_house.failures


class OpenLookup(Tool):
    """Publishes a schema that allows extra arguments, and ignores them."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        if not isinstance(arguments.get("q"), str) or len(arguments["q"]) > 20:
            raise ToolError("Invalid argument 'q': text of at most 20 characters")
        return ToolResult(
            content=json.dumps({"q": arguments["q"]}), structured_content={"q": arguments["q"]}
        )


def test_extra_arguments_are_not_refused_when_the_schema_allows_them() -> None:
    server = FastMCP("open")
    server.add_tool(
        OpenLookup(
            name="lookup",
            annotations=ToolAnnotations(readOnlyHint=True),
            parameters={
                "type": "object",
                "properties": {"q": {"type": "string", "maxLength": 20}},
                "required": ["q"],
            },
        )
    )
    report = _fuzz(server, FuzzConfig(valid=10, invalid=30, seed=3, house_rules=False))
    assert "extra_field" not in report.tools[0].families
    assert report.ok, [f.describe() for f in report.failures]


def test_an_unhandled_exception_is_a_crash_graded_by_the_spec() -> None:
    server = FastMCP("crashy", mask_error_details=True)

    @server.tool
    def lookup(n: Annotated[int, Field(ge=0, le=100)]) -> int:
        if n > 50:
            raise RuntimeError("boom")
        if n == 7:
            raise ToolError("not found: 7")  # a deliberate tool error is no crash
        return n

    # random generation only (the boundary cases would find n=100 first): a crash is shrunk
    report = _fuzz(
        server,
        FuzzConfig(valid=60, invalid=0, seed=5, house_rules=False, allow_writes=True, edges=False),
    )
    crash = [f for f in report.failures if f.check == "no_crash"]
    assert crash and crash[0].grade == "spec-should" and crash[0].call == "crash", report.failures
    assert json.loads(crash[0].args) == {"n": 51}
    assert report.tools[0].calls.get("crash", 0) >= 1
    assert not report.ok


def test_formats_and_one_of_are_generated_as_published() -> None:
    seen: list[dict[str, Any]] = []
    server = FastMCP("formats")

    @server.tool
    def schedule(
        when: Annotated[str, Field(json_schema_extra={"format": "date"})],
        target: int | str,
    ) -> ToolResult:
        seen.append({"when": when, "target": target})
        return ToolResult(content="ok")

    report = _fuzz(
        server, FuzzConfig(valid=25, invalid=0, seed=11, house_rules=False, allow_writes=True)
    )
    assert report.ok, [f.describe() for f in report.failures]
    import datetime

    generated = [s for s in seen if s["when"]]
    assert generated and all(datetime.date.fromisoformat(s["when"]) for s in generated)
    assert {type(s["target"]) for s in seen} == {int, str}


def test_known_good_inputs_are_called_first() -> None:
    calls: list[str] = []
    server = FastMCP("known")

    @server.tool
    def find(code: Annotated[str, Field(pattern=r"^[A-Z]\d{3}$")]) -> str:
        calls.append(code)
        return code

    config = FuzzConfig(
        valid=3,
        invalid=0,
        seed=1,
        house_rules=False,
        allow_writes=True,
        examples={"find": [{"code": "C124"}]},
    )
    report = _fuzz(server, config)
    assert calls[0] == "C124" and report.tools[0].families.get("known_good") == 1


@pytest.mark.slow
@pytest.mark.timeout(300)  # ~50 s of CPU over stdio (client and server): 95-115 s on a busy machine
def test_the_official_sdk_server_has_no_spec_violations() -> None:
    """The well-behaved server built with the official SDK: nothing at any failing grade."""
    report = run_fuzz(
        make_target(stdio("well_behaved")),
        FuzzConfig(valid=40, invalid=120, seed=2, house_rules=False, canary="ocm-canary-test"),
    )
    assert report.tools and report.ok, [f.describe() for f in report.failing[:10]]
    assert not report.failing


@pytest.mark.slow
def test_state_changing_tools_are_skipped_and_the_canary_found(tmp_path: Path) -> None:
    skipped = run_fuzz(
        make_target(stdio("destructive")), FuzzConfig(valid=2, invalid=4, seed=1, house_rules=False)
    )
    assert [t.tool for t in skipped.tools] == ["count_records"]  # the read-only one
    assert {s.tool for s in skipped.skipped} == {"delete_all_records", "rename_record"}
    assert all("--allow-writes" in s.reason for s in skipped.skipped)
    code = main(
        [
            "--target",
            stdio("leaky"),
            "--valid",
            "3",
            "--invalid",
            "0",
            "--seed",
            "1",
            "--database",
            "",
            "--out",
            str(tmp_path),
        ]
    )
    log = json.loads((tmp_path / "fuzz.json").read_text())
    record = assert_record(tmp_path, "fuzz", 1)
    assert record.body == log and record.header.target == stdio("leaky")
    leaks = [f for f in log["failures"] if f["check"] == "no_secret_leak"]
    assert code == 1 and leaks and {f["tool"] for f in leaks} >= {"diagnostics", "storage_config"}
    assert all(f["grade"] == "security" for f in leaks)
    assert log["house_rules"] is False and log["findings_by_grade"]["security"] >= 2


@pytest.mark.slow
def test_a_server_that_dies_or_shows_its_exceptions_is_found() -> None:
    report = run_fuzz(
        make_target(stdio("crashing")), FuzzConfig(valid=4, invalid=6, seed=1, house_rules=False)
    )
    by_tool = {(f.tool, f.check) for f in report.failing}
    assert ("load_report", "no_crash") in by_tool, report.failing  # [Errno 2] ... in the error
    assert {("health", "answers"), ("health", "still_serving")} & by_tool, report.failing
    assert all(f.grade.startswith("spec") for f in report.failing if f.tool == "health")


def test_input_errors_as_protocol_errors_are_judged_by_the_negotiated_version() -> None:
    from evals.run.fuzz_checks import Classified, Context
    from evals.run.outcome import ToolInfo

    refused = Classified("protocol-error", None, -32602, "Invalid params")
    rule = RULES["input_error_as_result"]
    tool = ToolInfo("t", {"type": "object"})
    older = Context("invalid", ["x"], tool, 1000.0, protocol_version="2025-06-18")
    current = Context("invalid", ["x"], tool, 1000.0, protocol_version="2025-11-25")
    assert rule.fn(refused, older) is None
    assert rule.fn(refused, current) and rule.grade == "spec-should"


# ----------------------------------------------------------------------------- boundary cases


def _fixture_server(name: str) -> FastMCP:
    """A fixture server module (tests/fixtures/servers) loaded in this process."""
    import importlib.util
    import sys

    from security_servers import SERVERS

    sys.path.insert(0, str(SERVERS))  # the fixtures import their _serve helper by name
    try:
        spec = importlib.util.spec_from_file_location(f"fixture_{name}", SERVERS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SERVERS))
    server: FastMCP = module.mcp
    return server


def _short_profile(**overrides: Any) -> FuzzConfig:
    short = PROFILES["default"]
    return FuzzConfig(
        valid=short["valid"],
        invalid=short["invalid"],
        health_every=short["health_every"],
        seed=3,
        house_rules=False,
        **overrides,
    )


def test_the_short_profile_finds_crashes_at_the_schema_edges() -> None:
    report = run_fuzz(server_target(_fixture_server("edge_crashing"), "edges"), _short_profile())
    crashes = {
        (f.tool, f.message.split(":")[0]): f
        for f in report.failing
        if f.check == "no_crash" and f.family == "schema_edge"
    }
    # the schema says text of 1 to 1000 characters and pages 1 to 500; the tools fail above
    # 300 characters and at page 500
    long_text = crashes[("summarize", "text")]
    assert "maxLength 1000" in long_text.message and long_text.grade == "spec-should"
    assert "--family schema_edge" in long_text.reproduce
    assert ("schedule_page", "page") in crashes
    assert "maximum 500" in crashes[("schedule_page", "page")].message
    assert not report.ok
    edges = {t.tool: t for t in report.tools}
    ended = {e.edge: e for e in edges["summarize"].edges}
    assert ended["text: minLength 1 words"].ended == "answered"
    assert ended["text: maxLength 1000 words"].ended == "crash"
    assert ended["text: maxLength 1000 words"].failed == ["no_crash"]
    assert (
        "text: maxLength 1000 words, maxLength 1000 codepoints" in edges["summarize"].edge_summary
    )
    # every edge is tried although the first failing one is found: both texts at 1000 fail
    assert ended["text: maxLength 1000 codepoints"].ended == "crash"


def test_without_the_edges_the_short_profile_misses_the_long_text_crash() -> None:
    # The gap the edges close: random text stays short, so the same seed and profile never
    # reach 300 characters (an integer bound is sometimes drawn; text this long is not).
    report = run_fuzz(
        server_target(_fixture_server("edge_crashing"), "edges"),
        _short_profile(edges=False, tools=["summarize"]),
    )
    assert report.tools[0].valid >= 1 and not report.tools[0].edges
    assert report.ok, [f.describe() for f in report.failing]


LOOK_AHEAD = r"^(?=.*\d)[a-z0-9]+$"  # the edge builder does not walk look-arounds


class RecordsCodes(Tool):
    """Publishes a look-ahead pattern (pydantic's regex engine has none, so the schema is
    given as is) and answers every call, keeping the codes it was sent."""

    seen: list[str] = Field(default_factory=list)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        self.seen.append(arguments["code"])
        return ToolResult(content=json.dumps({"code": arguments["code"]}))


def test_an_edge_that_cannot_be_built_is_reported_not_sent() -> None:
    server = FastMCP("pattern")
    tool = RecordsCodes(
        name="find",
        annotations=ToolAnnotations(readOnlyHint=True),
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": LOOK_AHEAD, "maxLength": 20}},
            "required": ["code"],
        },
    )
    server.add_tool(tool)
    report = _fuzz(server, FuzzConfig(valid=3, invalid=0, seed=1, house_rules=False))
    dropped = {d.label: d.reason for d in report.tools[0].edges_dropped}
    assert "code: maxLength 20 words" in dropped, dropped
    assert "no string of 20 characters" in dropped["code: maxLength 20 words"]
    assert tool.seen and all(re.search(LOOK_AHEAD, code) for code in tool.seen), tool.seen
    assert report.ok
