"""adp.get on the real corpus: the spec's five device scenarios, options, errors and degraded paths.

Expected values come from reference_server/corpus/off/ (adp_funding_rule.csv, adp_exclusion.csv,
adp_sections.jsonl, adp_cep.yaml), derived by `ocm ingest off` from
../shared/data/adp/ (adp_funding_rule.csv, adp_exclusion.csv, adp_extraction.json); each value
below names the corpus row and the shared-data row it was checked against.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, get_args

import pytest
from fastmcp import Client, FastMCP

from reference_server.config import Faults
from reference_server.retrieval import adp_manuals
from reference_server.tools.adp import get as off_adp_get
from tests.conftest import call, call_error, load_collections, run_fresh

CORPUS = Path(__file__).resolve().parents[1] / "reference_server" / "corpus" / "off"

TOOL = "adp.get"
CATEGORIES = get_args(off_adp_get.Category)


@pytest.fixture(scope="module", autouse=True)
def _warm_adp(server: FastMCP) -> None:
    load_collections(server, [adp_manuals.COLLECTION])


async def run_with(args: dict[str, Any], **overrides: Any) -> Any:
    return await run_fresh(TOOL, args, collections=[adp_manuals.COLLECTION], **overrides)


def locs(out: dict[str, Any]) -> list[str]:
    return [c["loc"] for c in out["citations"]]


# -- the spec's clinical scenarios -----------------------------------------------------------


async def test_power_wheelchair_cep_at_19000_is_eligible_with_zero_client_share(
    client: Client[Any],
) -> None:
    out = await call(
        client, TOOL, {"query": "Is a power wheelchair covered for a patient with income $19,000?"}
    )
    assert out["provenance"] == ["sql", "vector"]
    assert out["eligibility"]["other_criteria"]["device_type"] == "power_wheelchair"
    # adp_cep.yaml thresholds.single = 28000 (hand-written from the project spec, adp.get step 7;
    # not in ../shared/data/adp, where "CEP" is the Central Equipment Pool).
    assert out["cep"] == {"income_threshold": 28000.0, "eligible": True, "client_share": 0.0}
    # adp_funding_rule.csv F004 (mobility 705, 25/75) <- ../shared/data/adp/adp_funding_rule.csv
    # rule_id 49 (mobility 705): "The Program will pay 75 percent (75%) of the Approved Price".
    assert out["funding"]["adp_contribution"] == 75.0
    assert out["funding"]["client_share_percent"] == 0.0  # CEP-eligible: 25% client share -> 0%
    assert "adp:mobility:Section 705" in locs(out)
    assert "adp:cep:thresholds" in locs(out)
    assert "CEP-eligible" in out["summary"]
    assert out["interpretation_notes"]["household"].startswith("Household 'single' assumed")
    assert out["confidence"] >= 0.9


async def test_scooter_batteries_and_motor_repair_are_excluded(client: Client[Any]) -> None:
    out = await call(
        client,
        TOOL,
        {"query": "3-year-old scooter needs motor repair and new batteries - what's covered?"},
    )
    other = out["eligibility"]["other_criteria"]
    assert other["device_type"] == "scooter" and other["category"] == "mobility"
    assert other["flagged_exclusions"] == ["batteries", "repairs_maintenance"]
    # adp_exclusion.csv X003/X004 (mobility 225, p.14) <- ../shared/data/adp/adp_extraction.json
    # mobility section 225 "Repairs/Batteries" and adp_funding_rule.csv rule_id 40 (mobility 225:
    # "ADP does not provide funding towards the cost of repairs and/or maintenance and/or batteries").
    assert out["exclusions"][0].startswith("Batteries not covered (adp:mobility:Section 225, p.14")
    assert out["exclusions"][1].startswith(
        "Repairs and maintenance not covered (adp:mobility:Section 225, p.14"
    )
    assert out["funding"]["repair_coverage"].startswith("Not covered")
    assert "adp:mobility:Section 225" in out["funding"]["repair_coverage"]
    assert "does not cover batteries and repairs" in out["summary"]
    assert {"loc": "adp:mobility:Section 225", "page": 14} in [
        {"loc": c["loc"], "page": c["page"]} for c in out["citations"]
    ]


async def test_sgd_is_a_communication_aid_and_no_fast_track_is_described(
    client: Client[Any],
) -> None:
    out = await call(
        client,
        TOOL,
        {"query": "Is there a fast-track for a speech generating device (SGD) for my ALS patient?"},
    )
    other = out["eligibility"]["other_criteria"]
    assert other["category"] == "comm_aids" and other["device_type"] == "speech_generating_device"
    # ../shared/data/adp/adp_extraction.json has no fast-track/expedited wording in any of its 505
    # sections (searched); the tool says so rather than inventing one.
    assert other["fast_track"].startswith("No fast-track or expedited process is described")
    assert "No fast-track" in out["summary"]
    # adp_sections.jsonl adp:comm_aids:205 (p.21) lists "speech generating devices SGDs/VOCAs"
    # <- adp_extraction.json comm_aids section 205 "Communication Aids".
    assert "adp:comm_aids:Section 205" in locs(out)
    # adp_funding_rule.csv F009 (comm_aids 705, 25/75) <- shared adp_funding_rule.csv rule_id 77
    # (comm_aids 705: "the ADP will pay 75 percent (75%) of the Approved Price").
    assert (
        out["funding"]["adp_contribution"] == 75.0
        and out["funding"]["client_share_percent"] == 25.0
    )
    assert locs(out)[0] == "adp:comm_aids:Section 705"
    # adp_funding_rule.csv F005 (comm_aids 115.01 lease) <- shared rule_id 54: client portion
    # (25 percent) or the CEP annual lease fee.
    assert "adp:comm_aids:Section 115.01" in other["lease"]


async def test_walker_structured_is_75_25(client: Client[Any]) -> None:
    out = await call(
        client,
        TOOL,
        {
            "device": {"category": "mobility", "type": "walker"},
            "use_case": {
                "daily": True,
                "location": "home+entry_exit",
                "independent_transfer": True,
            },
        },
    )
    # adp_funding_rule.csv F004 (mobility 705) and F001 (mobility 110.01) <- shared
    # adp_funding_rule.csv rule_id 49 (75%) and rule_id 39 ("Client portion (25 percent)").
    assert out["funding"] == {
        "client_share_percent": 25.0,
        "adp_contribution": 75.0,
        "max_contribution": None,
        "repair_coverage": out["funding"]["repair_coverage"],
        "client_share_paid_by": "client",
        "general_rule": False,  # the Mobility Devices manual states it (110.01, 705)
    }
    assert locs(out)[:2] == ["adp:mobility:Section 705", "adp:mobility:Section 110.01"]
    assert out["eligibility"]["basic_mobility"] is True  # daily use at home
    assert out["eligibility"]["other_criteria"]["independent_transfer"] is True
    assert out["cep"] is None  # no income given
    assert "ADP pays 75%" in out["summary"] and "client 25%" in out["summary"]


async def test_scooter_as_car_substitute_is_flagged_not_eligible(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "Patient wants a scooter only for outdoor use, as a car substitute"}
    )
    assert out["eligibility"]["basic_mobility"] is False
    assert out["eligibility"]["other_criteria"]["flagged_exclusions"] == ["alternative_transport"]
    assert out["summary"].startswith("Not eligible")
    # adp_exclusion.csv X006 (mobility 310, p.18) <- adp_extraction.json mobility 310 "Non-Eligible
    # Mobility Requirements" (substitution for car, taxi or bus) and X009 (405.02, p.23) <- shared
    # adp_exclusion.csv exclusion_id 25 "alternative transport / intermittent use".
    assert out["exclusions"][0] == (
        "Not funded as alternative transport (car substitute) or intermittent/outdoor-only use "
        "(adp:mobility:Section 310, p.18; adp:mobility:Section 405.02, p.23)"
    )


# -- options ---------------------------------------------------------------------------------


async def test_family_threshold_from_query(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"query": "Does ADP cover hearing aids? family income $30k"})
    # adp_cep.yaml thresholds.family = 39000 (project spec).
    assert out["cep"] == {"income_threshold": 39000.0, "eligible": True, "client_share": 0.0}
    assert out["interpretation_notes"]["household"] == "Household 'family' stated in the request."
    assert out["eligibility"]["other_criteria"]["category"] == "hearing_devices"
    # No hearing_devices share rule in adp_funding_rule.csv: the core manual rule F035 applies
    # (core 305.00, p.35 <- adp_extraction.json core_manual 305.00 "ADP pays 75% of ADP Approved Price").
    assert "adp:core_manual:Section 305.00" in out["interpretation_notes"]["funding"]


async def test_income_above_threshold_keeps_standard_share(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"query": "power wheelchair", "patient_income": 45000})
    assert out["cep"] == {"income_threshold": 28000.0, "eligible": False, "client_share": 25.0}
    assert out["funding"]["client_share_percent"] == 25.0


async def test_check_filter_returns_only_requested_parts(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "power wheelchair", "patient_income": 19000, "check": ["cep"]}
    )
    assert out["cep"]["eligible"] is True
    assert out["funding"] is None and out["eligibility"] is None and out["exclusions"] == []


async def test_use_case_not_daily_flags_alternative_transport(client: Client[Any]) -> None:
    out = await call(
        client,
        TOOL,
        {
            "device": {"category": "mobility", "type": "scooter"},
            "use_case": {"daily": False, "location": "outdoors"},
        },
    )
    assert out["eligibility"]["basic_mobility"] is False
    assert "alternative_transport" in out["eligibility"]["other_criteria"]["flagged_exclusions"]


async def test_cpap_respiratory_category_and_exclusions(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "Can my patient get funding for a CPAP?", "patient_income": 35000}
    )
    other = out["eligibility"]["other_criteria"]
    assert (other["category"], other["device_type"]) == ("respiratory", "cpap")
    assert out["cep"]["eligible"] is False  # 35000 > 28000 single (adp_cep.yaml)
    # adp_exclusion.csv X051 (respiratory 235, p.18) <- adp_extraction.json respiratory 235 "Repairs/Batteries".
    assert any(
        e.startswith("Batteries not covered (adp:respiratory:Section 235, p.18")
        for e in out["exclusions"]
    )


async def test_speaking_valve_standard_client_pays_25_percent(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"device": {"category": "comm_aids", "type": "speaking valve"}})
    # adp_funding_rule.csv F006 (comm_aids 115.03) <- shared adp_funding_rule.csv rule_id 58: the
    # vendor collects 25 percent of its price for voice restoration and speaking valves.
    assert out["funding"]["client_share_percent"] == 25.0
    assert out["funding"]["adp_contribution"] == 75.0
    assert "adp:comm_aids:Section 115.03" in locs(out)


async def test_speaking_valve_for_odsp_recipient_is_100_percent_with_cap(
    client: Client[Any],
) -> None:
    out = await call(client, TOOL, {"query": "speaking valve for a patient on ODSP"})
    # adp_funding_rule.csv F010 (comm_aids 710) <- shared rule_id 80 ("ADP will pay 100 percent ...
    # up to a maximum contribution"), in section 710 on MCCSS benefit recipients (rule_id 79: OW,
    # ODSP, ACSD co-payment).
    assert out["funding"]["client_share_percent"] == 0.0
    assert out["funding"]["adp_contribution"] == 100.0
    assert locs(out)[0] == "adp:comm_aids:Section 710"


async def test_breast_prosthesis_grant_amount(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"query": "grant for a breast prosthesis after mastectomy"})
    # adp_funding_rule.csv F029 (grants 230.01, p.21, $195.00 full prosthesis) <- adp_extraction.json
    # grants 230.01: "Full Prosthesis (each) ... $195.00".
    assert out["funding"]["max_contribution"] == 195.0
    assert out["funding"]["client_share_percent"] is None
    assert locs(out)[0] == "adp:grants:Section 230.01"


async def test_breast_prosthesis_grant_for_a_client_on_ontario_works(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "grant for a breast prosthesis, patient on Ontario Works"}
    )
    # adp_extraction.json grants 230.02: clients on OW, ODSP or ACSD receive "$260.00" per full
    # prosthesis (230.01's $195.00 is every client's grant, not theirs).
    assert out["funding"]["max_contribution"] == 260.0
    assert locs(out)[0] == "adp:grants:Section 230.02"


def test_only_the_grants_section_naming_social_assistance_is_theirs() -> None:
    """230.01 gives every client's grant and 230.02 that of clients on OW/ODSP/ACSD (source:
    adp_extraction.json grants, p. 21); the sibling section's audience is not inherited."""
    with (CORPUS / "adp_funding_rule.csv").open(encoding="utf-8", newline="") as fh:
        grants = [r for r in csv.DictReader(fh) if r["adp_doc"] == "grants"]
    by_section = {(r["section_ref"], r["scenario"], r["max_contribution"]) for r in grants}
    assert ("230.01", "grant", "195.0") in by_section
    assert ("230.01", "grant", "105.0") in by_section
    assert ("230.02", "grant_social_assistance", "260.0") in by_section
    assert ("230.02", "grant_social_assistance", "140.0") in by_section
    assert not any(r["section_ref"] == "230.01" and "OW" in r["summary"] for r in grants)


async def test_unknown_device_asks_for_it(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"query": "Does ADP cover this?"})
    assert out["summary"].startswith("Could not tell which device")
    assert out["eligibility"]["other_criteria"]["category"] is None


async def test_request_is_constructible_for_direct_calls(server: FastMCP) -> None:
    """coverage.answer calls TOOL.run(rt, Request(...)) directly."""
    req = off_adp_get.Request(
        device={"category": "mobility", "type": "walker"}, patient_income=19000
    )  # type: ignore[arg-type]
    out = await off_adp_get.TOOL.run(server.runtime, req)  # type: ignore[attr-defined]
    assert out.response.cep is not None and out.response.cep.eligible  # type: ignore[attr-defined]


# -- errors ----------------------------------------------------------------------------------


async def test_bad_category_lists_the_eleven(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"device": {"category": "wheelchairs", "type": "walker"}})
    assert "device.category" in msg
    assert len(CATEGORIES) == 11 and all(f"'{c}'" in msg for c in CATEGORIES)


async def test_missing_query_and_device_names_both(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"patient_income": 19000})
    assert "'query'" in msg and "'device'" in msg


async def test_unknown_argument_and_bad_check(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"query": "walker", "income": 5})
    assert "income" in msg and "patient_income" in msg
    msg = await call_error(client, TOOL, {"query": "walker", "check": ["price"]})
    assert "check" in msg and "'eligibility'" in msg


async def test_negative_income_is_rejected(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"query": "walker", "patient_income": -1})
    assert "patient_income" in msg


# -- degraded paths --------------------------------------------------------------------------


async def test_failed_vector_path_answers_from_sql_with_lower_confidence(
    client: Client[Any],
) -> None:
    args = {"query": "power wheelchair", "patient_income": 19000}
    healthy = await call(client, TOOL, args)
    result = await run_with(args, faults=Faults(vector_fail=True))
    out = result.structured_content
    assert not result.is_error and out["provenance"] == ["sql"]
    assert "vector" in result.meta["path_errors"]
    assert out["cep"]["eligible"] is True and out["funding"]["adp_contribution"] == 75.0
    assert out["confidence"] < healthy["confidence"]


async def test_failed_sql_path_answers_from_passages(client: Client[Any]) -> None:
    result = await run_with({"query": "scooter batteries repair"}, faults=Faults(sql_fail=True))
    out = result.structured_content
    assert not result.is_error and out["provenance"] == ["vector"]
    assert 0.6 <= out["confidence_basis"]["spec_score"] <= 0.75
    # Passages adp:mobility:225:exclusion:X003 (batteries) carry the exclusion in their metadata.
    assert any(e.startswith("Batteries not covered") for e in out["exclusions"])


async def test_price_in_the_question_is_not_income(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"query": "Is a $2,400 power wheelchair covered by ADP?"})
    assert out["cep"] is None
    # F004 (mobility 705) <- shared rule_id 49: ADP 75%; F001 (110.01) <- rule_id 39: client 25%.
    assert out["funding"]["client_share_percent"] == 25.0
    assert out["funding"]["client_share_paid_by"] == "client"


async def test_odsp_client_has_no_copayment(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "My patient on ODSP needs a walker. What will she pay?"}
    )
    # F037 (core 310.00) <- adp_extraction.json core_manual 310.00 p.36: 100% for OW/ODSP/ACSD;
    # D007 (mobility 710) <- shared rule_id 50: co-payment of social-assistance recipients.
    assert out["funding"]["client_share_percent"] == 0.0
    assert out["funding"]["client_share_paid_by"] == "social_assistance"
    assert {"adp:core_manual:Section 310.00", "adp:mobility:Section 710"} <= set(locs(out))


async def test_social_assistance_field_none_keeps_the_client_share(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "walker for a patient on ODSP", "social_assistance": "none"}
    )
    assert out["funding"]["client_share_percent"] == 25.0
    assert out["funding"]["client_share_paid_by"] == "client"


async def test_descriptive_rule_answers_who_operates_the_pool(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"query": "Who operates the Central Equipment Pool for power wheelchairs?"}
    )
    # D003 (mobility 510) <- shared rule_id 45: the CEP is operated by Motion Specialties.
    assert "adp:mobility:Section 510" in locs(out)
    assert any("Motion Specialties" in r for r in out["policy_rules"])
