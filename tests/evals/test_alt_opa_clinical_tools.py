"""The independent OPA backend's `opa.clinical_tools` (examples/alt_opa/cep_catalogue.py): the
CEP tools read from their extracts, the filters, sections and bad arguments.

It reads the publishers' extracts in ../shared/data/opa (or ALT_OPA_DATA); without them there
is nothing to read, so the module is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from alt_opa_kit import skip_without_extracts, validated
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pydantic import JsonValue

from examples.alt_opa.cep_catalogue import (
    Catalogue,
    CepExtract,
    category_key,
    read_features,
    read_tool,
    strip_glued_headings,
)
from examples.alt_opa.corpus import Corpus, data_folder
from examples.alt_opa.server import Backend, build_server, load_schemas

skip_without_extracts()

TOOLS = "opa.clinical_tools"
CEP = "https://tools.cep.health/tool/"
DEMENTIA = CEP + "dementia-diagnosis/"
INSOMNIA = CEP + "management-of-chronic-insomnia/"


@pytest.fixture(scope="module")
def catalogue(corpus: Corpus) -> Catalogue:
    return Catalogue.build(corpus)


def extract(slug: str) -> CepExtract:
    data: CepExtract = json.loads(
        (data_folder() / "cep" / f"{slug}_extracted.json").read_text(encoding="utf-8")
    )
    return data


def validate(result: Mapping[str, object]) -> None:
    validated(TOOLS, result)


def call(backend: Backend, **args: JsonValue) -> dict[str, Any]:
    return validated(TOOLS, backend.clinical_tools(dict(args)))


def by_url(result: Mapping[str, Any], url: str) -> dict[str, Any]:
    row: dict[str, Any] = next(t for t in result["tools"] if t["url"] == url)
    return row


# ---------------------------------------------------------------------- reading an extract


def test_features_and_instruments_are_read_from_the_dementia_extract(
    catalogue: Catalogue,
) -> None:
    data = extract("dementia-diagnosis")
    tool = next(t for t in catalogue.tools if t.url == DEMENTIA)
    declared = data.get("features") or {}
    assert tool.has("algorithm") is declared["has_algorithm"] is True
    assert tool.has("calculator") is declared["has_calculator"] is False
    assert tool.has("checklist") is declared["has_checklist"] is True
    # the navigation entry "Assessment algorithm" carries the anchor #algorithm
    assert tool.feature_link("algorithm") == {"available": True, "url": DEMENTIA + "#algorithm"}
    assert tool.feature_link("calculator") == {"available": False, "url": None}
    assert tool.feature_link("checklist") == {"available": True, "url": DEMENTIA}
    listed = (data.get("key_content") or {}).get("assessment_tools") or []
    assert list(tool.screening_tools[: len(listed)]) == listed
    assert {"MoCA", "Mini-Cog"} <= set(tool.screening_tools)
    assert tool.category == data.get("tool_category") == "mental_health"
    assert tool.last_updated == "2025-07-31"  # "July 31, 2025" in the extract
    # reference lists and acknowledgements are not sections; sub-headings glued to the
    # start of a summary are taken off
    titles = [s.title for s in tool.sections]
    assert titles == ["Dementia", "Common dementia subtypes", "Referrals", "Disclosing a diagnosis"]
    assert tool.sections[0].summary.startswith("Dementia (major neurocognitive disorder)")
    assert tool.summary == tool.sections[0].summary


def test_an_instrument_named_in_a_summary_is_a_screening_tool(catalogue: Catalogue) -> None:
    """The insomnia extract lists no instruments; its text names the Insomnia Severity
    Index (ISI)."""
    assert not (extract("management-of-chronic-insomnia").get("key_content") or {}).get(
        "assessment_tools"
    )
    tool = next(t for t in catalogue.tools if t.url == INSOMNIA)
    assert "ISI" in tool.screening_tools


def test_a_heading_naming_a_feature_makes_it_available_with_its_anchor() -> None:
    data: CepExtract = {
        "tool_category": "chronic_disease",
        "features": {"has_algorithm": False, "has_calculator": False, "has_checklist": False},
        "sections": [
            {
                "heading": "Management",
                "summary": "Start low. Use the Patient Health Questionnaire (PHQ-9) each visit.",
                "subsections": [
                    {"heading": "Treatment algorithm2,3", "anchor": "#treat algo"},
                    {"heading": "Insulin initiation checklist", "anchor": None},
                ],
            },
            {"heading": "References", "summary": "[1] A paper."},
        ],
    }
    features = read_features(data)
    assert features == {"algorithm": "treat algo", "calculator": None, "checklist": True}
    tool = read_tool("doc0001", "A tool", CEP + "a-tool/", None, data)
    assert tool.feature_link("algorithm")["url"] == CEP + "a-tool/#treat%20algo"
    assert tool.feature_link("checklist") == {"available": True, "url": CEP + "a-tool/"}
    assert [s.title for s in tool.sections] == ["Management"]
    assert tool.sections[0].anchor == "treat algo"  # where the section's text starts
    assert tool.screening_tools == ("PHQ-9",)


def test_glued_sub_headings_and_category_spellings() -> None:
    glued = "Assessment algorithmAssessment approachDiagnosis Dementia is a syndrome."
    headings = ["Assessment algorithm2,3,5-8", "Assessment approach", "Diagnosis"]
    assert strip_glued_headings(glued, headings) == "Dementia is a syndrome."
    assert strip_glued_headings("No headings here.", headings) == "No headings here."
    assert category_key(" Mental Health") == category_key("mental-health") == "mental_health"


def test_tool_ids_are_the_corpus_document_ids_of_the_cep_tools(
    catalogue: Catalogue, corpus: Corpus
) -> None:
    cep = {d.doc_id: d for d in corpus.documents.values() if d.org == "cep"}
    assert {t.tool_id for t in catalogue.tools} == set(cep)
    for tool in catalogue.tools:
        assert tool.url == cep[tool.tool_id].url and tool.url.startswith(CEP)


# ---------------------------------------------------------------------- filters


def test_condition_ranks_the_tool_named_for_it_first(backend: Backend) -> None:
    out = call(backend, condition="dementia")
    assert out["tools"][0]["url"] == DEMENTIA
    assert out["total_tools"] == len(out["tools"]) >= 2
    assert "dementia" in out["query_interpretation"]
    assert all(t["sections"] == [] for t in out["tools"])  # include_sections defaults to false


def test_condition_needs_every_word(backend: Backend, catalogue: Catalogue) -> None:
    both = {t["url"] for t in call(backend, condition="chronic pain")["tools"]}
    pain = {t["url"] for t in call(backend, condition="pain")["tools"]}
    chronic = {t["url"] for t in call(backend, condition="chronic")["tools"]}
    assert both == pain & chronic and both < pain


def test_a_condition_no_tool_mentions_is_an_empty_answer(backend: Backend) -> None:
    out = call(backend, condition="psoriasis")
    assert out["tools"] == [] and out["total_tools"] == 0


@pytest.mark.parametrize("feature", ["algorithm", "calculator", "checklist"])
def test_feature_type_keeps_exactly_the_tools_with_it(
    backend: Backend, catalogue: Catalogue, feature: str
) -> None:
    key = {"algorithm": "assessment_algorithm"}.get(feature, feature)
    out = call(backend, feature_type=feature)
    assert out["total_tools"] == sum(1 for t in catalogue.tools if t.has(feature)) > 0
    for tool in out["tools"]:
        link = tool["key_features"][key]
        assert link["available"] is True and link["url"].startswith(tool["url"])
    names = [t["name"].casefold() for t in out["tools"]]
    assert names == sorted(names)  # no condition: name order


def test_the_dementia_tool_has_no_calculator(backend: Backend) -> None:
    urls = {t["url"] for t in call(backend, feature_type="calculator")["tools"]}
    assert DEMENTIA not in urls and CEP + "management-of-chronic-non-cancer-pain/" in urls


def test_category_takes_the_extracts_own_values(backend: Backend) -> None:
    out = call(backend, category="Mental Health", feature_type="algorithm")
    assert out["tools"] and {t["category"] for t in out["tools"]} == {"mental_health"}
    assert DEMENTIA in {t["url"] for t in out["tools"]}


def test_tool_name_matches_words_of_the_name(backend: Backend) -> None:
    out = call(backend, tool_name="heart failure")
    assert [t["name"] for t in out["tools"]] == ["Managing Heart Failure in Primary Care"]
    assert call(backend, tool_name="dementia", condition="insomnia")["tools"] == []


def test_include_sections_links_each_section_on_the_tool_page(backend: Backend) -> None:
    out = call(backend, condition="dementia", include_sections=True)
    tool = by_url(out, DEMENTIA)
    assert tool["sections"][0]["title"] == "Dementia"
    assert all(s["url"].startswith(DEMENTIA) and s["summary"] for s in tool["sections"])
    assert tool["sections"][0]["url"] == DEMENTIA + "#algorithm"
    assert tool["quick_links"] == {"full_tool": DEMENTIA, "pdf_version": None}


def test_every_tool_answer_is_valid_against_the_output_schema(backend: Backend) -> None:
    out = call(backend, include_sections=True)
    assert out["total_tools"] == len(out["tools"]) > 30


# ---------------------------------------------------------------------- errors


def test_an_unknown_category_names_the_allowed_ones(backend: Backend) -> None:
    with pytest.raises(ToolError, match=r"category 'cardiology'.*chronic_disease.*mental_health"):
        backend.clinical_tools({"category": "cardiology"})


def test_a_condition_of_stop_words_only_is_an_error_naming_the_field(backend: Backend) -> None:
    with pytest.raises(ToolError, match=r"condition 'the'"):
        backend.clinical_tools({"condition": "the"})


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"feature_type": "video"}, r"feature_type.*algorithm.*calculator.*checklist"),
        ({"category": "cardiology"}, r"category.*allowed.*mental_health"),
        ({"include_sections": "yes"}, r"include_sections"),
        ({"condition": ""}, r"condition"),
        ({"tool_name": 7}, r"tool_name"),
        ({"n_results": 5}, r"n_results"),  # not a spec field of this tool
    ],
)
async def test_bad_arguments_are_tool_errors_naming_the_field(
    backend: Backend, args: dict[str, Any], named: str
) -> None:
    async with Client(build_server(backend)) as client:
        result = await client.call_tool(TOOLS, args, raise_on_error=False)
    assert result.is_error
    assert re.search(named, result.content[0].text)  # type: ignore[union-attr]


# ---------------------------------------------------------------------- over MCP


async def test_clinical_tools_publishes_the_spec_fields_only(backend: Backend) -> None:
    async with Client(build_server(backend)) as client:
        tool = {t.name: t for t in await client.list_tools()}[TOOLS]
        result = await client.call_tool(TOOLS, {"condition": "insomnia"})
    assert tool.input_schema == load_schemas()[TOOLS]["inputSchema"]
    assert set(tool.input_schema["properties"]) == {
        "condition",
        "tool_name",
        "category",
        "feature_type",
        "include_sections",
    }
    output = tool.output_schema or {}
    assert set(output["properties"]) == {"tools", "total_tools", "query_interpretation"}
    row = output["properties"]["tools"]["items"]
    assert set(row["properties"]) == {
        "tool_id",
        "name",
        "url",
        "last_updated",
        "category",
        "summary",
        "key_features",
        "sections",
        "quick_links",
    }
    out = result.structured_content or {}
    validate(out)
    assert out["tools"][0]["url"] == INSOMNIA
