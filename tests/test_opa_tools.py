"""The seven opa.* tools on the real corpus: happy paths, filters and errors.

Expected values come from the committed corpus (reference_server/corpus/opa/), whose
facts were derived from ../shared/data/opa/ (CPSO and CEP) or written from public
knowledge (Ontario Health, MOH), as each YAML file's `derived_from` records.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Settings
from tests.conftest import call, call_error

# -- opa.search_sections -------------------------------------------------------------------


async def test_search_cervical_hpv_current_guidance_first(client: Client[Any]) -> None:
    out = await call(
        client, "opa.search_sections", {"query": "cervical screening HPV testing interval"}
    )
    docs = [s["document_id"] for s in out["sections"]]
    assert docs[0] in {"ontario-health-ocsp-hpv-screening", "ontario-health-hpv-testing-hub"}
    assert (
        "ontario-health-ocsp-cytology-guidelines-2016" not in docs
    )  # superseded excluded by default
    assert out["provenance"] == ["sql", "vector"]
    assert 0.9 <= out["confidence"] <= 1.0
    assert len(out["citations"]) == len(out["sections"])


async def test_search_include_superseded_ranks_superseded_below_current(
    client: Client[Any],
) -> None:
    out = await call(
        client,
        "opa.search_sections",
        {
            "query": "Pap test cytology cervical screening every 3 years",
            "include_superseded": True,
            "n_results": 20,
        },
    )
    ranked = [s["document_id"] for s in out["sections"]]
    assert "ontario-health-ocsp-cytology-guidelines-2016" in ranked
    superseded = [s for s in out["sections"] if s["is_superseded"]]
    assert superseded and {s["document_id"] for s in superseded} <= {
        "ontario-health-ocsp-cytology-guidelines-2016",
        "ontario-health-self-collected-hpv-follow-up-2025",  # the superseded cervical documents
    }


async def test_search_source_org_filter(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.search_sections",
        {"query": "consent documentation", "source_org": "cpso", "n_results": 10},
    )
    assert out["sections"] and {s["source_org"] for s in out["sections"]} == {"cpso"}


async def test_search_document_type_filter(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.search_sections",
        {"query": "virtual care", "document_type": "advice", "n_results": 10},
    )
    assert out["sections"] and all(s["document_id"].endswith("-advice") for s in out["sections"])


async def test_search_topics_filter(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.search_sections",
        {"query": "screening", "topics": ["colonoscopy"], "n_results": 10},
    )
    assert out["sections"] and all(
        any("colonoscopy" in t for t in s["topics"]) for s in out["sections"]
    )


async def test_search_n_results_and_total_matches(client: Client[Any]) -> None:
    out = await call(
        client, "opa.search_sections", {"query": "medical records retention", "n_results": 3}
    )
    assert len(out["sections"]) == 3
    assert out["total_matches"] >= 3


@pytest.mark.parametrize(
    "mode,paths", [("keyword", ["sql"]), ("vector", ["vector"]), ("hybrid", ["sql", "vector"])]
)
async def test_search_modes_use_the_right_paths(
    client: Client[Any], mode: str, paths: list[str]
) -> None:
    out = await call(
        client, "opa.search_sections", {"query": "virtual care documentation", "search_mode": mode}
    )
    assert out["provenance"] == paths
    assert out["sections"][0]["document_id"].startswith("cpso-virtual-care")
    if mode == "vector":
        assert out["confidence_basis"]["spec_score"] <= 0.75  # vector-only base 0.6 + at most 0.15


async def test_search_cpso_virtual_care_documentation(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.search_sections",
        {"query": "What are the documentation requirements for virtual care?"},
    )
    top = out["sections"][0]
    assert top["document_id"] in {"cpso-virtual-care", "cpso-virtual-care-advice"}
    assert top["source_url"].startswith("https://www.cpso.on.ca/")


@pytest.mark.parametrize(
    "args,field",
    [
        ({"query": "x", "n_results": 21}, "n_results"),
        ({"query": "x", "n_results": 0}, "n_results"),
        ({"query": "x", "source_org": "cdc"}, "source_org"),
        ({"query": "x", "search_mode": "semantic"}, "search_mode"),
        ({"query": "x", "document_type": "memo"}, "document_type"),
        ({"query": ""}, "query"),
        ({}, "query"),
        ({"query": "x", "bogus": 1}, "bogus"),
    ],
)
async def test_search_bad_input_names_field(
    client: Client[Any], args: dict[str, Any], field: str
) -> None:
    message = await call_error(client, "opa.search_sections", args)
    assert f"'{field}'" in message


async def test_search_bad_enum_lists_allowed_values(client: Client[Any]) -> None:
    message = await call_error(client, "opa.search_sections", {"query": "x", "source_org": "cdc"})
    for org in ("cpso", "ontario_health", "cep", "pho", "moh"):
        assert org in message


# -- opa.get_section -----------------------------------------------------------------------


async def test_get_section_child_with_parent_and_citation(client: Client[Any]) -> None:
    search = await call(
        client,
        "opa.search_sections",
        {"query": "virtual care informed consent", "source_org": "cpso"},
    )
    child_id = next(s["section_id"] for s in search["sections"] if s["chunk_type"] == "child")
    out = await call(client, "opa.get_section", {"section_id": child_id})
    assert out["section"]["chunk_type"] == "child"
    assert out["parent"]["section_id"] == child_id.rsplit(":", 1)[0]
    assert out["document"]["source_org"] == "cpso"
    assert out["citation"]["text"].startswith("College of Physicians and Surgeons of Ontario. ")
    assert out["citation"]["url"] == f"{out['document']['source_url']}#{out['citation']['anchor']}"
    assert out["citation"]["anchor"] and " " not in out["citation"]["anchor"]


async def test_get_section_parent_with_children(client: Client[Any]) -> None:
    out = await call(
        client, "opa.get_section", {"section_id": "cpso-virtual-care:s02", "include_children": True}
    )
    assert out["section"]["chunk_type"] == "parent" and out["parent"] is None
    assert len(out["children"]) >= 2
    assert all(c["section_id"].startswith("cpso-virtual-care:s02:c") for c in out["children"])
    assert out["provenance"] == ["sql", "vector"] and out["conflicts"] == []


async def test_get_section_without_document_metadata(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.get_section",
        {"section_id": "cpso-virtual-care:s01", "include_document_metadata": False},
    )
    assert out["document"] is None


async def test_get_section_unknown_id_is_not_found(client: Client[Any]) -> None:
    message = await call_error(client, "opa.get_section", {"section_id": "cpso-nothing:s99"})
    assert "Not found" in message and "cpso-nothing:s99" in message


# -- opa.policy_check ----------------------------------------------------------------------


async def test_policy_check_virtual_care_expectations_first(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.policy_check",
        {"query": "documentation requirements for virtual care", "n_results": 6},
    )
    levels = [p["policy_level"] for p in out["policies"]]
    assert levels == sorted(levels, key=lambda lv: lv != "expectation")
    assert out["expectations_found"] == levels.count("expectation")
    assert out["advice_found"] == levels.count("advice")
    assert any("Virtual Care" in p["policy_title"] for p in out["policies"])
    assert all(p["source_url"].startswith("https://www.cpso.on.ca/") for p in out["policies"])


async def test_policy_check_only_advice(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.policy_check",
        {"query": "consent to treatment", "policy_level": "advice", "n_results": 5},
    )
    assert out["policies"] and all(p["policy_level"] == "advice" for p in out["policies"])


async def test_policy_check_without_advice(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.policy_check",
        {"query": "closing a medical practice notice", "include_advice": False, "n_results": 5},
    )
    assert out["policies"] and out["advice_found"] == 0
    assert any(p["policy_title"] == "Closing a Medical Practice" for p in out["policies"])


async def test_policy_check_default_three_results(client: Client[Any]) -> None:
    out = await call(
        client, "opa.policy_check", {"query": "continuity of care test results follow-up"}
    )
    assert len(out["policies"]) == 3


async def test_policy_check_bad_level(client: Client[Any]) -> None:
    message = await call_error(client, "opa.policy_check", {"query": "x", "policy_level": "rule"})
    assert "'policy_level'" in message and "expectation" in message


# -- opa.program_lookup --------------------------------------------------------------------


async def test_program_cervical_hpv_for_30_year_old(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.program_lookup",
        {"program": "cervical", "query_type": "intervals", "patient_age": 30},
    )
    assert "Cervical" in out["program"]
    assert out["effective_date"] == "2025-03-03"
    assert any("5 years" in (r["frequency"] or "") for r in out["recommendations"])
    assert out["patient_specific"]["age"] == 30
    assert "HPV" in out["patient_specific"]["recommendation"]
    assert out["recommendations"][0]["source_section_id"].split(":")[0] in {
        "ontario-health-ocsp-hpv-screening",
        "ontario-health-hpv-testing-hub",
    }


async def test_program_recommendations_name_their_section_publicly(client: Client[Any]) -> None:
    """Each recommendation names its document's official URL and its section's heading, the
    public key another backend can cite too (the source_section_id is this index's own)."""
    out = await call(
        client, "opa.program_lookup", {"program": "HPV testing", "query_type": "pathway"}
    )
    cited = {(r["source_url"], r["section_heading"]) for r in out["recommendations"]}
    assert (
        "https://www.cancercareontario.ca/en/guidelines-advice/cancer-continuum/screening/hpv-hub",
        "Follow-up of Self-Collected HPV Tests",
    ) in cited
    assert all(url.startswith("https://") and heading for url, heading in cited)


async def test_ipac_requirements_name_their_section_publicly(client: Client[Any]) -> None:
    out = await call(
        client, "opa.ipac_guidance", {"topic": "ppe", "specific_item": "N95 respirator"}
    )
    first = out["requirements"][0]
    assert first["source_url"] == (
        "https://www.publichealthontario.ca/-/media/documents/b/2013/bp-clinical-office-practice.pdf"
    )
    assert first["section_heading"] == "Airborne Transmission and Precautions"


async def test_program_breast_high_risk(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.program_lookup",
        {"program": "breast", "patient_age": 35, "risk_factors": ["BRCA1 mutation carrier"]},
    )
    rec = out["patient_specific"]["recommendation"].lower()
    assert "mri" in rec
    assert out["followup"]["referral_process"]


async def test_program_outside_age_range(client: Client[Any]) -> None:
    out = await call(client, "opa.program_lookup", {"program": "colorectal", "patient_age": 40})
    assert out["patient_specific"]["outside_screening_age"] is True
    assert "outside" in out["patient_specific"]["recommendation"].lower()


async def test_program_pathway_has_algorithm_steps(client: Client[Any]) -> None:
    out = await call(
        client, "opa.program_lookup", {"program": "colorectal", "query_type": "pathway"}
    )
    assert out["algorithms"] and out["algorithms"][0]["steps"]
    assert out["guidance_type"] == "pathway"


async def test_program_info_needed_spec_revision_one(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.program_lookup",
        {"program": "lung cancer screening", "info_needed": ["eligibility", "referral"]},
    )
    assert out["eligibility"]["age_criteria"]
    assert out["citations"] and out["citations"][0]["source_org"] == "ontario_health"


async def test_program_without_local_corpus_is_answered_not_refused(client: Client[Any]) -> None:
    out = await call(client, "opa.program_lookup", {"program": "kidney care"})
    # nothing found: the spec's score is 0; the calibrated confidence is the probability that
    # "not in the local corpus" is right (confidence_basis.features.no_answer)
    assert out["in_local_corpus"] is False and out["confidence_basis"]["spec_score"] == 0.0
    assert out["confidence_basis"]["features"]["no_answer"] == 1.0
    assert out["recommendations"] == [] and out["program"] == "kidney care"
    assert any("not in the local corpus" in n and "lung" in n for n in out["notes"])


async def test_program_bad_query_type(client: Client[Any]) -> None:
    message = await call_error(
        client, "opa.program_lookup", {"program": "breast", "query_type": "price"}
    )
    assert "'query_type'" in message and "intervals" in message


# -- opa.ipac_guidance ---------------------------------------------------------------------


async def test_ipac_reprocessing_spirometer(client: Client[Any]) -> None:
    out = await call(
        client, "opa.ipac_guidance", {"topic": "reprocessing", "specific_item": "spirometer"}
    )
    assert out["requirements"], out
    assert {r["level"] for r in out["requirements"]} <= {"must", "should", "may"}
    assert any(r["level"] == "must" for r in out["requirements"])
    text = " ".join(r["text"] for r in out["requirements"]).lower()
    assert "disinfect" in text or "steril" in text
    assert out["references"] and out["references"][0]["url"].startswith(
        "https://www.publichealthontario.ca"
    )
    assert out["checklists"]


async def test_ipac_ppe_n95(client: Client[Any]) -> None:
    out = await call(
        client, "opa.ipac_guidance", {"topic": "ppe", "specific_item": "N95 respirator"}
    )
    text = " ".join(r["text"] for r in out["requirements"]).lower()
    assert "n95" in text


async def test_ipac_without_checklists(client: Client[Any]) -> None:
    out = await call(
        client, "opa.ipac_guidance", {"topic": "environmental", "include_checklists": False}
    )
    assert out["checklists"] == [] and out["requirements"]


async def test_ipac_answer_is_built_from_the_best_n_sections(client: Client[Any]) -> None:
    """A topic's sections grow with the corpus; the answer keeps the best n_sections of them."""
    args = {"topic": "reprocessing", "specific_item": "spirometer"}
    full = await call(client, "opa.ipac_guidance", args)
    assert full["total_sections"] >= 3
    cut = await call(client, "opa.ipac_guidance", {**args, "n_sections": 2})
    assert cut["total_sections"] == full["total_sections"]
    kept = list(dict.fromkeys(r["source_section_id"] for r in cut["requirements"]))
    assert len(kept) <= 2
    best = list(dict.fromkeys(r["source_section_id"] for r in full["requirements"]))
    assert kept == best[: len(kept)]  # the best-ranked sections, in the same order
    message = await call_error(client, "opa.ipac_guidance", {**args, "n_sections": 0})
    assert "'n_sections'" in message


def test_ipac_reads_what_its_answer_needs_of_a_topic(settings: Settings) -> None:
    """The SQL path reads twice the answer's sections of a topic (at least LIMIT, at most
    TOPIC_LIMIT), best keyword match first, not every section a grown topic holds."""
    from reference_server.retrieval import opa_ipac
    from reference_server.retrieval.sql import SqlClient

    assert opa_ipac.topic_limit(12) == 24
    assert opa_ipac.topic_limit(1) == opa_ipac.LIMIT
    assert opa_ipac.topic_limit(50) == opa_ipac.TOPIC_LIMIT
    sql = SqlClient(settings.opa_db)
    every = opa_ipac.ipac_sections(sql, "reprocessing", "cleaning spirometer")
    few = opa_ipac.ipac_sections(sql, "reprocessing", "cleaning spirometer", limit=3)
    assert len(every) > 3 and few == every[:3]


async def test_ipac_bad_topic(client: Client[Any]) -> None:
    message = await call_error(client, "opa.ipac_guidance", {"topic": "vaccines"})
    assert "'topic'" in message and "hand_hygiene" in message


# -- opa.freshness_probe -------------------------------------------------------------------


async def test_freshness_tiers(client: Client[Any]) -> None:
    out = await call(client, "opa.freshness_probe", {})
    by_id = {d["document_id"]: d for d in out["stale_documents"]}
    assert by_id["ontario-health-ocsp-cytology-guidelines-2016"]["staleness"] == "superseded"
    assert by_id["ontario-health-coloncancercheck"]["staleness"] == "likely_stale"  # 2019
    potentially = [d for d in out["stale_documents"] if d["staleness"] == "potentially_stale"]
    assert potentially and all(365 < d["days_old"] <= 730 for d in potentially)
    assert out["documents_checked"] > len(out["stale_documents"])  # some documents are fresh
    assert out["stale_documents"][0]["staleness"] == "superseded"
    assert any("superseded" in r for r in out["recommendations"])
    assert out["as_of"] == "2026-11-01"


async def test_freshness_by_document_and_org(client: Client[Any]) -> None:
    out = await call(client, "opa.freshness_probe", {"document_ids": ["cpso-virtual-care"]})
    assert out["documents_checked"] == 1
    out = await call(client, "opa.freshness_probe", {"source_orgs": ["cep"]})
    assert all(d["source_org"] == "cep" for d in out["stale_documents"])


async def test_freshness_topics(client: Client[Any]) -> None:
    out = await call(client, "opa.freshness_probe", {"topics": ["cervical screening"]})
    assert {d["document_id"] for d in out["stale_documents"]} >= {
        "ontario-health-ocsp-cytology-guidelines-2016"
    }


async def test_freshness_lists_the_n_most_urgent(client: Client[Any]) -> None:
    """The whole-corpus report keeps the n_results most urgent entries; totals count them all."""
    full = await call(client, "opa.freshness_probe", {})
    assert full["total_stale"] == len(full["stale_documents"]) > 3
    assert full["total_provenance_issues"] == len(full["provenance_issues"]) > 1
    cut = await call(client, "opa.freshness_probe", {"n_results": 3})
    assert cut["stale_documents"] == full["stale_documents"][:3]
    assert cut["provenance_issues"] == full["provenance_issues"][:3]
    assert (cut["total_stale"], cut["documents_checked"]) == (
        full["total_stale"],
        full["documents_checked"],
    )


async def test_freshness_unknown_document(client: Client[Any]) -> None:
    message = await call_error(client, "opa.freshness_probe", {"document_ids": ["no-such-doc"]})
    assert "Not found" in message and "no-such-doc" in message


async def test_freshness_check_web_disabled_by_default(client: Client[Any]) -> None:
    out = await call(
        client, "opa.freshness_probe", {"document_ids": ["cpso-virtual-care"], "check_web": True}
    )
    assert out["potential_updates"] == []
    assert any("disabled by configuration" in r for r in out["recommendations"])


# -- opa.clinical_tools --------------------------------------------------------------------


async def test_clinical_tools_dementia(client: Client[Any]) -> None:
    out = await call(
        client, "opa.clinical_tools", {"condition": "dementia", "include_sections": True}
    )
    top = out["tools"][0]
    assert top["tool_id"] == "cep-dementia-diagnosis"
    assert top["key_features"]["assessment_algorithm"] == {
        "available": True,
        "url": "https://tools.cep.health/tool/dementia-diagnosis/#algorithm",
    }
    assert "MoCA" in top["key_features"]["screening_tools"]
    assert top["sections"] and all(s["url"].startswith(top["url"]) for s in top["sections"])
    assert out["total_tools"] == len(out["tools"]) >= 2  # BPSD too


async def test_clinical_tools_by_feature_and_category(client: Client[Any]) -> None:
    out = await call(client, "opa.clinical_tools", {"feature_type": "algorithm"})
    assert out["tools"] and all(
        t["key_features"]["assessment_algorithm"]["available"] for t in out["tools"]
    )
    out = await call(client, "opa.clinical_tools", {"category": "chronic_disease"})
    names = {t["name"] for t in out["tools"]}
    assert any("COPD" in n or "Obstructive" in n for n in names) and any(
        "Heart Failure" in n for n in names
    )
    assert all(t["category"] == "chronic_disease" for t in out["tools"])


async def test_clinical_tools_by_name_without_sections(client: Client[Any]) -> None:
    out = await call(client, "opa.clinical_tools", {"tool_name": "insomnia"})
    assert [t["tool_id"] for t in out["tools"]] == ["cep-management-of-chronic-insomnia"]
    assert out["tools"][0]["sections"] == []


async def test_clinical_tools_keeps_the_best_n_results(client: Client[Any]) -> None:
    """A feature or category lists every tool it has; the answer keeps the best n_results."""
    full = await call(client, "opa.clinical_tools", {"feature_type": "calculator", "n_results": 50})
    assert full["total_tools"] == len(full["tools"]) >= 3
    cut = await call(client, "opa.clinical_tools", {"feature_type": "calculator", "n_results": 2})
    assert [t["tool_id"] for t in cut["tools"]] == [t["tool_id"] for t in full["tools"][:2]]
    assert cut["total_tools"] == full["total_tools"]
    message = await call_error(client, "opa.clinical_tools", {"n_results": 51})
    assert "'n_results'" in message and "50" in message


async def test_clinical_tools_no_match_is_empty_not_error(client: Client[Any]) -> None:
    out = await call(client, "opa.clinical_tools", {"condition": "zzzz-unknown"})
    assert out["tools"] == [] and out["total_tools"] == 0


async def test_clinical_tools_bad_feature(client: Client[Any]) -> None:
    message = await call_error(client, "opa.clinical_tools", {"feature_type": "video"})
    assert "'feature_type'" in message and "calculator" in message


async def test_freshness_answers_do_not_depend_on_earlier_calls(client: Client[Any]) -> None:
    """Documents are decoded once per process and shared between calls: a filtered call in
    between must not change what the whole-corpus probe answers."""
    first = await call(client, "opa.freshness_probe", {})
    await call(client, "opa.freshness_probe", {"topics": ["cervical screening"], "n_results": 2})
    await call(client, "opa.freshness_probe", {"document_ids": ["cpso-virtual-care"]})
    again = await call(client, "opa.freshness_probe", {})
    assert again == first
