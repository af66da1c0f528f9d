"""source.passages on the real index: ids from every collection, highlights, errors, degraded paths.

OHIP values are checked in /work/shared/data/ohip/section_*_extracted.json (named per value);
ADP in /work/shared/data/adp/adp_extraction.json; ODB in the formulary XML
/work/shared/data/odb/odb-formulary-extract-2025-08-27.xml; OPA text in corpus/opa/cpso/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Faults
from tests.conftest import call, call_error
from tests.test_off_schedule import run_with

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("off_collections")]
MARK = re.compile(r"\*\*(.+?)\*\*")


def plain(snippet: str) -> str:
    """A highlight without its '...' ends and '**' marks."""
    return MARK.sub(r"\1", snippet.removeprefix("...").removesuffix("..."))


async def test_ids_resolve_across_all_collections(client: Client[Any]) -> None:
    ids = [
        "ohip:commentary:mrp-discharge-day",
        "ohip:subsection:1:p2",
        "adp:mobility:205",
        "adp:mobility:110.01:funding:F001",
        "odb:lu:414",
        "odb:group:0206",
        "cpso-virtual-care:s01",
    ]
    out = await call(client, "source.passages", {"chunk_ids": ids})
    assert out["total_chunks"] == 7 and out["missing_ids"] == []
    got = {p["chunk_id"]: p for p in out["passages"]}
    assert [p["chunk_id"] for p in out["passages"]] == ids  # request order
    # section_A_extracted.json A1: C124 61.15 (the commentary repeats the schedule fee)
    assert "C124 (61.15)" in got["ohip:commentary:mrp-discharge-day"]["text"]
    assert got["ohip:commentary:mrp-discharge-day"]["source"].startswith("OHIP billing commentary")
    # section_A_extracted.json 'Family Practice & Practice in General (00)' A1, pages 129-189:
    # C122/C123/C124 at 61.15 each
    schedule = got["ohip:subsection:1:p2"]
    assert "C124 Subsequent visit by MRP - day of discharge: $61.15" in schedule["text"]
    assert schedule["page"] == 129 and schedule["section"].startswith("A1 ")
    # adp_extraction.json: adp:mobility:205 'Ambulation Aids', on page 12 of the Mobility manual
    adp = got["adp:mobility:205"]
    assert adp["page"] == 12 and adp["section"] == "205 Ambulation Aids"
    assert adp["source"] == "ADP Mobility Devices Policy and Administration Manual"
    # ODB XML: ZANAMIVIR, DIN 02240863 (Relenza), item number 0206, LU authorization up to 12 months
    assert "02240863" in got["odb:lu:414"]["text"] and got["odb:lu:414"]["section"] == "LU code 414"
    assert "Relenza (DIN 02240863" in got["odb:group:0206"]["text"]
    opa = got["cpso-virtual-care:s01"]
    assert opa["source"] == "Virtual Care" and opa["page"] is None
    assert opa["section"] == "Virtual care is the practice of medicine"


async def test_highlight_format(client: Client[Any]) -> None:
    out = await call(
        client,
        "source.passages",
        {"chunk_ids": ["cpso-virtual-care:s01"], "highlight_terms": ["virtual"]},
    )
    passage = out["passages"][0]
    flat = " ".join(passage["text"].split())
    assert 1 <= len(passage["highlights"]) <= 5
    for snippet in passage["highlights"]:
        marked = MARK.findall(snippet)
        assert marked and all(m.lower() == "virtual" for m in marked)  # case-insensitive match
        body = plain(snippet)
        start = flat.find(body)
        assert start != -1, snippet  # verbatim from the passage
        end = start + len(body)
        # clean word boundaries: never starts or ends inside a word
        assert start == 0 or not flat[start - 1].isalnum()
        assert end == len(flat) or not flat[end].isalnum()
        # about 50 characters either side of the (first) term in the snippet
        first = body.lower().find("virtual")
        assert first <= 50 and len(body) - first - len("virtual") <= 50
        assert snippet.startswith("...") == (start > 0)


async def test_at_most_five_highlights_and_case_insensitive(client: Client[Any]) -> None:
    upper = await call(
        client,
        "source.passages",
        {"chunk_ids": ["ohip:subsection:1"], "highlight_terms": ["ASSESSMENT"]},
    )
    lower = await call(
        client,
        "source.passages",
        {"chunk_ids": ["ohip:subsection:1"], "highlight_terms": ["assessment"]},
    )
    # section_A_extracted.json A1 lists many assessments (A003 General assessment, A004, A007, ...)
    assert len(upper["passages"][0]["highlights"]) == 5
    assert upper["passages"][0]["highlights"] == lower["passages"][0]["highlights"]
    assert "**assessment**" in upper["passages"][0]["highlights"][0]


async def test_no_terms_no_highlights_and_duplicates_collapse(client: Client[Any]) -> None:
    out = await call(
        client,
        "source.passages",
        {"chunk_ids": ["ohip:commentary:counselling-limits", "ohip:commentary:counselling-limits"]},
    )
    assert out["total_chunks"] == 1 and out["passages"][0]["highlights"] == []
    # section_A_extracted.json A1: K013 70.10, K033 49.35
    assert "K013 pays 70.10" in out["passages"][0]["text"] and "49.35" in out["passages"][0]["text"]


async def test_some_unknown_ids_are_listed_as_missing(client: Client[Any]) -> None:
    out = await call(
        client,
        "source.passages",
        {
            "chunk_ids": [
                "ohip:commentary:mrp-role",
                "ohip:commentary:no-such-note",
                "cpso-nope:s99",
            ]
        },
    )
    assert [p["chunk_id"] for p in out["passages"]] == ["ohip:commentary:mrp-role"]
    assert out["missing_ids"] == ["ohip:commentary:no-such-note", "cpso-nope:s99"]


async def test_all_unknown_ids_is_not_found_naming_them(client: Client[Any]) -> None:
    message = await call_error(
        client, "source.passages", {"chunk_ids": ["ohip:commentary:nothing", "totally-unknown"]}
    )
    assert "Not found" in message
    assert "ohip:commentary:nothing" in message and "totally-unknown" in message


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"chunk_ids": []}, "at least 1 item"),
        ({"chunk_ids": [f"ohip:commentary:{i}" for i in range(51)]}, "at most 50 items"),
        ({"chunk_ids": [""]}, "chunk_ids.0"),
        ({"chunk_ids": ["ohip:commentary:mrp-role"], "highlight_terms": [""]}, "highlight_terms.0"),
        ({}, "'chunk_ids': this argument is required"),
    ],
)
async def test_input_errors(client: Client[Any], args: dict[str, Any], expected: str) -> None:
    assert expected in await call_error(client, "source.passages", args)


async def test_vector_down_falls_back_to_sql_copies() -> None:
    ids = ["ohip:commentary:mrp-discharge-day", "cpso-virtual-care:s01", "odb:group:0206"]
    healthy = await run_with("source.passages", {"chunk_ids": ids})
    result = await run_with("source.passages", {"chunk_ids": ids}, faults=Faults(vector_fail=True))
    out = result.structured_content
    assert not result.is_error and result.meta["provenance"] == ["sql"]
    assert "vector" in result.meta["path_errors"]
    # the SQL copies rebuild the indexed text exactly
    same = {p["chunk_id"]: p["text"] for p in healthy.structured_content["passages"]}
    for p in out["passages"]:
        assert p["text"] == same[p["chunk_id"]]
    # every Dr. OFF passage has its SQL copy (off_passages), ODB groups included
    assert out["missing_ids"] == [] and len(out["passages"]) == 3
    assert "conflicts" not in healthy.meta  # SQL corroborated the vector payloads


async def test_sql_down_still_serves_vector_payloads() -> None:
    result = await run_with(
        "source.passages",
        {"chunk_ids": ["adp:mobility:205"], "highlight_terms": ["walkers"]},
        faults=Faults(sql_fail=True),
    )
    out = result.structured_content
    assert result.meta["provenance"] == ["vector"]
    assert out["passages"][0]["page"] == 12  # adp_extraction.json adp:mobility:205, page 12
    assert "**walkers**" in out["passages"][0]["highlights"][0]


async def test_both_paths_down_is_a_retry_error_not_not_found() -> None:
    result = await run_with(
        "source.passages",
        {"chunk_ids": ["ohip:commentary:mrp-role"]},
        faults=Faults(sql_fail=True, vector_fail=True),
    )
    assert result.is_error
    assert "could not be retrieved right now" in result.content[0].text
