"""The bench's in-process latency step, as a function: each tool's realistic requests
(`inprocess_requests.yaml`) called in turn through FastMCP's in-memory client with the
query-embedding cache off, each call timed on the wall clock. The records are the `inprocess`
profile's, judged by the bench with every other latency record (its bars beside the profile in
load/profiles.yaml); a call answered with a tool error is a problem the step fails on.
"""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from load.profile_calls import Caller
from ocm_common.json_types import Arguments
from ocm_common.latency_records import LatencyRecord

PROFILE = "inprocess"
REQUESTS_FILE = Path(__file__).with_name("inprocess_requests.yaml")
ROUNDS = 60


def load_requests(path: Path = REQUESTS_FILE) -> dict[str, list[Arguments]]:
    """{tool: its requests, in turn}."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(tool): list(calls) for tool, calls in raw.items()}


def measure(
    server: Caller, requests: dict[str, list[Arguments]], rounds: int = ROUNDS
) -> tuple[list[LatencyRecord], list[str]]:
    """(one record per tool over `rounds` timed calls, the calls answered with a tool error).
    Each request is called once first, untimed, so a first call's set-up is not the tool's."""
    records: list[LatencyRecord] = []
    problems: list[str] = []
    for tool in sorted(requests):
        calls = requests[tool]
        for args in calls:
            if not server.call(tool, args):
                problems.append(f"{tool} {args}: answered a tool error")
        timings: list[float] = []
        for i in range(rounds):
            args = calls[i % len(calls)]
            start = time.perf_counter()
            answered = server.call(tool, args)
            timings.append((time.perf_counter() - start) * 1000)
            if not answered:
                problems.append(f"{tool} {args}: answered a tool error")
        records.append(LatencyRecord.from_samples(PROFILE, tool, timings, source="in-process"))
    return records, problems


def table(records: list[LatencyRecord]) -> str:
    """Per tool: calls, p50, p95 and max in milliseconds."""
    lines = [f"{'tool':26} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"]
    lines += [
        f"{r.tool:26} {r.n:5d} {r.p50_ms:8.2f} {r.p95_ms:8.2f} {r.max_ms:8.2f}"
        for r in sorted(records, key=lambda r: r.tool)
    ]
    return "\n".join(lines)
