"""coverage.answer on the real index: routing, parallel fan-out, synthesis, failures and errors.

OHIP fees are checked in /work/shared/data/ohip/section_*_extracted.json (named per value);
device and drug facts come from adp.get / odb.get, whose sources are the ADP funding rules
(/work/shared/data/adp/adp_funding_rule.csv, 25% client portion; CEP thresholds in
corpus/off/adp_cep.yaml) and the ODB formulary XML (/work/shared/data/odb/, APIXABAN group 0443).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Faults
from reference_server.runtime import Runtime
from reference_server.tools.adp import get as off_adp_get
from reference_server.tools.base import ToolOutput
from tests.conftest import call, call_error
from tests.test_off_schedule import run_with

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("off_collections")]
THREE_DOMAINS = (
    "My 75-year-old patient is being discharged after 3 days. Can I bill C124 as MRP? "
    "She also needs a walker - what does ADP cover? Is apixaban covered by ODB?"
)


def overlapping(trace: list[dict[str, Any]]) -> bool:
    """Every call started before any other call finished: the windows share a common instant."""
    starts = [t["started_ms"] for t in trace]
    ends = [t["started_ms"] + t["duration_ms"] for t in trace]
    return max(starts) < min(ends)


async def test_three_domains_call_three_tools_in_parallel(client: Client[Any]) -> None:
    out = await call(client, "coverage.answer", {"question": THREE_DOMAINS, "patient": {"age": 75}})
    trace = {t["tool"]: t for t in out["trace"]}
    assert set(trace) == {"schedule.get", "adp.get", "odb.get"}
    assert all(t["error"] is None for t in out["trace"])
    assert overlapping(out["trace"]), out["trace"]
    # each tool got its own part of the question, in its own request shape
    assert trace["schedule.get"]["args"]["codes"] == ["C124"]
    assert "walker" in trace["adp.get"]["args"]["query"]
    assert trace["odb.get"]["args"]["drug"] == "apixaban"
    # section_A_extracted.json A1: C124 'Subsequent visit by the MRP - day of discharge' 61.15
    assert out["decision"] == "billable"
    assert "C124 ($61.15)" in out["summary"]
    assert "walker" in out["summary"] and "75%" in out["summary"]  # ADP 75% / client 25%
    assert "apixaban" in out["summary"].lower() and "ODB benefit" in out["summary"]
    locs = [c["loc"] for h in out["highlights"] for c in h["citations"]]
    assert "C124" in locs
    assert out["provenance_summary"] == "sql+vector"
    assert out["confidence"] >= 0.7 and out["followups"] == []


async def test_overlap_holds_when_every_tool_is_slowed() -> None:
    """With 150 ms injected into every SQL path, sequential calls could not overlap."""
    result = await run_with(
        "coverage.answer", {"question": THREE_DOMAINS}, faults=Faults(sql_delay_ms=150)
    )
    trace = result.structured_content["trace"]
    assert len(trace) == 3 and all(t["duration_ms"] >= 150 for t in trace)
    assert overlapping(trace), trace
    assert result.meta["timings_ms"]["sql"] is None and result.meta["timings_ms"]["vector"] is None


async def test_billing_only_question(client: Client[Any]) -> None:
    result = await client.call_tool(
        "coverage.answer", {"question": "Can I bill C124 for discharge as MRP?"}
    )
    out = result.structured_content
    assert [t["tool"] for t in out["trace"]] == ["schedule.get"]
    assert out["decision"] == "billable"
    # section_GP_extracted.json GP40 C124: 'Limited to one service per hospital admission; not
    # eligible if discharged within 48 hours of admission.'
    assert "48 hours" in out["summary"]
    point = out["highlights"][0]
    assert point["point"].startswith("C124 ") and "$61.15" in point["point"]
    assert any(c["loc"] == "ohip:commentary:mrp-discharge-day" for c in point["citations"])
    assert out["confidence"] >= 0.9 and out["followups"] == []
    timings = result.meta["timings_ms"]
    assert timings["sql"] is None and timings["vector"] is None and timings["total"] > 0


async def test_hints_route_before_keywords(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {
            "question": "What applies here?",
            "hints": {
                "codes": ["C122"],
                "device": {"category": "mobility", "type": "walker"},
                "drug": "apixaban",
            },
            "patient": {"income": 19000},
        },
    )
    trace = {t["tool"]: t for t in out["trace"]}
    assert set(trace) == {"schedule.get", "adp.get", "odb.get"}
    assert trace["schedule.get"]["args"]["codes"] == ["C122"]
    assert trace["adp.get"]["args"] == {
        "device": {"category": "mobility", "type": "walker"},
        "patient_income": 19000.0,
    }
    assert trace["odb.get"]["args"]["drug"] == "apixaban"
    # section_A_extracted.json A1: C122 (day following the admission assessment) 61.15
    assert "C122 ($61.15)" in out["summary"]
    # CEP income check (corpus/off/adp_cep.yaml: single threshold $28,000): client share 0%
    assert "CEP-eligible" in out["summary"]


async def test_device_question_is_eligible(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Does ADP fund a walker for my patient?", "patient": {"income": 50000}},
    )
    assert [t["tool"] for t in out["trace"]] == ["adp.get"]
    assert out["decision"] == "eligible"
    assert out["summary"].startswith("ADP: ")
    assert "above" in out["summary"]  # $50,000 is above the $28,000 single threshold


async def test_drug_question_is_covered_and_plan_caveat(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Is apixaban covered?", "patient": {"plan": "private"}},
    )
    assert [t["tool"] for t in out["trace"]] == ["odb.get"]
    # ODB XML: APIXABAN 2.5mg tab, group 0443 (Eliquis 02377233, Teva-Apixaban 02484994): benefits
    assert out["decision"] == "covered"
    assert "ODB-eligible" in out["summary"]


async def test_no_domain_needs_more_info(client: Client[Any]) -> None:
    out = await call(client, "coverage.answer", {"question": "Is this covered?"})
    assert out["decision"] == "needs_more_info"
    assert out["trace"] == [] and out["confidence"] == 0.0
    assert out["provenance_summary"] == "none"
    assert out["followups"] and "billing" in out["followups"][0]["ask"]


async def test_schedule_conflicts_are_merged(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Can I bill B991 for a second person at a home visit?"},
    )
    # B991: 20.00 (section_C C6, J6, M24, S29) vs 27.50 (section_A A119, S29, Y6)
    conflict = next(c for c in out["conflicts"] if "B991.fee" in c["field"])
    assert conflict["field"] == "schedule.get: B991.fee"


async def test_failing_domain_tool_is_a_trace_entry_not_a_failed_answer(
    client: Client[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(rt: Runtime, req: Any) -> ToolOutput:
        raise RuntimeError("ADP index unavailable")

    monkeypatch.setattr(off_adp_get.TOOL, "run", broken)
    out = await call(client, "coverage.answer", {"question": THREE_DOMAINS})
    trace = {t["tool"]: t for t in out["trace"]}
    # the sub-tool's exception is logged; the client sees only that it failed, and its error id
    assert re.fullmatch(r"internal error \(error id [0-9a-f]{12}\)", trace["adp.get"]["error"])
    assert "ADP index unavailable" not in json.dumps(out)
    assert trace["schedule.get"]["error"] is None and trace["odb.get"]["error"] is None
    assert "adp.get could not answer" in out["summary"]
    assert out["decision"] == "billable"  # billing is the primary intent and still answered
    # the failed tool counts 0 in the average: two healthy tools at most 2/3
    assert out["confidence"] <= 0.67
    assert any("adp.get failed" in f["reason"] for f in out["followups"])


async def test_degraded_paths_lower_confidence_and_ask_followups() -> None:
    result = await run_with(
        "coverage.answer",
        {"question": "Can I bill C124 for discharge as MRP? Is apixaban covered?"},
        faults=Faults(sql_fail=True),
    )
    out = result.structured_content
    assert not result.is_error
    assert out["provenance_summary"] == "vector"
    # the follow-ups follow the tools' spec evidence score (seed 002's 0.7), kept in the basis
    assert out["confidence_basis"]["spec_score"] < 0.7 and out["followups"]
    # the schedule passages still carry the fee: section_A_extracted.json A1 C124 61.15
    assert "C124 ($61.15)" in out["summary"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "'question': this argument is required"),
        ({"question": ""}, "question"),
        ({"question": "x", "patient": {"setting": "home"}}, "'acute', 'community' or 'ltc'"),
        ({"question": "x", "patient": {"plan": "OHIP"}}, "'ODB', 'private' or 'none'"),
        ({"question": "x", "patient": {"age": -1}}, "patient.age"),
        ({"question": "x", "hints": {"codes": ["124"]}}, "hints.codes.0"),
        (
            {"question": "x", "hints": {"device": {"category": "boats", "type": "x"}}},
            "hints.device.category",
        ),
        ({"question": "x", "hints": {"device": {"category": "mobility"}}}, "hints.device.type"),
        ({"question": "x", "extra": 1}, "unknown argument"),
    ],
)
async def test_input_errors(client: Client[Any], args: dict[str, Any], expected: str) -> None:
    assert expected in await call_error(client, "coverage.answer", args)


async def test_limited_use_code_question_is_a_drug_question_only(client: Client[Any]) -> None:
    out = await call(
        client, "coverage.answer", {"question": "What is the Limited Use code for Jardiance?"}
    )
    assert [t["tool"] for t in out["trace"]] == ["odb.get"]


# -- routing: the highest scoring domain wins, the others only when named ----------------------


async def test_context_words_alone_do_not_call_another_domain(client: Client[Any]) -> None:
    # 'discharge' leans towards billing but names nothing to bill: the walker question is ADP's
    out = await call(
        client,
        "coverage.answer",
        {"question": "After her hospital discharge, what does ADP cover for a walker?"},
    )
    assert [t["tool"] for t in out["trace"]] == ["adp.get"]


async def test_a_named_second_domain_is_still_called(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Does ADP cover a walker, and can I bill a house call visit for it?"},
    )
    assert {t["tool"] for t in out["trace"]} == {"adp.get", "schedule.get"}


async def test_unknown_fee_code_is_needs_more_info_naming_it(client: Client[Any]) -> None:
    out = await call(client, "coverage.answer", {"question": "Can I bill Z999 for this visit?"})
    assert out["decision"] == "needs_more_info"
    assert "does not list Z999" in out["summary"]
    assert out["trace"][0]["error"] is None  # an answer from schedule.get, not a failure


# -- patient context: ODB eligibility (corpus/off/odb_policy.yaml 'Who the ODB program covers') --


@pytest.mark.parametrize(
    ("patient", "decision", "words"),
    [
        ({"age": 70}, "covered", "65 or over"),
        ({"age": 45, "setting": "ltc"}, "covered", "long-term care"),
        ({"age": 19, "plan": "none"}, "covered", "OHIP+"),
        ({"age": 19, "plan": "private"}, "needs_more_info", "private plan pays"),
        ({"age": 45, "setting": "community"}, "needs_more_info", "not ODB-eligible by age"),
    ],
)
async def test_age_setting_and_plan_decide_odb_eligibility(
    client: Client[Any], patient: dict[str, Any], decision: str, words: str
) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Is Januvia covered by ODB?", "patient": patient},
    )
    assert out["decision"] == decision and words in out["summary"]
    cited = [c["chunk_id"] for h in out["highlights"] for c in h["citations"]]
    assert "odb:policy:7" in cited


async def test_setting_adds_billing_context(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "Can I bill an assessment?", "patient": {"setting": "ltc"}},
    )
    assert out["trace"][0]["args"]["q"].endswith("(long-term care)")


async def test_social_assistance_in_another_sentence_reaches_adp_get(client: Client[Any]) -> None:
    out = await call(
        client,
        "coverage.answer",
        {"question": "My patient is on ODSP. She needs a walker - what does ADP cover?"},
    )
    (adp,) = [t for t in out["trace"] if t["tool"] == "adp.get"]
    # The device sentence leaves ODSP out; the structured field carries it (core manual 310.00).
    assert adp["args"]["social_assistance"] == "odsp"
