"""Search latency in process: `python -m tool_search bench --from SPEC... [--distractors N]`.

Every query is a golden scenario's question (distinct texts), each searched once with the
query-vector and response caches empty, so every call embeds its query and ranks the whole
catalogue: the cost a host pays for a new question. Percentiles over all calls, after a
warm-up, with the machine written beside them.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import TypedDict

import yaml

from ocm_common.machine import MachineDescription, describe, one_line
from tool_search.requests import SearchRequest
from tool_search.service import ToolSearchService

QUESTION_ARGS = ("question", "q", "query")

# libyaml's parser when built (much faster on the golden files), else the Python one
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LatencyStats(TypedDict):
    """Percentiles and mean of one timing, in milliseconds (2 decimals)."""

    p50: float
    p95: float
    p99: float
    mean: float


class BenchRecord(TypedDict):
    """The bench's record, written as JSON in this key order."""

    kind: str
    catalogue: list[str]
    tools: int
    calls: int
    search_mcp_tools_ms: LatencyStats
    query_embedding_ms: LatencyStats
    ranking_with_vector_ms: LatencyStats
    load_average: tuple[float, float, float]
    machine: MachineDescription  # as ocm_common.machine.describe gives it
    machine_line: str
    note: str


def golden_questions(root: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(root.glob("**/*.yaml")):
        for scenario in (
            yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
        ).get("scenarios") or ():
            args = scenario.get("args") or {}
            text = next((args[k] for k in QUESTION_ARGS if isinstance(args.get(k), str)), None)
            if text:
                out.append(text)
    return list(dict.fromkeys(out))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _stats(values: list[float]) -> LatencyStats:
    return {
        "p50": round(percentile(values, 0.5), 2),
        "p95": round(percentile(values, 0.95), 2),
        "p99": round(percentile(values, 0.99), 2),
        "mean": round(statistics.fmean(values), 2),
    }


def run(specs: list[str], golden: Path, rounds: int = 3, warm_up: int = 10) -> BenchRecord:
    service = ToolSearchService.from_specs(specs, golden=None)
    queries = golden_questions(golden)
    embedder = service.index.semantic.embedder
    for query in queries[:warm_up]:
        service.search(SearchRequest.model_validate({"query": query + " warm-up"}))
    timings: list[float] = []
    embedding: list[float] = []
    ranking: list[float] = []
    for round_ in range(rounds):
        for query in queries:
            text = f"{query} ({round_})" if round_ else query  # a new text: no cache can answer
            service.cache = type(service.cache)()
            start = time.perf_counter()
            service.search(SearchRequest.model_validate({"query": text}))
            timings.append((time.perf_counter() - start) * 1000)
            # the two parts apart: embedding one new query, then ranking with its vector cached
            other = text + " again"
            start = time.perf_counter()
            embedder.embed([other])
            embedding.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            service.index.search(other, "hybrid", 10)
            ranking.append((time.perf_counter() - start) * 1000)
    machine = describe()
    return {
        "kind": "tool_search_bench",
        "catalogue": specs,
        "tools": len(service.tools),
        "calls": len(timings),
        "search_mcp_tools_ms": _stats(timings),
        "query_embedding_ms": _stats(embedding),
        "ranking_with_vector_ms": _stats(ranking),
        "load_average": os.getloadavg(),
        "machine": machine,
        "machine_line": one_line(machine),
        "note": "in process, uncached; the machine is shared (see load_average), so these are upper bounds",
    }


def main(specs: list[str], golden: Path, out: Path, rounds: int) -> int:
    record = run(specs, golden, rounds)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    s = record["search_mcp_tools_ms"]
    print(
        f"{record['tools']} tools, {record['calls']} calls: p50 {s['p50']} ms, p95 {s['p95']} ms, p99 {s['p99']} ms"
    )
    print(
        f"query embedding alone: p50 {record['query_embedding_ms']['p50']} ms, p95 {record['query_embedding_ms']['p95']} ms"
    )
    print(
        f"ranking with the vector cached: p50 {record['ranking_with_vector_ms']['p50']} ms, p95 {record['ranking_with_vector_ms']['p95']} ms"
    )
    print(f"load average during the run: {record['load_average']}")
    print(record["machine_line"])
    return 0
