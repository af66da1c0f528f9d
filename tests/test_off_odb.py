"""odb.get on the real corpus: the spec's four drug scenarios, every option, errors, degraded paths.

Expected values come from reference_server/corpus/off/odb_drugs.csv, odb_interchangeable_groups.csv
and odb_lu_codes.csv (ingested from ../shared/data/odb/odb-formulary-extract-2025-08-27.xml); each
value below names the XML element it was checked against. Drug classes come from
corpus/off/drug_classes.yaml (ATC prefixes) joined to DPD ATC codes.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client, FastMCP

from reference_server.config import Faults
from reference_server.retrieval import odb_formulary as formulary
from reference_server.retrieval.odb_rows import Product
from reference_server.retrieval.odb_selection import form_of
from reference_server.tools.odb import get as off_odb_get
from tests.conftest import call, call_error, load_collections, run_fresh

TOOL = "odb.get"
SOURCE = (
    "Ontario Drug Benefit Formulary (extract 2025-08-27)"  # MANIFEST.json odb_drugs.csv create_date
)


@pytest.fixture(scope="module", autouse=True)
def _warm_odb(server: FastMCP) -> None:
    load_collections(server, [formulary.COLLECTION])


async def run_with(args: dict[str, Any], **overrides: Any) -> Any:
    return await run_fresh(TOOL, args, collections=[formulary.COLLECTION], **overrides)


def dins(items: list[dict[str, Any]]) -> list[str]:
    return [i["din"] for i in items]


# -- the spec's clinical scenarios -----------------------------------------------------------


async def test_ozempic_is_a_limited_use_benefit(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"q": "Is Ozempic covered for diabetes?"})
    cov = out["coverage"]
    # XML: <drug id="02471469" insOH="Y" sec3="Y" sec12="Y"><name>Ozempic</name> ...
    # <individualPrice>223.2600</individualPrice>, in <pcgGroup lccId="00384"> whose
    # <lccNote reasonForUseId="665"> covers adults with type 2 diabetes not controlled on metformin;
    # the other Ozempic pens 02471477 / 02540258 carry reasonForUseId 666 / 667; period "Indefinite".
    assert (cov["covered"], cov["din"], cov["brand_name"], cov["generic_name"]) == (
        True,
        "02471469",
        "Ozempic",
        "SEMAGLUTIDE",
    )
    assert cov["lu_required"] is True
    assert cov["lu_criteria"].startswith("LU 665, 666, 667: Tx: adult pts w/ type 2 diabetes")
    assert "(authorization period: indefinite)" in cov["lu_criteria"]
    assert out["lowest_cost"] == {
        "din": "02471469",
        "brand": "Ozempic",
        "price": 223.26,
        "savings": 0.0,
    }
    # a DIN cites its interchangeable group's passage (ODB XML: Ozempic is item 1862)
    assert {
        "source": SOURCE,
        "loc": "DIN: 02471469 - Ozempic (SEMAGLUTIDE)",
        "page": None,
        "chunk_id": "odb:group:1862",
    } in out["citations"]
    assert {
        "source": SOURCE,
        "loc": "LU code 665 (SEMAGLUTIDE)",
        "page": None,
        "chunk_id": "odb:lu:665",
    } in out["citations"]
    assert out["provenance"] == ["sql", "vector"] and out["confidence"] >= 0.9
    assert out["needs_more_info"] is False


async def test_cheapest_covered_statin(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"q": "What's the cheapest statin that's covered?", "drug_class": "statin"}
    )
    # XML: <drug id="02247011" chronicUseMed="Y" sec3="Y"><name>Apo-Simvastatin</name> ...
    # <individualPrice>.1023</individualPrice> (SIMVASTATIN 5mg); no benefit drug under the six
    # statin genericNames (atorva/fluva/lova/prava/rosuva/simva) has a lower individualPrice;
    # 02247011 is the smallest DIN at .1023.
    assert out["lowest_cost"] == {
        "din": "02247011",
        "brand": "Apo-Simvastatin",
        "price": 0.1023,
        "savings": None,
    }
    assert out["coverage"]["covered"] is True and out["coverage"]["din"] == "02247011"
    alts = out["alternatives"]
    assert len({a["generic_name"] for a in alts}) == len(alts) == 5  # one per other statin
    assert all(a["price"] >= 0.1023 and a["reason"] == "same drug class: statin" for a in alts)
    # XML: <drug id="02337975"><name>Apo-Rosuvastatin</name><individualPrice>.1284</individualPrice>
    assert (alts[0]["din"], alts[0]["price"]) == ("02337975", 0.1284)
    assert "SIMVASTATIN" not in {a["generic_name"] for a in alts}


async def test_generic_for_januvia_with_savings(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"q": "Is there a generic for Januvia? How much would the patient save?"}
    )
    # XML: <drug id="02303922"><name>Januvia</name><individualPrice>3.2787</individualPrice>
    # <amountMOHLTCPays>.8197</amountMOHLTCPays> (SITAGLIPTIN 100mg, itemNumber 1852);
    # <drug id="02503867"><name>PMS-Sitagliptin</name><individualPrice>.8197</individualPrice>
    # is the smallest DIN at the group minimum. Savings 3.2787 - 0.8197 = 2.459 per tablet.
    assert out["coverage"]["din"] == "02303922" and out["coverage"]["strength"] == "100mg"
    assert out["lowest_cost"] == {
        "din": "02503867",
        "brand": "PMS-Sitagliptin",
        "price": 0.8197,
        "savings": 2.459,
    }
    assert out["price_comparison"] == {
        "requested_din": "02303922",
        "requested_brand": "Januvia",
        "requested_price": 3.2787,
        "amount_odb_pays": 0.8197,
        "lowest_cost_din": "02503867",
        "lowest_cost_brand": "PMS-Sitagliptin",
        "lowest_cost_price": 0.8197,
        "savings_per_unit": 2.459,
        "savings_percent": 75.0,
    }
    inter = out["interchangeable"]
    assert len(inter) == 5 and inter[-1] == {
        "din": "02303922",
        "brand": "Januvia",
        "price": 3.2787,
        "lowest_cost": False,
    }
    assert all(i["lowest_cost"] and i["price"] == 0.8197 for i in inter[:-1])
    # The group chunk for sitagliptin is found by name and counts as corroboration.
    assert any("SITAGLIPTIN" in c for c in out["context"])


async def test_jardiance_is_a_general_benefit_without_lu(client: Client[Any]) -> None:
    """The spec expects Jardiance to be Limited Use; the 2025-08-27 formulary says otherwise."""
    out = await call(client, TOOL, {"drug": "Jardiance", "check": ["coverage", "lu_criteria"]})
    cov = out["coverage"]
    # XML: <drug id="02443937" insOH="Y" chronicUseMed="Y" sec3="Y"><name>Jardiance</name>
    # <individualPrice>2.7671</individualPrice>; its <pcgGroup> has no <lccNote reasonForUseId>
    # (only a clinical <note> on the pcg9), so no LU code applies. odb_policy.yaml chunk 5 says the same.
    assert cov == {
        "covered": True,
        "din": "02443937",
        "brand_name": "Jardiance",
        "generic_name": "EMPAGLIFLOZIN",
        "strength": "10mg",
        "dosage_form": "Tab",
        "group_id": "1811",  # ODB XML: Jardiance 10mg is item 1811
        "lu_required": False,
        "lu_codes": [],
        "lu_criteria": "No Limited Use code required: general benefit in the formulary.",
        # the pcg9's clinical <note> (ingested as odb_notes.csv): type 2 diabetes on maximally
        # tolerated metformin with poor control and intolerance of a sulfonylurea
        "notes": [
            "tx of Type 2 diabetes in pts on maximally tolerated doses of metformin have: - poor "
            "glycemic control (defined as HbA1c > 0.07) & intol. / CI to sulfonylurea; / …"
        ],
    }
    assert out["citations"][0] == {
        "source": SOURCE,
        "loc": "DIN: 02443937 - Jardiance (EMPAGLIFLOZIN)",
        "page": None,
        "chunk_id": "odb:group:1811",  # ODB XML: Jardiance 10mg is item 1811
    }
    assert out["interchangeable"] == [] and out["lowest_cost"] is None  # not in `check`


# -- options ---------------------------------------------------------------------------------


async def test_din_lookup_zero_pads(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"din": "2443937"})
    assert out["coverage"]["din"] == "02443937" and out["coverage"]["brand_name"] == "Jardiance"


async def test_strength_selects_the_product(client: Client[Any]) -> None:
    # XML: <drug id="02388839"><name>Januvia</name> in the 25mg pcg9 (itemNumber 1850).
    out = await call(client, TOOL, {"drug": "Januvia", "strength": "25 mg"})
    assert out["coverage"]["din"] == "02388839"
    # XML: <drug id="02388847"><name>Januvia</name> in the 50mg pcg9 (itemNumber 1851).
    out = await call(client, TOOL, {"drug": "Januvia 50mg"})
    assert out["coverage"]["din"] == "02388847"


async def test_a_bare_number_after_the_name_is_its_listed_strength(client: Client[Any]) -> None:
    # odb_drugs.csv: Jardiance is listed at 10mg (02443937) and 25mg (02443945) only
    out = await call(client, TOOL, {"q": "ODB coverage for jardiance 25"})
    assert out["coverage"]["din"] == "02443945" and out["coverage"]["strength"] == "25mg"
    assert out["context"][0] == "'25' read as the listed strength 25mg."
    # an age is no strength, though Lipitor is listed at 80mg (02243097)
    out = await call(client, TOOL, {"q": "Is Lipitor covered for my 80 year old patient"})
    assert out["coverage"]["strength"] != "80mg"
    assert not any("read as" in c for c in out["context"])


async def test_a_misspelt_name_is_answered_as_the_listed_drug_and_said(
    client: Client[Any],
) -> None:
    # odb_drugs.csv: AMOXICILLIN 500mg capsules (e.g. 02401509); no name is spelt 'amoxicilin'
    out = await call(client, TOOL, {"q": "Is amoxicilin 500mg covered by ODB?"})
    assert out["coverage"]["generic_name"] == "AMOXICILLIN"
    assert out["coverage"]["strength"] == "500mg" and not out["needs_more_info"]
    assert out["context"][0].startswith("'amoxicilin' read as ")
    out = await call(client, TOOL, {"drug": "metforman", "strength": "500 mg"})
    assert out["coverage"]["generic_name"].startswith("METFORMIN")


async def test_a_name_that_is_a_brand_and_a_generic_name_answers_the_generic_and_says_so(
    client: Client[Any],
) -> None:
    # odb_drugs.csv: brand 'Clindamycin' (Sanis) is CLINDAMYCIN HCL 150mg/300mg Cap (02400529,
    # 02400537); generic_name CLINDAMYCIN is the 1% topical solutions 00582301, 02266938, 02483769
    out = await call(client, TOOL, {"q": "is clindamycin covered for my patient"})
    assert out["coverage"]["generic_name"] == "CLINDAMYCIN"
    assert out["coverage"]["din"] in {"00582301", "02266938", "02483769"}
    assert any("also the brand Clindamycin (CLINDAMYCIN HCL" in c for c in out["context"])
    # with the brand's strength, the brand answers, and the other reading is said too
    out = await call(client, TOOL, {"drug": "Clindamycin", "strength": "150mg"})
    assert out["coverage"]["din"] == "02400529"
    assert any("read as the brand Clindamycin" in c for c in out["context"])


async def test_a_form_written_in_the_strength_cell_is_the_products_form(
    client: Client[Any],
) -> None:
    # odb_drugs.csv: Spirit Blood Glucose Test Strip (09857547) lists 'Strip' as its strength and
    # no dosage form (strips are the "film" form word); it is the only product of brand Spirit
    out = await call(client, TOOL, {"drug": "Spirit Blood Glucose Test Strip", "form": "film"})
    assert out["coverage"]["din"] == "09857547" and out["not_listed"] is None
    assert form_of(Product("1", "b", "g", "i", "0", 1, 0, 0, "Strip")) == ("Strip")
    assert form_of(Product("1", "b", "g", "i", "0", 1, 0, 0, "5mg")) is None


async def test_ingredient_with_salt_resolves_to_key(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"ingredient": "Atorvastatin Calcium"})
    assert out["coverage"]["generic_name"] == "ATORVASTATIN CALCIUM" and out["coverage"]["covered"]


async def test_not_covered_drug_gets_covered_class_alternatives(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "Nexium"})
    # XML: <drug id="02244521" notABenefit="Y" sec3b="Y" sec3="Y"><name>Nexium</name> (no price).
    assert out["coverage"]["covered"] is False and out["coverage"]["din"] == "02244521"
    assert out["lowest_cost"] is None  # no benefit product in the esomeprazole group
    alts = out["alternatives"]
    assert alts and all(a["reason"] == "same drug class: ppi" for a in alts)
    # XML: <drug id="02296632"><name>Teva-Rabeprazole EC</name><individualPrice>.0669</individualPrice>
    assert (alts[0]["din"], alts[0]["price"]) == ("02296632", 0.0669)
    assert any(a["lu_required"] for a in alts)
    without_lu = await call(client, TOOL, {"drug": "Nexium", "exclude_lu": True})
    assert without_lu["alternatives"] and not any(
        a["lu_required"] for a in without_lu["alternatives"]
    )


async def test_include_brand_false_drops_the_brand(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "Januvia", "include_brand": False, "top_k": 10})
    assert out["interchangeable"] and "02303922" not in dins(out["interchangeable"])
    # odb_interchangeable_groups.csv 1852: n_drugs 11 (10 generics + Januvia).
    assert len(out["interchangeable"]) == 10


async def test_check_alternatives_false_and_include_lu_false(client: Client[Any]) -> None:
    out = await call(
        client, TOOL, {"drug": "Ozempic", "check_alternatives": False, "include_lu": False}
    )
    assert out["interchangeable"] == [] and out["alternatives"] == []
    assert out["coverage"]["lu_required"] is True and out["coverage"]["lu_criteria"] is None


async def test_top_k_keeps_the_requested_product(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "Januvia", "top_k": 2})
    assert len(out["interchangeable"]) == 2 and out["interchangeable"][-1]["din"] == "02303922"


async def test_condition_not_in_lu_indication_is_said(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "Ozempic", "condition": "obesity"})
    assert out["coverage"]["lu_criteria"].endswith("No LU indication mentions 'obesity'.")


async def test_all_strengths_and_alternatives_checks(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "Januvia", "check": ["all_strengths", "alternatives"]})
    strengths = next(c for c in out["context"] if c.startswith("Other strengths: "))
    assert "25mg" in strengths and "50mg" in strengths and "100mg" in strengths
    # Januvia is covered: alternatives are other DPP-4 inhibitors (ATC A10BH), not sitagliptin.
    assert out["alternatives"] and all(
        a["reason"] == "same drug class: dpp-4 inhibitor" for a in out["alternatives"]
    )
    assert "SITAGLIPTIN" not in {a["generic_name"] for a in out["alternatives"]}


async def test_class_synonym_in_drug_field(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"drug": "SGLT2 inhibitor"})
    assert out["coverage"]["covered"] and out["alternatives"]
    assert all(a["reason"] == "same drug class: sglt2 inhibitor" for a in out["alternatives"])


async def test_unknown_din_needs_more_info(client: Client[Any]) -> None:
    out = await call(client, TOOL, {"din": "99999999"})
    assert out["needs_more_info"] is True and out["coverage"] is None
    # the spec's evidence score is low (nothing found); the calibrated confidence is the
    # probability that "not listed" is right, which the derived cases find high
    assert out["confidence_basis"]["spec_score"] < 0.9
    assert out["confidence_basis"]["features"]["no_answer"] == 1.0


async def test_request_is_constructible_for_direct_calls(server: FastMCP) -> None:
    out = await off_odb_get.TOOL.run(server.runtime, off_odb_get.Request(drug="Jardiance"))  # type: ignore[attr-defined]
    assert out.response.coverage.din == "02443937"


# -- errors ----------------------------------------------------------------------------------


async def test_top_k_out_of_range(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"drug": "Januvia", "top_k": 11})
    assert "top_k" in msg and "10" in msg
    msg = await call_error(client, TOOL, {"drug": "Januvia", "top_k": 0})
    assert "top_k" in msg


async def test_nothing_to_look_up_names_the_fields(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"top_k": 3})
    assert all(f"'{f}'" in msg for f in ("drug", "din", "ingredient", "drug_class", "q"))


async def test_bad_din_and_bad_check(client: Client[Any]) -> None:
    msg = await call_error(client, TOOL, {"din": "abc"})
    assert "din" in msg
    msg = await call_error(client, TOOL, {"drug": "Januvia", "check": ["cost"]})
    assert "check" in msg and "'lowest_cost'" in msg


async def test_documentation_check_was_removed(client: Client[Any]) -> None:
    # nothing in the corpus answered it: it is no longer accepted rather than silently ignored
    msg = await call_error(client, TOOL, {"drug": "Januvia", "check": ["documentation"]})
    assert "check" in msg and "'documentation'" not in msg.split("input_value")[0]


async def test_coverage_check_decides_whether_coverage_is_answered(client: Client[Any]) -> None:
    without = await call(client, TOOL, {"drug": "Januvia", "check": ["interchangeable"]})
    assert without["coverage"] is None and without["interchangeable"]
    with_lu = await call(client, TOOL, {"drug": "Januvia", "check": ["lu_criteria"]})
    assert with_lu["coverage"]["din"] == "02303922"


async def test_product_notes_answer_clinical_criteria_of_a_general_benefit(
    client: Client[Any],
) -> None:
    # ODB XML, Dovobet (DIN 02244126) group note: for psoriasis that failed first-line topical
    # steroids and calcipotriol (Dovonex); a general benefit, no LU code.
    out = await call(client, TOOL, {"drug": "Dovobet", "check": ["coverage", "lu_criteria"]})
    cov = out["coverage"]
    assert cov["covered"] is True and cov["lu_required"] is False
    assert any("psoriasis" in n and "Dovonex" in n for n in cov["notes"])
    assert any(c["chunk_id"].startswith("odb:note:") for c in out["citations"])
    assert any(line.startswith("Formulary note (group)") for line in out["context"])


async def test_brands_view_lists_every_biosimilar_of_the_ingredient(client: Client[Any]) -> None:
    # ODB XML: infliximab is listed in seven single-product groups (items 2355-2361)
    out = await call(client, TOOL, {"q": "Which brands of infliximab are covered?"})
    brands = {b["brand"] for b in out["brands"]}
    assert {"Remdantry", "Renflexis", "Avsola", "Remsima SC", "Ixifi", "Inflectra"} <= brands
    assert len({b["group_id"] for b in out["brands"]}) == 7
    assert len(out["interchangeable"]) <= 1  # the interchangeable group alone misses them


# -- degraded paths --------------------------------------------------------------------------


async def test_failed_vector_path_answers_from_sql(client: Client[Any]) -> None:
    args = {"q": "Is there a generic for Januvia?"}
    healthy = await call(client, TOOL, args)
    result = await run_with(args, faults=Faults(vector_fail=True))
    out = result.structured_content
    assert not result.is_error and out["provenance"] == ["sql"]
    assert out["lowest_cost"]["din"] == "02503867" and out["context"] == []
    assert out["confidence"] < healthy["confidence"]


async def test_failed_sql_path_answers_from_group_chunk(client: Client[Any]) -> None:
    result = await run_with({"drug": "Jardiance"}, faults=Faults(sql_fail=True))
    out = result.structured_content
    assert not result.is_error and out["provenance"] == ["vector"]
    # Group chunk odb:group:1811 (EMPAGLIFLOZIN 10mg, Jardiance DIN 02443937, general benefit).
    assert out["coverage"]["din"] == "02443937" and out["coverage"]["covered"] is True
    assert out["coverage"]["lu_required"] is False
    assert 0.6 <= out["confidence_basis"]["spec_score"] <= 0.75
