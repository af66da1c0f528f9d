"""Benchmark plumbing: one warmed server, a private event loop, and a p50/p95 summary table.

pytest-benchmark times each call; the summary reads its raw timings and prints per-tool
p50/p95 in milliseconds (pytest-benchmark itself reports median but not p95), and writes
them to reports/bench/tool_latency.json.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastmcp import Client

from evals.run.targets import _accept_any_result
from reference_server.server import build_server
from tests.conftest import make_settings

TARGET_P50_MS = 15.0
TARGET_P95_MS = 40.0
REPORT = Path(__file__).resolve().parents[2] / "reports" / "bench" / "tool_latency.json"
_results: dict[str, dict[str, float]] = {}


class SyncClient:
    """Drives the async in-memory client from pytest-benchmark's synchronous timer."""

    def __init__(self) -> None:
        # The query-embedding cache is off so repeated benchmark queries pay the full cost.
        self.server = build_server(make_settings(embed_cache_size=0))
        self.server.runtime.warm_up()  # type: ignore[attr-defined]
        self.loop = asyncio.new_event_loop()
        self.client: Client[Any] = Client(self.server)
        self.loop.run_until_complete(self.client.__aenter__())
        # The MCP client session re-validates structuredContent with jsonschema (~5 ms a call):
        # a client-side cost, switched off here as the eval harness does.
        self.client.session.validate_tool_result = _accept_any_result  # type: ignore[method-assign]

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        result = self.loop.run_until_complete(
            self.client.call_tool(tool, args, raise_on_error=False)
        )
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
    ms = np.array(timings_s) * 1000
    _results[tool] = {
        "n": int(ms.size),
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "max_ms": round(float(ms.max()), 2),
    }


def write_summary(terminalreporter: Any) -> None:
    """Called from the root conftest's pytest_terminal_summary (hooks there always run)."""
    if not _results:
        return
    tr = terminalreporter
    tr.section("per-tool in-process latency (in-memory MCP client, embedding cache off)")
    tr.write_line(
        f"{'tool':26} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}  target p50<={TARGET_P50_MS:g} p95<={TARGET_P95_MS:g}"
    )
    for tool, r in sorted(_results.items()):
        ok = r["p50_ms"] <= TARGET_P50_MS and r["p95_ms"] <= TARGET_P95_MS
        tr.write_line(
            f"{tool:26} {r['n']:5d} {r['p50_ms']:8.2f} {r['p95_ms']:8.2f} {r['max_ms']:8.2f}  {'ok' if ok else 'MISSED'}"
        )
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {"targets_ms": {"p50": TARGET_P50_MS, "p95": TARGET_P95_MS}, "tools": _results},
            indent=2,
        )
    )
    tr.write_line(f"written to {REPORT}")
