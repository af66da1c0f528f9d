"""Security checks against deliberately flawed servers (one per problem family, over stdio
or HTTP): each problem found, named and graded with a reproduction; a well-behaved server
built with the official SDK and the reference server raise nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from security_servers import http_server, stdio

from evals.conformance.calls import exception_signs
from evals.conformance.canary import key_matches
from evals.run.security.findings import Finding, SecurityReport
from evals.run.security.poisoning import invisible_chars, scan_tool
from evals.run.security.registry import FAMILIES
from evals.run.security.runner import Options, run_security
from evals.run.security.safety import is_loopback_url, plan
from evals.run.security.surface import ToolSurface
from ocm_cli.program import main
from tests.run_records import assert_record
from tests.served_tools import SERVED

SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "tool_schemas.json"


async def _run(spec: str, *families: str, **options: object) -> SecurityReport:
    report = await run_security(spec, Options(families=families, **options))  # type: ignore[arg-type]
    assert report.error is None, report.error
    return report


def _only(report: SecurityReport, check: str) -> list[Finding]:
    found = [f for f in report.findings if f.check == check]
    for finding in found:
        assert finding.reproduction and finding.reference and finding.grade and finding.message
    return found


def _tools(report: SecurityReport, check: str) -> set[str | None]:
    return {f.tool for f in _only(report, check)}


# ----------------------------------------------------------------------------- without a server


def test_reference_schemas_raise_no_poisoning() -> None:
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    names = set(snapshot)
    for name, schemas in snapshot.items():
        tool = ToolSurface.from_wire({"name": name, **schemas})
        assert scan_tool(tool, names - {name}, "inprocess") == [], name


async def test_reference_surface_raises_no_poisoning() -> None:
    """Names, titles, descriptions, annotations and schemas as the reference server publishes
    them (built, not warmed: listing needs no index reads)."""
    from fastmcp import Client

    from reference_server.config import Settings
    from reference_server.server import build_server

    async with Client(build_server(Settings.from_env())) as client:
        listed = await client.list_tools()
    tools = [ToolSurface.from_wire(t.model_dump(by_alias=True, exclude_none=True)) for t in listed]
    assert len(tools) == len(SERVED) and all(t.description and t.title for t in tools)
    names = {t.name for t in tools}
    for tool in tools:
        assert scan_tool(tool, names - {tool.name}, "inprocess") == [], tool.name


def test_invisible_characters_are_named() -> None:
    assert [c for _, c in invisible_chars("a\u200bb\u202ec\U000e0041")] == [
        "\u200b",
        "\u202e",
        "\U000e0041",
    ]
    assert invisible_chars("plain text, tabs\tand\nnewlines; café") == []


def test_key_formats_and_random_assignments_are_found_not_words() -> None:
    labels = {label for label, _ in key_matches("id AKIAIOSFODNN7EXAMPLE and ghp_" + "a1" * 18)}
    assert labels == {"AWS access key id", "GitHub token"}
    assert key_matches("-----BEGIN RSA PRIVATE KEY-----")
    assert key_matches("api_key=Zx9Qw7Lp2Vb8Nm4Kj6Hg")
    assert key_matches("password: correcthorsebattery") == []  # a word, no entropy
    assert key_matches("the sk-learn library and the password field") == []


def test_exception_internals_are_told_from_ordinary_errors() -> None:
    assert exception_signs("[Errno 2] No such file or directory: '/srv/a.json'")
    assert exception_signs("ValueError: bad") == ["an exception class name"]
    assert exception_signs("Error: query must not be empty (allowed: 1-1000 characters)") == []


def test_only_tools_that_say_they_are_read_only_are_called() -> None:
    tools = [
        ToolSurface("read", annotations={"readOnlyHint": True}),
        ToolSurface("wipe", annotations={"readOnlyHint": True, "destructiveHint": True}),
        ToolSurface("plain"),
    ]
    called, skipped = plan(tools, allow_writes=False)
    assert [t.name for t in called] == ["read"]
    assert {s.tool: s.reason.split(";")[0] for s in skipped} == {
        "wipe": "destructiveHint: true (may destroy data)",
        "plain": "no readOnlyHint: true (may change state)",
    }
    assert len(plan(tools, allow_writes=True)[0]) == 3


async def test_remote_targets_are_refused_without_the_flag() -> None:
    assert is_loopback_url("http://127.0.0.1:8000/mcp") and is_loopback_url("http://[::1]/mcp")
    report = await run_security("https://mcp.example.org/mcp")
    assert report.exit_code == 2 and "--allow-remote" in (report.error or "")


# ----------------------------------------------------------------------------- flawed servers


async def test_poisoning_found_in_descriptions_and_property_descriptions() -> None:
    report = await _run(stdio("poisoned"), "poisoning")
    assert _tools(report, "hidden_instructions") == {"add"}
    assert _tools(report, "invisible_unicode") == {"weather"}
    # one tool steering another is the shadowing family's (tests/evals/test_security_probes.py)
    assert {f.check for f in report.findings} <= set(FAMILIES["poisoning"].checks)
    assert "tool_shadowing" not in FAMILIES["poisoning"].checks
    hidden = _only(report, "invisible_unicode")[0]
    assert "send the api key" in (hidden.evidence or "")
    assert {f.grade for f in report.findings} == {"security"} and report.exit_code == 1


async def test_rug_pull_found_after_a_call() -> None:
    report = await _run(stdio("rug_pull"), "rug_pull")
    [finding] = _only(report, "tool_surface_changed")
    assert finding.tool == "fact_of_the_day" and "after 1 tool call" in finding.message
    assert "/fact_of_the_day/description" in (finding.evidence or "")


def test_canary_and_key_leaks_found_through_the_command_line(tmp_path: Path) -> None:
    code = main(
        ["security", "--target", stdio("leaky"), "--family", "secrets", "--out", str(tmp_path)]
    )
    assert code == 1
    data = json.loads((tmp_path / "security.json").read_text(encoding="utf-8"))
    assert assert_record(tmp_path, "security", 1).body == data
    found = {(f["check"], f["tool"], f["level"]) for f in data["findings"]}
    assert found == {
        ("canary_leak", "diagnostics", "error"),
        ("key_pattern_leak", "storage_config", "error"),
    }
    assert all(f["reproduction"].startswith("tools/call ") for f in data["findings"])
    assert data["exit_code"] == 1 and {c["tool"] for c in data["call_log"]} == {
        "diagnostics",
        "storage_config",
    }
    assert "canary_leak" in (tmp_path / "security.md").read_text(encoding="utf-8")


async def test_path_escape_found() -> None:
    report = await _run(stdio("path_escape"), "paths")
    [finding] = _only(report, "path_escape")
    assert finding.tool == "read_note" and finding.where == "arguments/path"
    assert "outside the declared root" in finding.message or "/etc/passwd" in finding.message


async def test_crash_and_exception_internals_found() -> None:
    report = await _run(stdio("crashing"), "rug_pull", "unbounded", "secrets")
    assert _tools(report, "server_crash") == {"health"}
    # the one grading table: an exception's text is no_crash (spec-should) in fuzz and security
    [exposed] = _only(report, "no_crash")
    assert exposed.tool == "load_report" and exposed.grade == "spec-should"
    assert exposed.level == "error" and "an OS error number" in exposed.message


async def test_state_changing_tools_are_skipped_without_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_MARKER_DIR", str(tmp_path))
    report = await _run(stdio("destructive"))
    assert {s.tool for s in report.skipped} == {"delete_all_records", "rename_record"}
    assert list(tmp_path.iterdir()) == [], "a skipped tool was called"
    assert {c["tool"] for c in report.call_log} == {"count_records"}
    assert report.findings == []


async def test_allow_writes_calls_state_changing_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_MARKER_DIR", str(tmp_path))
    report = await _run(stdio("destructive"), "rug_pull", allow_writes=True)
    assert report.skipped == []
    assert {p.name for p in tmp_path.iterdir()} == {
        "delete_all_records.called",
        "rename_record.called",
    }


# Two calls run into the time bound (each followed by a new server process), one allocates
# 320 MB: kept out of the default run.
@pytest.mark.slow
async def test_unbounded_time_and_memory_found() -> None:
    report = await _run(stdio("slow"), "unbounded", call_timeout_s=3.0)
    assert _tools(report, "unbounded_time") >= {"count_to"}
    assert _tools(report, "unbounded_memory") == {"make_table"}


@pytest.fixture(scope="module")
def insecure_url() -> Iterator[str]:
    with http_server("insecure_http") as url:
        yield url


async def test_http_transport_without_origin_or_host_validation(insecure_url: str) -> None:
    report = await _run(insecure_url, "http")
    [origin] = _only(report, "origin_not_validated")
    assert origin.grade == "spec-must" and origin.level == "error"
    assert "Origin: http://evil.example" in (origin.reproduction or "")
    [host] = _only(report, "host_not_validated")
    assert host.level == "error"  # neither half of the DNS-rebinding defence


async def test_http_bearer_token_not_enforced(
    insecure_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALS_BEARER_TOKEN", "configured-token")
    report = await _run(insecure_url, "http")
    assert _tools(report, "auth_not_enforced") == {None}


# ----------------------------------------------------------------------------- clean servers


async def test_well_behaved_sdk_server_raises_nothing() -> None:
    report = await _run(stdio("well_behaved"))
    assert report.findings == [], [f.to_json() for f in report.findings]
    assert report.skipped == [] and report.calls >= 10
    assert set(report.checks) >= {"hidden_instructions", "path_escape", "canary_leak"}


async def test_well_behaved_sdk_server_over_http_raises_nothing() -> None:
    with http_server("well_behaved") as url:
        report = await _run(url, "http", "poisoning", "rug_pull")
    assert report.findings == [], [f.to_json() for f in report.findings]


async def test_http_server_with_token_host_and_origin_checks_raises_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with http_server("guarded_http", env={"FIXTURE_TOKEN": "fixture-secret"}) as url:
        monkeypatch.setenv("EVALS_BEARER_TOKEN", "fixture-secret")
        report = await _run(url)
        assert report.findings == [], [f.to_json() for f in report.findings]
        monkeypatch.delenv("EVALS_BEARER_TOKEN")
        refused = await run_security(url)
    # Without the token there is no session, but the transport rules are still checked.
    assert refused.exit_code == 2 and "EVALS_BEARER_TOKEN" in (refused.error or "")
    assert refused.findings == []


async def test_reference_server_raises_nothing() -> None:
    report = await _run("inprocess")
    assert report.findings == [], [f.to_json() for f in report.findings]
    assert report.skipped == [] and report.calls > 12
