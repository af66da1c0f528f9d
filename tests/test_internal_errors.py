"""Unexpected exceptions are masked on every tool: the client gets a generic message and an error
id, never the exception's class, text, traceback, a file path or SQL; the server log keeps the
detail under the same id. `OCM_FAULT_RAISE_STEP` (here `Faults(raise_step=...)`) raises one inside
the chosen pipeline step, with a text made of exactly what must not leak."""

from __future__ import annotations

import json
import logging
import re
import traceback
from typing import Any

import pytest
from fastmcp.exceptions import ToolError

from evals.conformance.calls import exception_signs
from evals.run.fuzz import FuzzConfig, FuzzReport, run_fuzz
from evals.run.fuzz_checks import STACK_TRACE
from evals.run.security.runner import Options, run_security
from evals.run.security.secrets_leak import FAMILY as SECRETS_FAMILY
from evals.run.targets import server_target
from reference_server import errors
from reference_server.config import RAISE_STEPS, Faults
from reference_server.server import build_server
from reference_server.tools import ALL_TOOLS
from reference_server.tools.base import Tool
from tests.conftest import make_settings, run_fresh, share_stores

ERROR_ID = re.compile(r"error id ([0-9a-f]{12})")
# What the injected exception's text holds (tools/pipeline.py InjectedStepError), and any
# exception's marks: none of it may reach a client.
MUST_NOT_LEAK = ("InjectedStepError", "SELECT", "opa_sections", "pipeline.py", "Traceback")
ANSWER_STEPS = ("parse", "merge", "score", "respond")  # no answer without them
PATH_STEPS = ("sql", "vector")  # a failed path leaves the other path's answer


def leaks(result: Any) -> list[str]:
    """Everything a client receives, searched for exception details."""
    text = " ".join(getattr(c, "text", "") for c in result.content)
    text += json.dumps(result.structured_content or {}) + json.dumps(result.meta or {})
    found = [s for s in MUST_NOT_LEAK if s in text] + exception_signs(text)
    if STACK_TRACE.search(text):
        found.append("stack trace")
    return found


def logged(caplog: pytest.LogCaptureFixture, error_id: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if error_id in r.getMessage() and r.exc_info]


def test_every_answer_step_can_be_chosen() -> None:
    assert set(ANSWER_STEPS) | set(PATH_STEPS) == set(RAISE_STEPS)
    assert Faults(raise_step="merge").raises_in("odb.get", "merge")
    assert not Faults(raise_step="merge").raises_in("odb.get", "score")
    only = Faults(raise_step="score", raise_tools="adp.get, odb.get")
    assert only.raises_in("odb.get", "score") and not only.raises_in("schedule.get", "score")


@pytest.mark.parametrize("step", ANSWER_STEPS)
@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
async def test_an_unexpected_exception_is_a_masked_error_with_an_id(
    tool: Tool[Any, Any], step: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="reference_server.internal")
    faults = Faults(raise_step=step, raise_tools=tool.name)
    result = await run_fresh(tool.name, tool.warm_up_arguments(), faults=faults)
    assert result.is_error, f"{tool.name} answered although its {step} step raised"
    text = result.content[0].text
    assert "internal error" in text and not leaks(result), (text, leaks(result))
    match = ERROR_ID.search(text)
    assert match, text
    records = logged(caplog, match.group(1))
    assert records, f"no log record under error id {match.group(1)}"
    assert records[0].exc_info is not None and records[0].exc_info[0] is not None
    assert records[0].exc_info[0].__name__ == "InjectedStepError"


@pytest.mark.parametrize("step", PATH_STEPS)
@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
async def test_an_unexpected_exception_in_one_path_leaves_a_clean_partial_answer(
    tool: Tool[Any, Any], step: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="reference_server.internal")
    result = await run_fresh(
        tool.name, tool.warm_up_arguments(), faults=Faults(raise_step=step, raise_tools=tool.name)
    )
    assert not leaks(result), leaks(result)
    errors = (result.meta or {}).get("path_errors", {})
    if tool.name == "coverage.answer":  # no paths of its own: its sub-tools' paths did not raise
        assert not result.is_error and not errors
        return
    if (result.meta or {}).get("timings_ms", {}).get(step) is None and not result.is_error:
        assert step not in errors  # this request does not use the path (no free text)
        return
    if result.is_error:  # a look-up by id that only this path could answer: a clear error
        assert "internal error" not in result.content[0].text
        return
    provenance = result.structured_content.get("provenance", result.meta.get("provenance"))
    assert provenance is not None and step not in provenance
    match = ERROR_ID.search(errors.get(step, ""))
    assert match, errors
    assert logged(caplog, match.group(1))


async def test_with_no_tool_named_every_tool_masks_it() -> None:
    texts = []
    for tool in ALL_TOOLS:
        result = await run_fresh(
            tool.name, tool.warm_up_arguments(), faults=Faults(raise_step="respond")
        )
        assert result.is_error and not leaks(result), tool.name
        texts.append(result.content[0].text)
    assert len({ERROR_ID.search(t).group(1) for t in texts if ERROR_ID.search(t)}) == len(ALL_TOOLS)


async def test_a_failing_sub_tool_is_masked_inside_the_composed_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="reference_server.internal")
    args = {"question": "Is a walker covered for my 70-year-old patient?"}
    result = await run_fresh(
        "coverage.answer", args, faults=Faults(raise_step="merge", raise_tools="adp.get")
    )
    assert not result.is_error and not leaks(result), leaks(result)
    trace = {t["tool"]: t for t in result.structured_content["trace"]}
    match = ERROR_ID.search(trace["adp.get"]["error"] or "")
    assert match and logged(caplog, match.group(1))


# ------------------------------------------------- the harness's leak checks, on a raising server


def _leaking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed the defect the masking prevents: the exception's text and traceback to the client."""

    def leak(self: errors.InternalError, tool: str, exc: BaseException) -> None:
        self.error_id = "0" * 12
        detail = "".join(traceback.format_exception(exc))
        ToolError.__init__(self, f"{tool} failed: {detail}")

    monkeypatch.setattr(errors.InternalError, "__init__", leak)


def _fuzz_raising_server() -> FuzzReport:
    server = build_server(make_settings(faults=Faults(raise_step="merge")))
    share_stores(server)
    config = FuzzConfig(valid=3, invalid=0, seed=7, tools=["odb.get", "opa.search_sections"])
    return run_fuzz(server_target(server, "inprocess:faults.raise_step=merge"), config)


def test_fuzz_no_stack_trace_holds_on_a_server_that_really_raises() -> None:
    report = _fuzz_raising_server()
    assert all(t.calls.get("tool-error", 0) >= 1 for t in report.tools), report.tools
    assert not [f for f in report.failures if f.check == "no_stack_trace"]


def test_fuzz_no_stack_trace_fails_when_the_traceback_leaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _leaking(monkeypatch)
    report = _fuzz_raising_server()
    assert {f.tool for f in report.failures if f.check == "no_stack_trace"} == {
        "odb.get",
        "opa.search_sections",
    }


async def _security_on_raising_server() -> tuple[list[str], list[str]]:
    """(tools flagged for error details, tools whose calls reached the raising step)."""
    options = Options(families=(SECRETS_FAMILY,), deadline_s=300)
    report = await run_security("inprocess:faults.raise_step=merge", options)
    assert report.error is None and report.calls >= 12, report.error
    flagged = {f.tool or "" for f in report.findings if f.check == "no_crash"}
    raised = {c["tool"] for c in report.call_log if "internal error" in c["answer"]}
    raised |= {c["tool"] for c in report.call_log if "failed: Traceback" in c["answer"]}
    return sorted(flagged), sorted(raised)


async def test_security_finds_no_error_details_on_a_server_that_really_raises() -> None:
    flagged, raised = await _security_on_raising_server()
    assert flagged == [] and len(raised) >= 8, raised


async def test_security_names_every_tool_whose_error_shows_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _leaking(monkeypatch)
    flagged, raised = await _security_on_raising_server()
    assert flagged == raised and len(raised) >= 8, (flagged, raised)


async def test_an_exception_past_the_tool_wrapper_is_still_masked_by_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second layer: should an exception ever escape `McpTool.run` (a wrapper bug), the
    server's own masking still keeps its text from the client."""
    from reference_server.tools.base import McpTool

    async def escaping(self: McpTool, arguments: dict[str, Any]) -> Any:
        raise RuntimeError('near "SELECT * FROM opa_sections" in /srv/app/pipeline.py')

    monkeypatch.setattr(McpTool, "run", escaping)
    result = await run_fresh("odb.get", {"q": "is atorvastatin covered"})
    assert result.is_error and not leaks(result), result.content[0].text
