"""The dual-path guarantees, proven through injected faults (configuration only, never arguments).

Timing assertions are structural (the total is below the sum of the paths; a hung path is cut
at its timeout), with generous margins: speed itself is measured by the benchmarks.
"""

from __future__ import annotations

from typing import Any

from reference_server.config import Faults
from tests.conftest import run_fresh

QUERY = {"query": "documentation requirements for virtual care", "n_results": 5}


async def run_with(tool: str, args: dict[str, Any], **overrides: Any) -> Any:
    return await run_fresh(tool, args, warm_up=True, **overrides)


async def test_paths_run_concurrently() -> None:
    result = await run_with(
        "opa.search_sections", QUERY, faults=Faults(sql_delay_ms=200, vector_delay_ms=200)
    )
    t = result.meta["timings_ms"]
    assert t["sql"] >= 200 and t["vector"] >= 200
    assert t["total"] < t["sql"] + t["vector"] - 100, t  # sequential would be >= 400 ms
    assert t["total"] < 380, t
    assert result.structured_content["provenance"] == ["sql", "vector"]


async def test_failed_vector_path_gives_partial_answer_with_lower_confidence() -> None:
    healthy = await run_with("opa.search_sections", QUERY)
    degraded = await run_with("opa.search_sections", QUERY, faults=Faults(vector_fail=True))
    assert not degraded.is_error
    assert degraded.structured_content["provenance"] == ["sql"]
    assert degraded.structured_content["sections"]
    assert degraded.structured_content["confidence"] < healthy.structured_content["confidence"]
    assert "vector" in degraded.meta["path_errors"]


async def test_failed_sql_path_falls_back_to_vector_base_confidence() -> None:
    degraded = await run_with(
        "opa.policy_check", {"query": "consent to treatment capacity"}, faults=Faults(sql_fail=True)
    )
    out = degraded.structured_content
    assert out["provenance"] == ["vector"]
    assert out["policies"] and 0.6 <= out["confidence_basis"]["spec_score"] <= 0.75


async def test_hung_path_is_cut_at_its_timeout() -> None:
    result = await run_with(
        "opa.search_sections", QUERY, faults=Faults(vector_delay_ms=10_000), vector_timeout_ms=300
    )
    t = result.meta["timings_ms"]
    assert 300 <= t["vector"] < 900, t
    assert t["total"] < 900, t
    assert result.structured_content["provenance"] == ["sql"]
    assert "timeout" in result.meta["path_errors"]["vector"]


async def test_both_paths_failing_degrades_to_empty_answer_not_crash() -> None:
    result = await run_with(
        "opa.search_sections", QUERY, faults=Faults(sql_fail=True, vector_fail=True)
    )
    assert not result.is_error
    assert result.structured_content["provenance"] == []
    assert result.structured_content["confidence"] == 0.0
    assert result.structured_content["sections"] == []


async def test_keyword_mode_configuration_skips_vector_path() -> None:
    result = await run_with("opa.search_sections", QUERY, mode="keyword")
    assert result.structured_content["provenance"] == ["sql"]
    assert result.meta["timings_ms"]["vector"] is None


async def test_freshness_falls_back_to_vector_metadata_when_sql_fails() -> None:
    result = await run_with(
        "opa.freshness_probe", {"source_orgs": ["ontario_health"]}, faults=Faults(sql_fail=True)
    )
    out = result.structured_content
    assert out["provenance"] == ["vector"]
    stale = {d["document_id"]: d["staleness"] for d in out["stale_documents"]}
    assert stale["ontario-health-ocsp-cytology-guidelines-2016"] == "superseded"


async def test_program_lookup_answers_from_vector_metadata_when_sql_fails() -> None:
    result = await run_with(
        "opa.program_lookup",
        {"program": "cervical", "patient_age": 30},
        faults=Faults(sql_fail=True),
    )
    out = result.structured_content
    assert out["provenance"] == ["vector"] and 0.6 <= out["confidence_basis"]["spec_score"] <= 0.75
    assert out["recommendations"] and "Cervical" in out["program"]


async def test_clinical_tools_answers_from_vector_metadata_when_sql_fails() -> None:
    result = await run_with(
        "opa.clinical_tools", {"condition": "dementia"}, faults=Faults(sql_fail=True)
    )
    out = result.structured_content
    assert out["provenance"] == ["vector"]
    assert out["tools"][0]["tool_id"] == "cep-dementia-diagnosis"
