"""schedule.get on the real index: the spec's clinical cases, options, errors and degraded paths.

Every fee and code below was checked in the machine-extracted Schedule of Benefits
(/work/shared/data/ohip/section_*_extracted.json, 2024-03-04 edition): the comment next to each
value names the file, the subsection (page_ref, PDF pages) and the row. page_num is the first
PDF page of the table the canonical row comes from ('pages_processed' in the same file).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Faults
from reference_server.retrieval.ohip_schedule import FeeRow
from reference_server.retrieval.vector import VectorHit
from reference_server.tools.schedule.merge import text_conflicts
from tests.conftest import OFF_COLLECTIONS, call, call_error, run_fresh

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("off_collections")]


async def run_with(tool: str, args: dict[str, Any], **overrides: Any) -> Any:
    """A fresh warmed server (overrides, e.g. faults) with the Dr. OFF collections loaded."""
    return await run_fresh(tool, args, warm_up=True, collections=OFF_COLLECTIONS, **overrides)


def by_code(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["code"]: item for item in out["items"]}


# -- the spec's clinical cases ---------------------------------------------------------------


async def test_c124_discharge_as_mrp_with_c122_c123(client: Client[Any]) -> None:
    out = await call(
        client,
        "schedule.get",
        {"q": "Can I bill C124 as MRP on the day of discharge?", "codes": ["C124"]},
    )
    items = by_code(out)
    assert out["items"][0]["code"] == "C124"
    # section_A_extracted.json, 'Family Practice & Practice in General (00)' (A1, pages 129-189):
    # C124 'Subsequent visit by the MRP - day of discharge' fee 61.15
    assert items["C124"]["fee"] == 61.15
    assert items["C124"]["page_num"] == 129
    # section_GP_extracted.json, GP40 'Hospital and Institutional Consultations and Assessments':
    # C124 conditions 'Limited to one service per hospital admission; not eligible if discharged
    # within 48 hours of admission.'
    assert "48 h" in items["C124"]["requirements"]
    assert "1 service per hospital admission" in items["C124"]["limits"]
    # section_A_extracted.json A1: C122 (day following admission assessment) 61.15 and
    # C123 (second day following) 61.15
    assert items["C122"]["fee"] == 61.15 and items["C123"]["fee"] == 61.15
    assert out["provenance"] == ["sql", "vector"]
    assert out["confidence"] >= 0.9
    locs = [c["loc"] for c in out["citations"]]
    assert "C124" in locs and "ohip:commentary:mrp-discharge-day" in locs
    assert out["conflicts"] == []


async def test_codes_are_extracted_from_the_question(client: Client[Any]) -> None:
    out = await call(client, "schedule.get", {"q": "What is the fee for c124?"})
    # section_A_extracted.json A1: C124 fee 61.15
    assert out["items"][0]["code"] == "C124" and out["items"][0]["fee"] == 61.15


async def test_ed_consultation_as_internist(client: Client[Any]) -> None:
    out = await call(
        client,
        "schedule.get",
        {"q": "Can I bill a consultation in the emergency department as an internist?"},
    )
    items = by_code(out)
    assert out["items"][0]["code"] == "A135"
    # section_A_extracted.json, 'Internal and Occupational Medicine (13)' (A122, pages 250-252):
    # A135 'Consultation' fee 164.90
    assert items["A135"]["fee"] == 164.9 and items["A135"]["page_num"] == 250
    # What the data says about ED consultations by emergency physicians:
    # section_A_extracted.json 'Emergency Medicine (12)' (A92, page 220): H055 'Consultation (see
    # General Preamble GP19)' 106.80, conditions 'See General Preamble GP50 ...';
    # section_A_extracted.json A1: H065 'Consultation in Emergency Medicine' 81.25
    assert items["H055"]["fee"] == 106.8 and "GP50" in items["H055"]["requirements"]
    assert items["H065"]["fee"] == 81.25
    assert "all elements of a consultation" in items["A135"]["requirements"]


async def test_house_call_premiums_for_elderly_patient(client: Client[Any]) -> None:
    out = await call(
        client,
        "schedule.get",
        {"q": "What premiums apply for house calls to elderly patients?", "top_k": 10},
    )
    items = by_code(out)
    # section_A_extracted.json A1: A900 'Complex house call assessment' 54.50, conditions 'Only
    # eligible for payment for the first person seen during a single visit.'
    assert items["A900"]["fee"] == 54.5
    assert "first person seen" in items["A900"]["requirements"]
    # section_GP_extracted.json, 'Special Visit Premiums' (GP65, pages 79-92): B960 'Travel Premium'
    # '36.40', conditions 'max. 2 per time period'; B990 'First Person Seen' '27.50', 'max. 10
    # (total of first and additional person seen) per time period'
    assert items["B960"]["fee"] == 36.4 and "max. 2 per time period" in items["B960"]["limits"]
    assert items["B990"]["fee"] == 27.5 and "max. 10" in items["B990"]["limits"]
    assert items["B960"]["page_num"] == 79
    # the 15% premium for patients 65+: section_A_extracted.json A1 A003 'General assessment' 87.35
    # (the corpus notes 'Increased by 15% for pts >= 65'); A003 is not payable in the home
    assert items["A003"]["fee"] == 87.35 and "home" in items["A003"]["requirements"]


async def test_b991_two_fees_is_a_conflict(client: Client[Any]) -> None:
    only_b991 = ["fee", "limits", "documentation", "commentary"]  # no related codes
    out = await call(
        client,
        "schedule.get",
        {"q": "additional person seen", "codes": ["B991"], "include": only_b991},
    )
    item = out["items"][0]
    # B991 'Additional person(s) seen' has two fees in the extract:
    #   20.00 in section_C_extracted.json 'Radioisotopes (Non-sealed Sources)' (C6), and in
    #         section_J_K_L_M J6 and M24 and section_N_P_Q_R_S S29 (4 source rows);
    #   27.50 in section_A_extracted.json 'Infectious Disease (46)' (A119), section_N_P_R_S S29 and
    #         section_T_U_V_W_Y_Z Y6 (3 source rows).
    # The item shows the fee most tables give; C6 spans pages 4-348 (mis-extracted) so no page.
    assert item["code"] == "B991" and item["fee"] == 20.0 and item["page_num"] is None
    conflict = next(c for c in out["conflicts"] if c["field"] == "B991.fee")
    assert "20.00" in conflict["sql_value"] and "27.50" in conflict["sql_value"]
    assert "Confirm" in conflict["resolution"]
    assert len(out["items"]) == 1
    # 0.9 base + at most 0.09 vector boost - 0.1 for the conflict; the calibrated confidence of
    # an answer whose sources disagree is no higher (scoring/calibrated.py `stated`)
    assert out["confidence_basis"]["spec_score"] <= 0.89 and out["confidence"] <= 0.89


async def test_psychotherapy_and_counselling_limits(client: Client[Any]) -> None:
    out = await call(
        client,
        "schedule.get",
        {"q": "How many counselling units can I bill per patient per year?", "top_k": 10},
    )
    items = by_code(out)
    # section_A_extracted.json A1: K013 'First three units of K013 and K040 combined per patient
    # per provider per 12 month period' 70.10; K033 'Additional units per patient per provider per
    # 12 month period' 49.35; K007 'Individual care - Psychotherapy' 70.10
    assert items["K013"]["fee"] == 70.1
    assert items["K033"]["fee"] == 49.35
    assert items["K007"]["fee"] == 70.1
    assert "First 3 units of K013 & K040" in items["K013"]["limits"]
    assert "K033" in items["K013"]["limits"]  # commentary: after three units, K033 applies


async def test_virtual_care_codes(client: Client[Any]) -> None:
    out = await call(client, "schedule.get", {"q": "Which codes are valid for virtual follow-ups?"})
    items = by_code(out)
    # section_A_extracted.json, 'Virtual Care Services' (A62, pages 190-199): A101 'Limited Virtual
    # Care by Video' 20.00, A102 'Limited Virtual Care by Telephone' 15.00
    assert items["A101"]["fee"] == 20.0 and items["A101"]["page_num"] == 190
    assert items["A102"]["fee"] == 15.0
    assert [i["code"] for i in out["items"]][:2] == ["A101", "A102"]


# -- fee components, listings and descriptions --------------------------------------------------


async def test_technical_and_professional_components_are_both_answered(
    client: Client[Any],
) -> None:
    out = await call(client, "schedule.get", {"q": "chest x-ray fee", "codes": ["X090"]})
    item = out["items"][0]
    # section_D_E_F_G_H_extracted.json, 'Chest and Abdomen' (D10, page 358): X090 'single view'
    # fee 14.9, h_fee 14.9, p_fee 6.35
    assert item["code"] == "X090" and item["fee"] == 14.9
    assert item["fee_components"] == [
        {"component": "H", "fee": 14.9},
        {"component": "P", "fee": 6.35},
    ]
    assert "technical component (H) $14.90" in item["fee_note"]
    assert "professional component (P) $6.35" in item["fee_note"]
    assert item["fee_variants"] == []


async def test_a_code_priced_only_by_its_professional_component_has_a_fee(
    client: Client[Any],
) -> None:
    out = await call(client, "schedule.get", {"q": "spinal sonography", "codes": ["J290"]})
    item = out["items"][0]
    # section_D_E_F_G_H_extracted.json, 'Miscellaneous' (G10, page 392): J290 'Spinal sonography'
    # with no fee and p_fee 30.6 (the J6 row lists no amount at all)
    assert item["fee"] == 30.6
    assert item["fee_components"] == [{"component": "P", "fee": 30.6}]
    assert "professional component (P)" in item["fee_note"]


async def test_every_listing_of_a_code_with_two_fees_is_shown(client: Client[Any]) -> None:
    out = await call(client, "schedule.get", {"q": "ED assessment", "codes": ["A100"]})
    item = out["items"][0]
    # section_A_extracted.json A1 (and five more tables): A100 fee 76.9, no component columns;
    # section_GP_extracted.json GP110 'Emergency Department Alternative Funding Agreements': fee 0
    # with every component column 0
    assert item["fee"] == 76.9
    assert [(v["fee"], v["page_ref"]) for v in item["fee_variants"]] == [
        (76.9, "A1"),
        (0.0, "GP110"),
    ]
    assert {"component": "P", "fee": 0.0} in item["fee_components"]
    assert "$76.90 in A1" in item["fee_note"] and "$0.00 in GP110" in item["fee_note"]


async def test_a_question_restating_a_description_finds_its_code_first(
    client: Client[Any],
) -> None:
    out = await call(
        client,
        "schedule.get",
        {
            "q": "What is the OHIP code for laser retinopexy for retinopathy of prematurity, one eye?"
        },
    )
    # section_T_U_V_W_Y_Z_extracted.json, 'Retina and Extra Ocular Muscles' (Y7): E125 'Laser
    # retinopexy for Retinopathy of Prematurity - one eye' 750.0; E126 is 'both eyes'
    assert [i["code"] for i in out["items"][:2]] == ["E125", "E126"]
    assert out["items"][0]["fee"] == 750.0


# -- options ------------------------------------------------------------------------------------


async def test_include_fee_only_leaves_other_parts_out(client: Client[Any]) -> None:
    out = await call(
        client, "schedule.get", {"q": "discharge day MRP", "codes": ["C124"], "include": ["fee"]}
    )
    # no 'codes' in include: only the named code; section_A_extracted.json A1 C124 61.15
    assert [i["code"] for i in out["items"]] == ["C124"]
    item = out["items"][0]
    assert item["fee"] == 61.15 and item["requirements"] is None and item["limits"] is None
    assert all(not c["loc"].startswith("ohip:commentary:") for c in out["citations"])


async def test_include_without_fee_or_commentary(client: Client[Any]) -> None:
    out = await call(
        client,
        "schedule.get",
        {"q": "discharge", "codes": ["C124"], "include": ["codes", "limits", "documentation"]},
    )
    item = out["items"][0]
    assert item["code"] == "C124" and item["fee"] is None
    # schedule text only (section_GP_extracted.json GP40 C124 conditions), no commentary sentences
    assert "48 h" in item["requirements"] and "Charting" not in item["requirements"]
    assert len(out["items"]) > 1  # related codes kept


async def test_top_k_limits_items(client: Client[Any]) -> None:
    out = await call(client, "schedule.get", {"q": "consultation", "top_k": 2})
    assert len(out["items"]) == 2
    out = await call(client, "schedule.get", {"q": "consultation", "top_k": 20})
    assert 2 < len(out["items"]) <= 20


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"q": "x", "codes": ["C12"]}, "codes.0"),
        ({"q": "x", "codes": ["C124; DROP TABLE"]}, "codes.0"),
        (
            {"q": "x", "include": ["fees"]},
            "'codes', 'fee', 'limits', 'documentation' or 'commentary'",
        ),
        ({"q": "x", "top_k": 0}, "top_k"),
        ({"q": "x", "top_k": 21}, "less than or equal to 20"),
        ({"codes": ["C124"]}, "'q': this argument is required"),
        ({"q": "x", "code": ["C124"]}, "unknown argument"),
    ],
)
async def test_input_errors(client: Client[Any], args: dict[str, Any], expected: str) -> None:
    message = await call_error(client, "schedule.get", args)
    assert expected in message


async def test_every_requested_code_unknown_is_needs_more_info_not_an_error(
    client: Client[Any],
) -> None:
    # 002: schedule.get answers; Z999 / Q000 are not in any section_*_extracted.json table
    out = await call(client, "schedule.get", {"q": "fee", "codes": ["Z999", "q000"]})
    assert out["needs_more_info"] is True
    assert out["unknown_codes"] == ["Z999", "Q000"]
    assert all(i["code"] not in ("Z999", "Q000") for i in out["items"])


async def test_one_known_code_is_answered_and_the_unknown_one_listed(client: Client[Any]) -> None:
    out = await call(client, "schedule.get", {"q": "discharge", "codes": ["C124", "Z999"]})
    assert out["needs_more_info"] is False and out["unknown_codes"] == ["Z999"]
    assert out["items"][0]["code"] == "C124"


async def test_codes_are_accepted_in_any_case(client: Client[Any]) -> None:
    lower = await call(client, "schedule.get", {"q": "discharge", "codes": ["c124"]})
    upper = await call(client, "schedule.get", {"q": "discharge", "codes": ["C124"]})
    assert lower["items"][0]["code"] == "C124"
    assert lower["items"] == upper["items"]


def _passage(code: str, extra: str) -> VectorHit:
    """A schedule passage in the index builder's line format (one line for `code`)."""
    return VectorHit(
        "ohip:subsection:1:p2",
        f"OHIP Schedule of Benefits: section A, test (page A1)\n{code} Test visit: $61.15 ({extra})",
        {"doc_type": "subsection", "codes": code},
        1.0,
    )


async def test_limits_and_requirements_are_compared_with_the_passages() -> None:
    row = FeeRow(
        code="C124",
        description="Day of discharge",
        fee=61.15,
        fee_kind="flat",
        fee_percent=None,
        h_fee=None,
        p_fee=None,
        t_fee=None,
        asst_fee=None,
        surg_fee=None,
        anae_fee=None,
        units=None,
        requirements="not within 48 h of admission",
        limits="max 1 per admission",
        subsection_title="Subsequent visits",
        page_ref="A1",
        pdf_pages="1",
        n_source_rows=1,
        conflict_group=None,
        n_fee_variants=None,
        chunk_id="ohip:a1",
    )
    same = _passage("C124", "max 1 per admission; not within 48 h of admission")
    assert text_conflicts("C124", [row], [same]) == []
    stale = _passage("C124", "max 2 per admission; not within 48 h of admission")
    conflicts = text_conflicts("C124", [row], [stale])
    assert [c.field for c in conflicts] == ["C124.limits"]
    assert conflicts[0].sql_value == "max 1 per admission"
    assert "max 2 per admission" in conflicts[0].vector_value[0]
    both = _passage("C124", "none")
    assert [c.field for c in text_conflicts("C124", [row], [both])] == [
        "C124.limits",
        "C124.requirements",
    ]
    assert text_conflicts("C124", [row], []) == []  # no passage lists the code: nothing to compare


# -- degraded paths -----------------------------------------------------------------------------


async def test_sql_down_answers_from_schedule_passages() -> None:
    result = await run_with(
        "schedule.get", {"q": "discharge day MRP", "codes": ["C124"]}, faults=Faults(sql_fail=True)
    )
    out = result.structured_content
    assert not result.is_error and out["provenance"] == ["vector"]
    # fee read from the ohip_chunks schedule passage; section_A_extracted.json A1 C124 61.15
    assert out["items"][0]["code"] == "C124" and out["items"][0]["fee"] == 61.15
    assert 0.6 <= out["confidence_basis"]["spec_score"] <= 0.69  # vector-only 0.6 + at most 0.09
    assert "sql" in result.meta["path_errors"]


async def test_sql_down_still_reports_the_b991_fee_conflict() -> None:
    result = await run_with(
        "schedule.get", {"q": "premium", "codes": ["B991"]}, faults=Faults(sql_fail=True)
    )
    conflict = result.structured_content["conflicts"][0]
    # 20.00 (C6/J6/M24/S29) and 27.50 (A119/S29/Y6), as in test_b991_two_fees_is_a_conflict
    assert conflict["field"] == "B991.fee" and conflict["vector_value"] == [20.0, 27.5]


async def test_vector_down_keeps_sql_answer_with_lower_confidence(client: Client[Any]) -> None:
    args = {"q": "Can I bill a consultation in the ED as an internist?"}
    healthy = await call(client, "schedule.get", args)
    result = await run_with("schedule.get", args, faults=Faults(vector_fail=True))
    out = result.structured_content
    assert out["provenance"] == ["sql"]
    # section_A_extracted.json A122: A135 164.90, found through the SQL commentary table
    assert out["items"][0]["code"] == "A135" and out["items"][0]["fee"] == 164.9
    assert out["confidence"] < healthy["confidence"]
