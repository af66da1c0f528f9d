"""Faults of the reference server: slow or failing paths and a damaged index give a partial
answer with the right provenance and lower confidence, or a clear tool error, never a hang past
the whole-tool timeout; the server refuses to start on an absent or foreign index.

Timings are structural bounds with generous margins (speed is measured by the benchmarks).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Faults, Settings
from reference_server.index.fingerprint import index_problem
from reference_server.retrieval.dual_path import _time_left, run_dual, tool_deadline
from reference_server.server import build_server
from tests.conftest import make_settings, run_fresh, share_stores

QUERY = {"query": "documentation requirements for virtual care", "n_results": 5}
TOOL = "opa.search_sections"
GENEROUS = {"sql_timeout_ms": 5000, "vector_timeout_ms": 5000, "tool_timeout_ms": 10_000}
# A server on a damaged index cannot be warmed up; cold model loading must not hit a timeout.
COLD = {"sql_timeout_ms": 20_000, "vector_timeout_ms": 20_000, "tool_timeout_ms": 40_000}


async def _timed(tool: str, args: dict[str, Any], **overrides: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    result = await run_fresh(tool, args, warm_up=True, **overrides)
    return result, (time.perf_counter() - start) * 1000


def _assert_partial(result: Any, provenance: list[str]) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    out: dict[str, Any] = result.structured_content
    assert out["provenance"] == provenance, out["provenance"]
    return out


# ----------------------------------------------------------------------------- slow / failing paths


async def test_slow_sql_path_is_cut_and_the_vector_answer_stands() -> None:
    result = await run_fresh(
        TOOL, QUERY, warm_up=True, faults=Faults(sql_delay_ms=5000), sql_timeout_ms=200
    )
    out = _assert_partial(result, ["vector"])
    assert out["sections"] and out["confidence_basis"]["spec_score"] <= 0.75
    assert "timeout" in result.meta["path_errors"]["sql"]


async def test_both_paths_slow_answer_empty_within_the_whole_tool_timeout() -> None:
    result = await run_fresh(
        TOOL,
        QUERY,
        warm_up=True,
        faults=Faults(sql_delay_ms=5000, vector_delay_ms=5000),
        sql_timeout_ms=200,
        vector_timeout_ms=300,
        tool_timeout_ms=1500,
    )
    out = _assert_partial(result, [])
    assert out["confidence"] == 0.0
    assert result.meta["timings_ms"]["total"] < 5000  # both faults cut, neither waited out


@pytest.mark.parametrize(
    ("tool", "args", "answers"),
    [
        (TOOL, QUERY, "sections"),
        ("schedule.get", {"q": "discharge day MRP", "codes": ["C124"]}, "items"),
    ],
)
async def test_whole_tool_timeout_after_one_path_answered_answers_from_that_path(
    tool: str, args: dict[str, Any], answers: str
) -> None:
    """The vector path may wait 5 s but the tool only has 600 ms: it is cut at the tool's
    deadline and the tool answers from SQL (partial, lower confidence), not an error."""
    healthy = await run_fresh(tool, args, warm_up=True, **GENEROUS)
    result = await run_fresh(
        tool,
        args,
        warm_up=True,
        faults=Faults(vector_delay_ms=5000),
        vector_timeout_ms=5000,
        tool_timeout_ms=600,
    )
    out = _assert_partial(result, ["sql"])
    assert out[answers]
    assert out["confidence"] < healthy.structured_content["confidence"]
    assert "whole-tool deadline" in result.meta["path_errors"]["vector"]
    assert result.meta["timings_ms"]["total"] < 5000  # the 5 s fault was cut, not waited out


async def test_deadline_cuts_retrieval_before_the_budget_ends() -> None:
    settings = make_settings(sql_timeout_ms=5000, vector_timeout_ms=5000)

    def fast() -> str:
        return "ok"

    def slow() -> str:
        time.sleep(2.0)
        return "late"

    start = time.perf_counter()
    with tool_deadline(1.0):
        # the paths must stop at 0.75 s: a quarter of the budget is kept for merging
        assert 0.5 < (_time_left() or 0.0) <= 0.75
        dual = await run_dual(settings, fast, slow)
    elapsed = time.perf_counter() - start
    assert dual.sql.value == "ok" and dual.vector.value is None
    assert dual.provenance == ["sql"]
    assert elapsed < 2.0, elapsed  # the 2 s path was cut, not waited out


async def test_a_tool_overrunning_its_budget_is_a_clean_tool_error() -> None:
    from pydantic import BaseModel

    from reference_server.runtime import Runtime
    from reference_server.tools.base import McpTool, Tool, ToolOutput
    from reference_server.tools.request_model import StrictModel

    class Req(StrictModel):
        pass

    class Resp(BaseModel):
        ok: bool

    class Stuck(Tool[Req, Resp]):
        name = "stuck"
        title = "Stuck"
        description = "never finishes in time"
        request = Req
        response = Resp
        steps = ()

        def warm_up(self) -> Req:
            return Req()

        async def run(self, rt: Runtime, req: Req) -> ToolOutput[Resp]:
            await asyncio.sleep(5)
            return ToolOutput(Resp(ok=True))

    from fastmcp import FastMCP

    server = FastMCP("t")
    server.add_tool(McpTool.register(Stuck(), Runtime(make_settings(tool_timeout_ms=200))))
    async with Client(server) as client:
        result = await client.call_tool("stuck", {}, raise_on_error=False)
    assert result.is_error and "did not finish within 200 ms" in result.content[0].text


# ----------------------------------------------------------------------------- a damaged index


@pytest.fixture
def damaged_index(settings: Settings, tmp_path: Path) -> Iterator[Path]:
    """A private index directory: symlinks to the real files, so one can be replaced."""
    root = tmp_path / "index"
    root.mkdir()
    for item in settings.index_dir.iterdir():
        (root / item.name).symlink_to(item)
    yield root


def _replace(root: Path, name: str, how: str) -> None:
    target = root / name
    target.unlink()
    if how == "corrupt":
        target.write_bytes(b"this is not a database\n" * 100)
    elif how == "unreadable":
        target.mkdir()  # a directory where a file should be: opening it fails for anyone


@pytest.mark.parametrize("how", ["missing", "unreadable", "corrupt"])
async def test_damaged_sql_file_gives_a_vector_only_answer(damaged_index: Path, how: str) -> None:
    _replace(damaged_index, "opa.db", how)
    result = await run_fresh(TOOL, QUERY, index_dir=damaged_index, **COLD)
    out = _assert_partial(result, ["vector"])
    assert out["sections"] and out["confidence_basis"]["spec_score"] <= 0.75
    assert "sql" in result.meta["path_errors"]


async def test_missing_chroma_directory_gives_an_sql_only_answer(damaged_index: Path) -> None:
    _replace(damaged_index, "chroma", "missing")
    result = await run_fresh(TOOL, QUERY, index_dir=damaged_index, **COLD)
    out = _assert_partial(result, ["sql"])
    assert out["sections"]
    assert "index not found" in result.meta["path_errors"]["vector"].lower()
    assert not (damaged_index / "chroma").exists()  # nothing was created in its place


async def test_whole_index_missing_is_a_clear_answer_not_a_crash(tmp_path: Path) -> None:
    result = await run_fresh(TOOL, QUERY, index_dir=tmp_path / "nowhere", **COLD)
    text = result.content[0].text if result.is_error else json.dumps(result.structured_content)
    assert "Traceback" not in text
    if not result.is_error:
        assert result.structured_content["provenance"] == []


# ----------------------------------------------------------------------------- refusing to start


def test_index_check_names_an_absent_or_foreign_index(settings: Settings, tmp_path: Path) -> None:
    assert index_problem(settings) is None
    absent = index_problem(settings.model_copy(update={"index_dir": tmp_path / "none"}))
    assert absent and "missing" in absent and "make index" in absent
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    for item in settings.index_dir.iterdir():
        if item.name != "manifest.json":
            (foreign / item.name).symlink_to(item)
    manifest = json.loads((settings.index_dir / "manifest.json").read_text())
    (foreign / "manifest.json").write_text(json.dumps({**manifest, "corpus_hash": "0" * 64}))
    problem = index_problem(settings.model_copy(update={"index_dir": foreign}))
    assert problem and "another version" in problem


@pytest.mark.slow
def test_server_refuses_to_start_without_an_index(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "reference_server"],
        env={**os.environ, "OCM_INDEX_DIR": str(tmp_path / "none")},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "refusing to start" in proc.stderr and "make index" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_blocking_path_work_runs_in_the_pool_and_leaves_other_calls_free() -> None:
    """`path_work_ms` sleeps inside the named tool's paths; on a correct server that is the
    retrieval pool's thread, so a call of another tool answers while it sleeps."""
    faults = Faults(path_work_ms=3000, work_tools="adp.get")
    server = build_server(make_settings(faults=faults, **GENEROUS))
    share_stores(server)
    async with Client(server) as client:
        slow = asyncio.create_task(
            client.call_tool("adp.get", {"query": "power wheelchair funding"}, raise_on_error=False)
        )
        await asyncio.sleep(0.2)  # the slow call's paths are sleeping now
        cheap = await client.call_tool("opa.get_section", {"section_id": "cpso-virtual-care:s01"})
        assert not slow.done(), "the cheap call waited for the slow call's blocking work"
        assert not cheap.is_error and cheap.meta["timings_ms"]["total"] < 3000
        result = await slow
    assert not result.is_error and result.meta["timings_ms"]["sql"] >= 3000
