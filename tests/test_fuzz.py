"""Property-based schema tests (evals.run.fuzz): the reference server passes the default profile,
and deliberately broken backends are caught, each with a message naming the defect.

`make fuzz` runs the large profile (>= 1,000 invalid and >= 200 valid examples per tool).
"""

from __future__ import annotations

import asyncio
import json
import traceback
from typing import Annotated, Any

import pytest
from fastmcp import Client, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool, ToolResult
from pydantic import BaseModel, Field

from evals.run.fuzz import FuzzConfig, FuzzReport, run_fuzz
from evals.run.fuzz_cli import known_inputs
from evals.run.fuzz_render import render_edges, render_table
from evals.run.id_lookup import resolve_args
from evals.run.scenario import load_scenarios
from evals.run.targets import make_target, server_target
from ocm_common.golden import GOLDEN_DIR
from reference_server.config import Settings
from tests.served_tools import SERVED

SMALL = FuzzConfig(valid=10, invalid=30, seed=1, allow_writes=True)  # in-memory tools: no state


def _fuzz(server: FastMCP, config: FuzzConfig = SMALL, **kw: Any) -> FuzzReport:
    return run_fuzz(server_target(server, "broken"), config, **kw)


def _messages(report: FuzzReport, check: str) -> list[str]:
    return [f.message for f in report.failures if f.check == check]


# ----------------------------------------------------------------------------- reference server


# The fields that hold ids of corpus records (their schema descriptions say so): a boundary
# value there names no record, so "not found" is the right answer, as it is for the call with
# every optional field present when the golden call lacks an id it then makes up (freshness'
# document_ids); every other edge is answered.
async def _looked_up(server: FastMCP) -> dict[str, list[dict[str, Any]]]:
    """Known-good calls of the golden scenarios whose id the server names first (ids_from)."""
    out: dict[str, list[dict[str, Any]]] = {}
    async with Client(server) as client:

        async def structured(tool: str, args: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, args, raise_on_error=False)
            return None if result.is_error else result.structured_content

        for scenario in load_scenarios(GOLDEN_DIR):
            if scenario.lookups and not scenario.expects_error:
                args = await resolve_args(structured, scenario.lookups, dict(scenario.args))
                if args is not None:
                    out.setdefault(scenario.tool, []).append(args)
    return out


ID_FIELDS = ("section_id", "chunk_ids", "document_ids", "(optional): all")


# 15-23 s of CPU (10-12 s before its 272 boundary cases); wall time more on a shared machine
@pytest.mark.timeout(900)
def test_reference_server_passes_the_default_profile(server: FastMCP, settings: Settings) -> None:
    # The shared server: the functional tests that run after this one answer from it too.
    # tools/list after every 5th case (and after every failing case, and the replayed call at
    # each tool's end): in process it costs ~68 ms, 5x an input error, and after every one of
    # the 300 cases it was 20 s of this test's 30 s. A case that breaks the server fails the
    # next call anyway (answers); `make fuzz` checks after every 10th of 14,400 cases.
    # One golden call per tool is the known-good input the boundary cases change (make fuzz
    # uses them all), so an edge of one field is sent with real values in the others.
    golden = known_inputs(None, None, "inprocess")
    looked_up = asyncio.run(_looked_up(server))
    golden.update({tool: calls for tool, calls in looked_up.items() if tool not in golden})
    report = run_fuzz(
        server_target(server, "inprocess"),
        FuzzConfig(
            valid=5,
            invalid=20,
            health_every=5,
            examples={tool: calls[:1] for tool, calls in golden.items()},
        ),
        profile="default",
        index_dir=settings.index_dir,
    )
    print(render_table(report))
    print(render_edges(report))
    assert sorted(t.tool for t in report.tools) == SERVED
    assert all(t.valid >= 1 and t.invalid >= 15 for t in report.tools), render_table(report)
    assert not report.failures, "\n".join(f.describe() for f in report.failures[:20])
    assert report.databases_unchanged, report.database_note
    # every tool started from its schema's edges, none dropped, each answered (or, for a
    # record id, not found)
    assert all(t.edges and not t.edges_dropped for t in report.tools), render_edges(report)
    for t in report.tools:
        for edge in t.edges:
            allowed = (
                ("answered", "not-found") if edge.edge.startswith(ID_FIELDS) else ("answered",)
            )
            assert edge.ended in allowed, (t.tool, edge)
    search = next(t for t in report.tools if t.tool == "opa.search_sections")
    for expected in ("query: maxLength 1000 words", "n_results: minimum 1, maximum 20"):
        assert expected in search.edge_summary, search.edge_summary


# ----------------------------------------------------------------------------- broken backends


class Hit(BaseModel):
    code: str
    fee: float


class Answer(BaseModel):
    hits: list[Hit]
    total: int


def _answer(total: Any = 1) -> ToolResult:
    data = {"hits": [{"code": "C124", "fee": 61.15}], "total": total}
    return ToolResult(content=json.dumps(data), structured_content=data)


def test_wrong_typed_field_in_structured_content_is_caught() -> None:
    server = FastMCP("broken")

    @server.tool(output_schema=Answer.model_json_schema())
    def lookup(q: Annotated[str, Field(min_length=1, max_length=50)]) -> ToolResult:
        return _answer(total="one")  # the schema says integer

    report = _fuzz(server)
    found = _messages(report, "output_schema")
    assert found and "'total'" in found[0] and "integer" in found[0], found


def test_crash_on_a_long_string_is_caught() -> None:
    server = FastMCP("broken", mask_error_details=True)

    @server.tool(output_schema=Answer.model_json_schema())
    def lookup(q: Annotated[str, Field(min_length=1, max_length=2000)]) -> ToolResult:
        if len(q) > 20:
            raise RuntimeError("buffer overflow")  # an internal error on valid input
        return _answer()

    report = _fuzz(server, FuzzConfig(valid=40, invalid=10, seed=2, allow_writes=True))
    found = _messages(report, "no_internal_error")
    assert found and "schema-valid call failed" in found[0], report.failures[:3]


def test_stack_trace_in_an_error_message_is_caught() -> None:
    server = FastMCP("broken")

    @server.tool(output_schema=Answer.model_json_schema())
    def lookup(arguments: dict[str, Any] | None = None, q: str = "x") -> ToolResult:
        try:
            raise ValueError("bad input")
        except ValueError:
            raise ToolError(traceback.format_exc()) from None

    report = _fuzz(server)
    found = _messages(report, "no_stack_trace")
    assert found and "stack trace" in found[0], report.failures[:3]


class LimitedRequest(BaseModel):
    q: Annotated[str, Field(min_length=1, max_length=50)]
    top_k: Annotated[int, Field(ge=1, le=10)] = 5


class PublishesButIgnores(Tool):
    """Publishes LimitedRequest's schema but never validates its arguments."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return _answer()


def test_a_limit_that_is_not_enforced_is_caught() -> None:
    server = FastMCP("broken")
    server.add_tool(
        PublishesButIgnores(
            name="lookup",
            description="top_k limit published, not enforced",
            parameters=LimitedRequest.model_json_schema(),
            output_schema=Answer.model_json_schema(),
        )
    )
    report = _fuzz(server)
    found = [
        f for f in report.failures if f.check == "input_refused" and f.family == "out_of_range"
    ]
    assert found and "accepted without an error: 'top_k'" in found[0].message, report.failures[:3]
    assert found[0].grade == "spec-must" and "security-considerations" in found[0].reference


def test_a_schema_valid_call_refused_is_caught() -> None:
    server = FastMCP("broken")

    @server.tool(output_schema=Answer.model_json_schema())
    def lookup(program: Annotated[str, Field(min_length=1, max_length=30)]) -> ToolResult:
        if program not in ("breast", "lung"):  # the schema says free text
            raise ToolError(f"Invalid argument 'program': {program!r}. Allowed: 'breast', 'lung'.")
        return _answer()

    report = _fuzz(server)
    found = _messages(report, "not_refused")
    assert found and "schema-valid call refused" in found[0], report.failures[:3]


# ----------------------------------------------------------------------------- other targets


@pytest.mark.slow
def test_fuzz_runs_against_a_stdio_target(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OCM_INDEX_DIR", str(settings.index_dir))
    target = make_target("stdio:python -m reference_server")
    report = run_fuzz(target, FuzzConfig(valid=3, invalid=15, tools=["schedule.get"]))
    assert [t.tool for t in report.tools] == ["schedule.get"]
    assert report.tools[0].invalid >= 10
    assert not report.failures, [f.describe() for f in report.failures]


def test_a_tool_without_arguments_is_called_with_an_empty_object() -> None:
    server = FastMCP("no-args")

    @server.tool(output_schema=Answer.model_json_schema())
    def status() -> ToolResult:
        return _answer()

    report = _fuzz(server)
    assert not report.failures, [f.describe() for f in report.failures]
    # an open schema without properties accepts any object: nothing to send that is invalid
    assert report.tools[0].valid >= 1


def test_a_failure_is_shrunk_and_reported_with_its_seed_and_reproduction() -> None:
    server = FastMCP("broken", mask_error_details=True)

    @server.tool(output_schema=Answer.model_json_schema())
    def lookup(top_k: Annotated[int, Field(ge=1, le=10)]) -> ToolResult:
        if top_k > 5:
            raise RuntimeError("index out of range")  # an internal error on valid input
        return _answer()

    # random generation only: the boundary case top_k=10 would find it first, unshrunk
    report = _fuzz(server, FuzzConfig(valid=60, invalid=0, seed=7, allow_writes=True, edges=False))
    failure = next(f for f in report.failures if f.check == "no_internal_error")
    assert json.loads(failure.args) == {"top_k": 6}  # shrunk to the smallest failing case
    assert failure.seed == 7 == report.seed
    assert "--seed 7" in failure.reproduce and "--tool lookup" in failure.reproduce
    assert "--family generated" in failure.reproduce
