"""Benchmark plumbing: one warmed server, a private event loop, and a p50/p95 summary table.

pytest-benchmark times each call; the summary reads its raw timings and prints per-tool
p50/p95 in milliseconds (pytest-benchmark itself reports median but not p95), judged by the
`inprocess` bars of the one SLO file (load/slo.yaml). Records go to `$OCM_LATENCY_RECORDS`
(default reports/bench/latency.jsonl) in the format every latency run writes; a miss fails
the session, so `make bench` exits non-zero.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from load.slo import evaluate, load_slo, miss_table
from ocm_common.client_session import record_results_as_they_come
from ocm_common.latency_records import LatencyRecord, write_records
from reference_server.server import build_server
from tests.conftest import make_settings

PROFILE = "inprocess"
DEFAULT_RECORDS = Path(__file__).resolve().parents[2] / "reports" / "bench" / "latency.jsonl"
_results: dict[str, LatencyRecord] = {}


class SyncClient:
    """Drives the async in-memory client from pytest-benchmark's synchronous timer."""

    def __init__(self) -> None:
        # The query-embedding cache is off so repeated benchmark queries pay the full cost.
        self.server = build_server(make_settings(embed_cache_size=0))
        self.server.runtime.warm_up()
        self.loop = asyncio.new_event_loop()
        self.client: Client[Any] = Client(self.server)
        self.loop.run_until_complete(self.client.__aenter__())
        # The MCP client session re-validates structuredContent with jsonschema (~5 ms a call):
        # a client-side cost, switched off here as the eval harness does.
        record_results_as_they_come(self.client)

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        # The raw MCP result: `Client.call_tool` also builds a Python type from the tool's output
        # schema on every call (5-11 ms), a client cost the timer would count as the server's.
        result = self.loop.run_until_complete(self.client.call_tool_mcp(tool, args))
        assert not result.is_error, result.content
        return result

    def close(self) -> None:
        self.loop.run_until_complete(self.client.__aexit__(None, None, None))
        self.loop.close()


@pytest.fixture(scope="session")
def sync_client() -> Iterator[SyncClient]:
    c = SyncClient()
    yield c
    c.close()


def record(tool: str, timings_s: list[float]) -> None:
    _results[tool] = LatencyRecord.from_samples(
        PROFILE, tool, [t * 1000 for t in timings_s], source="pytest-benchmark"
    )


def misses() -> list[Any]:
    return evaluate(_results.values(), load_slo())


def write_summary(terminalreporter: Any) -> None:
    """Called from the root conftest's pytest_terminal_summary (hooks there always run)."""
    if not _results:
        return
    tr = terminalreporter
    slo = load_slo()
    tr.section("per-tool in-process latency (in-memory MCP client, embedding cache off)")
    tr.write_line(f"{'tool':26} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  targets")
    missed = {m.tool for m in misses()}
    for tool, r in sorted(_results.items()):
        bars = slo.bars(PROFILE, tool)
        tr.write_line(
            f"{tool:26} {r.n:5d} {r.p50_ms:8.2f} {r.p95_ms:8.2f} {r.max_ms:8.2f}  "
            f"p50<={bars.get('p50_ms', 0):g} p95<={bars.get('p95_ms', 0):g} "
            f"{'MISSED' if tool in missed else 'ok'}"
        )
    tr.write_line(miss_table(misses(), title="SLO (inprocess)"))
    path = Path(os.environ.get("OCM_LATENCY_RECORDS") or DEFAULT_RECORDS)
    write_records(path, sorted(_results.values(), key=lambda r: r.tool))
    tr.write_line(f"latency records appended to {path}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A latency miss fails the benchmark run (exit 1), like every latency run.

    The tests record into `tests.bench.conftest` (their import); pytest may hold this file as a
    second module, so the results are read from the imported one.
    """
    module = sys.modules.get("tests.bench.conftest")
    if module is not None and module._results and module.misses() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
