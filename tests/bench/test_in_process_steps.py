"""The bench's in-process steps run on their own (`pytest -m bench tests/bench`; `make bench`
calls the same functions): every tool answers its latency requests without a tool error and
within the specs' ceilings, and, when a distinct-query mix is named
(OCM_DISTINCT_MIX, `make bench-cpu`), every distinct call answers without a tool error. The
figures are printed (run with -s); the tight `inprocess` bars are the bench's to judge, scaled for
the machine by its reference workload, not this test's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from load import cpu_per_call, inprocess_latency
from load.profile_calls import InProcessServer, reference_cpu_ms
from load.slo import evaluate, load_slo, miss_table
from load.stage_clock import StageClock
from load.taskmix import TaskMix

pytestmark = pytest.mark.bench


@pytest.fixture(scope="module")
def server() -> Iterator[InProcessServer]:
    s = InProcessServer(StageClock(), embed_cache_size=0)
    yield s
    s.close()


def test_every_tool_answers_its_requests_within_the_spec_ceilings(
    server: InProcessServer,
) -> None:
    requests = inprocess_latency.load_requests()
    records, problems = inprocess_latency.measure(server, requests)
    print("\n" + inprocess_latency.table(records))
    assert not problems, problems[:5]
    assert {r.tool for r in records} == set(requests)
    misses = evaluate(records, load_slo().hard_only())
    assert not misses, miss_table(misses, title="SLO (inprocess)")


def test_every_distinct_call_answers_without_a_tool_error(server: InProcessServer) -> None:
    path = Path(os.environ.get("OCM_DISTINCT_MIX", ""))
    if not path.is_file():
        pytest.skip("no distinct-query mix: `make bench-cpu` builds one (OCM_DISTINCT_MIX)")
    calls = int(os.environ.get("OCM_CPU_CALLS", cpu_per_call.CALLS))
    figures, failed = cpu_per_call.measure(
        server, TaskMix.from_examples(path), reference_cpu_ms(), calls
    )
    for name, f in sorted(figures.items()):
        print(f"{name:36} {f.calls:4d} calls  median {f.median_ms:7.2f} ms  x{f.median_ratio}")
    assert figures and not failed, failed[:5]
