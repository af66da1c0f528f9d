"""Per-tool in-process latency. Run with `make bench` (benchmarks are disabled in `make test`).

Each tool rotates through several realistic requests so one cached plan does not flatter it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.bench.conftest import SyncClient, record

pytestmark = pytest.mark.bench

REQUESTS: dict[str, list[dict[str, Any]]] = {
    "opa.search_sections": [
        {"query": "cervical screening HPV testing"},
        {"query": "documentation requirements for virtual care"},
        {"query": "closing a medical practice patient records", "source_org": "cpso"},
        {"query": "reprocessing reusable medical devices"},
        {"query": "breast screening high risk MRI", "n_results": 10},
    ],
    "opa.get_section": [
        {"section_id": "cpso-virtual-care:s02", "include_children": True},
        {"section_id": "cpso-consent-to-treatment:s01"},
        {"section_id": "ontario-health-ocsp-hpv-screening:s02"},
    ],
    "opa.policy_check": [
        {"query": "virtual care documentation"},
        {"query": "consent to treatment capacity"},
        {"query": "prescribing opioids", "policy_level": "expectation"},
    ],
    "opa.program_lookup": [
        {"program": "cervical", "query_type": "intervals", "patient_age": 30},
        {"program": "breast", "patient_age": 45},
        {"program": "colorectal", "query_type": "pathway"},
        {"program": "lung", "info_needed": ["eligibility"]},
    ],
    "opa.ipac_guidance": [
        {"topic": "reprocessing", "specific_item": "spirometer"},
        {"topic": "ppe", "specific_item": "N95 respirator"},
        {"topic": "hand_hygiene"},
        {"topic": "environmental"},
    ],
    "opa.freshness_probe": [{}, {"source_orgs": ["cpso"]}, {"topics": ["cervical screening"]}],
    "opa.clinical_tools": [
        {"condition": "dementia"},
        {"feature_type": "algorithm"},
        {"condition": "chronic pain", "include_sections": True},
        {"category": "mental_health"},
    ],
    "schedule.get": [
        {"q": "discharge day billing as MRP", "codes": ["C124"]},
        {"q": "ED consultation by an internist"},
        {"q": "house call premiums for an elderly patient"},
        {"q": "psychotherapy time units", "top_k": 10},
    ],
    "adp.get": [
        {"query": "power wheelchair funding", "patient_income": 19000},
        {"query": "Are scooter batteries and motor repairs covered?"},
        {"device": {"category": "mobility", "type": "walker"}},
        {"query": "speech generating device for a patient with ALS"},
    ],
    "odb.get": [
        {"drug": "Ozempic"},
        {"q": "cheapest covered statin", "drug_class": "statin"},
        {"drug": "Januvia", "check_alternatives": True},
        {"drug": "Jardiance", "include_lu": True},
    ],
    "source.passages": [
        {
            "chunk_ids": ["cpso-virtual-care:s02", "ohip:commentary:mrp-discharge-day"],
            "highlight_terms": ["virtual"],
        },
        {"chunk_ids": ["cpso-consent-to-treatment:s02:c1"]},
    ],
    "coverage.answer": [
        {"question": "Can I bill C124 as MRP for a discharge after 3 days?"},
        {"question": "My 75 year old patient needs a walker and takes Ozempic; is it covered?"},
        {"question": "Is Januvia covered and is there a cheaper generic?"},
    ],
}


@pytest.mark.parametrize("tool", sorted(REQUESTS))
def test_tool_latency(benchmark: Any, sync_client: SyncClient, tool: str) -> None:
    available = {
        t.name for t in sync_client.loop.run_until_complete(sync_client.client.list_tools())
    }
    if tool not in available:
        pytest.fail(f"{tool} is not registered")
    cycle = itertools.cycle(REQUESTS[tool])
    for args in REQUESTS[tool]:  # warm each request shape once
        sync_client.call(tool, args)
    benchmark.pedantic(
        lambda: sync_client.call(tool, next(cycle)), rounds=60, iterations=1, warmup_rounds=0
    )
    if benchmark.stats is not None:
        record(tool, list(benchmark.stats.stats.data))
