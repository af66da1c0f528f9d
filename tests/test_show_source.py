"""Show source: every citation of every tool carries a chunk id that source.passages resolves.

One representative call per tool (plus the cases that used to break: the ADP manuals' colliding
section numbers, a schedule fee citation, OPA section and whole-document citations), every
citation collected with the harness's own walker (evals.run.citations) and resolved in one call.
Expected values: OHIP C124 $61.15 in section_A_extracted.json (A1, Family Practice); ADP
prosthesis sections 205 (page 16) and 205 again (page 20, 'Options') in adp_extraction.json.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from evals.run.citations import cited_ids
from tests.conftest import call

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("off_collections")]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("schedule.get", {"q": "MRP discharge day", "codes": ["C124"]}),
    ("schedule.get", {"q": "psychotherapy limits per patient"}),
    ("adp.get", {"query": "Is a power wheelchair covered for a patient with income $19,000?"}),
    ("adp.get", {"query": "custom ocular prosthesis options"}),
    ("odb.get", {"drug": "Januvia", "check": ["coverage", "lowest_cost", "lu_criteria"]}),
    ("odb.get", {"q": "What are the LU requirements for Jardiance?"}),
    (
        "coverage.answer",
        {"question": "Can I bill C124 as MRP at discharge? She also needs a walker and Januvia."},
    ),
    ("opa.search_sections", {"query": "virtual care consent"}),
    ("opa.policy_check", {"query": "Documentation requirements for virtual care"}),
    ("opa.ipac_guidance", {"topic": "reprocessing"}),
    ("opa.program_lookup", {"program": "cervical"}),
    ("opa.get_section", {"section_id": "cpso-virtual-care:s01"}),
]


async def resolve(client: Client[Any], ids: list[str]) -> dict[str, dict[str, Any]]:
    out = await call(client, "source.passages", {"chunk_ids": ids})
    assert out["missing_ids"] == [], out["missing_ids"]
    return {p["chunk_id"]: p for p in out["passages"]}


@pytest.mark.parametrize(
    ("tool", "args"), CALLS, ids=[f"{t}:{i}" for i, (t, _) in enumerate(CALLS)]
)
async def test_every_citation_resolves(
    client: Client[Any], tool: str, args: dict[str, Any]
) -> None:
    result = await call(client, tool, args)
    ids, without = cited_ids(result)
    assert without == [], f"citations without chunk_id at {without}"
    assert ids, f"{tool} cited nothing"
    await resolve(client, ids)


async def test_schedule_fee_citation_shows_the_schedule_passage_listing_the_code(
    client: Client[Any],
) -> None:
    out = await call(client, "schedule.get", {"q": "discharge", "codes": ["C124"]})
    fee = next(c for c in out["citations"] if c["loc"] == "C124")
    assert fee["chunk_id"].startswith("ohip:subsection:")
    passage = (await resolve(client, [fee["chunk_id"]]))[fee["chunk_id"]]
    assert "C124 Subsequent visit by MRP - day of discharge: $61.15" in passage["text"]


async def test_colliding_adp_section_numbers_resolve_to_their_own_passages(
    client: Client[Any],
) -> None:
    got = await resolve(client, ["adp:prosthesis:205", "adp:prosthesis:205-2"])
    first, second = got["adp:prosthesis:205"], got["adp:prosthesis:205-2"]
    assert first["section"].startswith("205 ") and second["section"].startswith("205 ")
    assert (first["page"], second["page"]) == (16, 20)
    assert first["text"] != second["text"]
