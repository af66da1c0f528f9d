"""The independent OPA backend's opa.ipac_guidance (examples/alt_opa/ipac.py): levels from the
PHO's own wording, topics by section headings, specific_item narrowing, checklists, conflicts
with CPSO, argument errors and the spec-shaped output.

It reads the publishers' extracts in ../shared/data/opa (or ALT_OPA_DATA); without them there
is nothing to read, so the module is skipped.
"""

from __future__ import annotations

from typing import Any

import pytest
from alt_opa_kit import skip_without_extracts, validated
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pydantic import JsonValue

from examples.alt_opa.corpus import Corpus
from examples.alt_opa.ipac import (
    MAY,
    MUST,
    SHOULD,
    IpacGuide,
    level_of,
    same_practice,
    topic_of_heading,
)
from examples.alt_opa.server import Backend, build_server, load_schemas

skip_without_extracts()

TOOL = "opa.ipac_guidance"
PHO = "https://www.publichealthontario.ca/"
SPEC_FIELDS = {
    "provenance",
    "confidence",
    "topic",
    "setting",
    "requirements",
    "best_practices",
    "checklists",
    "references",
    "citations",
    "conflicts",
}


def ask(backend: Backend, **args: JsonValue) -> dict[str, Any]:
    return validated(TOOL, backend.ipac_guidance(dict(args)))


def headings(corpus: Corpus, out: dict[str, Any]) -> set[str]:
    return {corpus.by_id[r["source_section_id"]].heading for r in out["requirements"]}


# ---------------------------------------------------------------------- levels


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("Soap and water must be used when hands are visibly soiled.", MUST),
        ("Health care providers must not wear artificial nails.", MUST),
        ("Biomedical waste storage areas shall be locked.", MUST),
        ("A surgical mask is required when performing an aseptic procedure.", MUST),
        ("Gloves should be worn if contact with blood is anticipated.", SHOULD),
        ("Moistened towelettes may be used to remove visible soil.", MAY),
        ("Sterilization destroys all microbial life.", None),
        ("Inappropriate use of liquids may result in fires.", None),
    ],
)
def test_level_from_the_sources_wording(text: str, level: str | None) -> None:
    assert level_of(text) == level


def test_every_requirement_states_its_level_in_its_own_words(backend: Backend) -> None:
    out = ask(backend, topic="hand_hygiene")
    assert out["requirements"]
    for r in out["requirements"]:
        assert level_of(r["text"]) == r["level"]


# ---------------------------------------------------------------------- topics


@pytest.mark.parametrize(
    ("heading", "topic"),
    [
        ("Hand Washing Sinks", "hand_hygiene"),
        ("Gloves", "ppe"),
        ("Airborne Transmission and Precautions", "ppe"),
        ("Monitoring the Sterilization Process", "reprocessing"),
        ("Instrument Cleaning", "reprocessing"),
        ("Sharps Containers", "environmental"),
    ],
)
def test_topic_by_the_heading_words(heading: str, topic: str) -> None:
    assert topic in topic_of_heading(heading)


def test_instrument_cleaning_is_reprocessing_not_environmental() -> None:
    assert topic_of_heading("Instrument Cleaning") == {"reprocessing"}


def test_each_topic_answers_from_its_own_sections(backend: Backend, corpus: Corpus) -> None:
    hands = headings(corpus, ask(backend, topic="hand_hygiene"))
    ppe = headings(corpus, ask(backend, topic="ppe"))
    assert "Hand Hygiene" in hands and "Gloves" not in hands
    assert "Gloves" in ppe and "Hand Hygiene" not in ppe


def test_procedure_room_adds_the_surgical_sections(backend: Backend, corpus: Corpus) -> None:
    office = headings(corpus, ask(backend, topic="hand_hygiene"))
    room = headings(corpus, ask(backend, topic="hand_hygiene", setting="procedure_room"))
    assert not any("Surgical" in h for h in office)
    assert any("Surgical" in h for h in room) and office <= room
    clinic = ask(backend, topic="hand_hygiene", setting="clinic")
    assert clinic["setting"] == "clinic" and headings(corpus, clinic) == office


# ---------------------------------------------------------------------- narrowing, checklists


def test_specific_item_narrows_to_requirements_naming_it(backend: Backend) -> None:
    whole = ask(backend, topic="ppe")
    n95 = ask(backend, topic="ppe", specific_item="N95 respirator")
    assert 0 < len(n95["requirements"]) < len(whole["requirements"])
    assert all(
        "n95" in r["text"].lower() or "respirator" in r["text"].lower() for r in n95["requirements"]
    )
    assert "N95" in n95["requirements"][0]["text"]


def test_an_item_named_nowhere_leaves_the_topic_and_lowers_confidence(backend: Backend) -> None:
    whole = ask(backend, topic="reprocessing")
    odd = ask(backend, topic="reprocessing", specific_item="zzyzx gadget")
    assert odd["requirements"] == whole["requirements"]
    assert odd["confidence"] <= 0.3 < whole["confidence"]


def test_checklists_come_with_a_frequency_and_can_be_left_out(backend: Backend) -> None:
    out = ask(backend, topic="environmental")
    assert out["checklists"]
    assert {c["frequency"] for c in out["checklists"]} <= {
        "per_use",
        "daily",
        "weekly",
        "unspecified",
    }
    assert any(c["frequency"] == "per_use" for c in out["checklists"])
    none = ask(backend, topic="environmental", include_checklists=False)
    assert none["checklists"] == [] and none["requirements"] == out["requirements"]


def test_references_are_pho_documents_with_official_urls(backend: Backend) -> None:
    out = ask(backend, topic="reprocessing")
    assert out["references"]
    assert all(r["url"].startswith(PHO) and r["date"] for r in out["references"])
    assert all(c["url"].startswith(PHO) for c in out["citations"])


# ---------------------------------------------------------------------- conflicts


def test_same_practice_needs_shared_content_terms() -> None:
    pho = "Gloves should be worn if it is anticipated that hands will be in contact with blood, body fluids, secretions or excretions."
    cpso = "wearing gloves if there is expected exposure to blood, body fluids, secretions, skin rash or non-intact skin;"
    assert same_practice(pho, cpso)
    assert not same_practice(pho, "Sharps shall be discarded into a puncture-resistant container.")


def test_a_level_difference_with_cpso_is_a_conflict_and_lowers_confidence(
    backend: Backend, corpus: Corpus
) -> None:
    out = ask(backend, topic="ppe")
    assert out["conflicts"]
    for c in out["conflicts"]:
        assert "PHO" in c["resolution"] and "CPSO" in c["resolution"]
        assert {"must", "should"} <= set(c["field"].replace("'", " ").split())
    guide = IpacGuide(corpus)
    assert guide.confidence(3, True, False) == round(guide.confidence(3, False, False) - 0.1, 3)


# ---------------------------------------------------------------------- shape and errors


def test_answer_has_exactly_the_spec_fields(backend: Backend) -> None:
    out = ask(backend, topic="reprocessing", setting="procedure_room", specific_item="sterilizer")
    assert set(out) == SPEC_FIELDS
    assert out["topic"] == "reprocessing" and out["setting"] == "procedure_room"
    assert out["provenance"] == ["sql"]
    assert set(out["requirements"][0]) == {"level", "text", "rationale", "source_section_id"}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"topic": "vaccines"}, "topic"),
        ({"topic": "ppe", "setting": "hospital"}, "setting"),
        ({"topic": "ppe", "specific_item": "  "}, "specific_item"),
    ],
)
def test_bad_arguments_name_the_field(
    backend: Backend, args: dict[str, JsonValue], field: str
) -> None:
    with pytest.raises(ToolError, match=f"invalid {field}"):
        backend.ipac_guidance(args)


async def test_over_mcp_the_schema_is_published_and_enforced(backend: Backend) -> None:
    async with Client(build_server(backend)) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tools[TOOL].input_schema == load_schemas()[TOOL]["inputSchema"]
        result = await client.call_tool(TOOL, {"topic": "hand_hygiene"})
        validated(TOOL, result.structured_content or {})
        with pytest.raises(
            ToolError, match=r"topic.*reprocessing.*ppe.*hand_hygiene.*environmental"
        ):
            await client.call_tool(TOOL, {"topic": "vaccines"})
        with pytest.raises(ToolError, match="include_checklists"):
            await client.call_tool(TOOL, {"topic": "ppe", "include_checklists": "no"})
