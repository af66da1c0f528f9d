"""The tool-search server over committed catalogues (seed 003's 17 tools and the public
servers' tools): the four tools listed and called through the in-memory client, errors that
name every problem, the three definition formats, and unique ids across sources. Expected
tools come from the catalogues' own definitions (seed 003's parameter tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from tool_search.records import parameters_of
from tool_search.server import build_server
from tool_search.service import ToolSearchService
from tool_search.sources import read_definition_file, read_sources
from tool_search.text import split_name

CATALOGUES = Path("tool_search/catalogues")
TRIALS = CATALOGUES / "clinical_trials_assistant.json"
FOUR = {
    "search_mcp_tools",
    "get_tool_details",
    "list_tool_categories",
    "search_tools_by_capability",
}
# Seed 003's tables: the tools whose one required parameter is the NCT identifier.
NCT_TOOLS = {
    "trials/get_trial_details",
    "trials/get_eligibility_criteria",
    "trials/get_trial_locations",
}


@pytest.fixture(scope="module")
def service() -> ToolSearchService:
    specs = [str(TRIALS), *(str(p) for p in sorted(CATALOGUES.glob("public_*.json")))]
    return ToolSearchService.from_specs(specs, golden=None)


async def _call(service: ToolSearchService, tool: str, args: dict[str, Any]) -> Any:
    async with Client(build_server(service)) as client:
        return await client.call_tool(tool, args, raise_on_error=False)


def test_seed003_catalogue_has_its_seventeen_tools_with_the_tables_required_fields() -> None:
    catalogue = read_definition_file(TRIALS)
    assert len(catalogue.tools) == 17
    by_name = {t.name: t for t in catalogue.tools}
    assert by_name["search_trials"].required == ["condition"]
    assert by_name["calculate_distance"].required == ["lat1", "lon1", "lat2", "lon2"]
    params = {p.name: p for p in by_name["search_trials"].parameters}
    assert params["distance_miles"].default == 100 and params["max_results"].default == 50
    assert params["status"].default == ["RECRUITING"]
    assert by_name["get_health_import_summary"].parameters == []


def test_three_definition_formats_read_alike(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "description": "an x"}},
        "required": ["x"],
    }
    forms = {
        "mcp.json": {"tools": [{"name": "t", "description": "d", "inputSchema": schema}]},
        "anthropic.json": [{"name": "t", "description": "d", "input_schema": schema}],
        "openai.json": [
            {
                "type": "function",
                "function": {"name": "t", "description": "d", "parameters": schema},
            }
        ],
    }
    read = []
    for name, body in forms.items():
        (tmp_path / name).write_text(json.dumps(body))
        tool = read_definition_file(tmp_path / name, server="s").tools[0]
        read.append((tool.tool_id, tool.description, tool.required, tool.parameters))
    assert read[0] == read[1] == read[2] == ("s/t", "d", ["x"], parameters_of(schema))


def test_tool_ids_stay_unique_when_two_sources_share_a_server_name() -> None:
    first, second = read_sources([str(TRIALS), str(TRIALS)])
    assert first.server == "trials" and second.server == "trials-2"
    assert {t.tool_id for t in first.tools}.isdisjoint({t.tool_id for t in second.tools})


def test_names_split_on_dots_underscores_and_camel_case() -> None:
    assert split_name("opa.search_sections") == "opa search sections"
    assert split_name("getTrialDetails") == "get trial details"


async def test_four_tools_are_listed_read_only_with_output_schemas(
    service: ToolSearchService,
) -> None:
    async with Client(build_server(service)) as client:
        tools = {t.name: t for t in await client.list_tools()}
    assert set(tools) == FOUR
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.output_schema and tool.output_schema.get("type") == "object"


async def test_search_returns_ids_scores_and_matched_fields(service: ToolSearchService) -> None:
    result = await _call(
        service,
        "search_mcp_tools",
        {"query": "distance in miles between two points", "max_results": 3},
    )
    assert not result.is_error
    top = result.structured_content["results"][0]
    assert top["tool_id"] == "trials/calculate_distance"
    assert top["server"] == "trials" and top["name"] == "calculate_distance"
    assert "mile" in top["matched"]["fields"]["description"]
    assert result.structured_content["category_breakdown"]


async def test_keyword_mode_returns_only_tools_sharing_a_word(service: ToolSearchService) -> None:
    result = await _call(
        service, "search_mcp_tools", {"query": "haversine", "search_mode": "keyword"}
    )
    ids = [r["tool_id"] for r in result.structured_content["results"]]
    assert ids == ["trials/calculate_distance"]


async def test_a_repeated_search_is_answered_from_the_cache(service: ToolSearchService) -> None:
    args = {"query": "git commit history of a repository", "max_results": 2}
    first = await _call(service, "search_mcp_tools", args)
    second = await _call(service, "search_mcp_tools", args)
    assert first.structured_content["cached"] is False
    assert second.structured_content["cached"] is True
    assert first.structured_content["results"] == second.structured_content["results"]


async def test_every_problem_of_a_call_is_named_with_its_field(service: ToolSearchService) -> None:
    bad = {"query": " ", "category": "nope", "max_results": 51, "search_mode": "fuzzy", "extra": 1}
    result = await _call(service, "search_mcp_tools", bad)
    assert result.is_error
    text = result.content[0].text
    for field in ("'query'", "'category'", "'max_results'", "'search_mode'", "'extra'"):
        assert field in text, text
    assert "'clinical_trials'" in text  # the category's allowed values are this catalogue's


async def test_an_unknown_tool_id_is_a_tool_error(service: ToolSearchService) -> None:
    result = await _call(service, "get_tool_details", {"tool_id": "trials/no_such_tool"})
    assert result.is_error and "Not found" in result.content[0].text


async def test_details_carry_schema_examples_and_workflow(service: ToolSearchService) -> None:
    result = await _call(service, "get_tool_details", {"tool_id": "search_trials"})
    details = result.structured_content
    assert details["tool_id"] == "trials/search_trials"
    assert details["input_schema"]["required"] == ["condition"]
    assert details["examples"][0]["arguments"] == {"condition": "non-small cell lung cancer"}
    assert set(details["relationships"]["complements"]) >= NCT_TOOLS


async def test_capability_search_keeps_tools_taking_the_parameter(
    service: ToolSearchService,
) -> None:
    result = await _call(
        service,
        "search_tools_by_capability",
        {"capability_description": "trial information", "required_parameters": ["NCT-id"]},
    )
    hits = result.structured_content["results"]
    assert {h["tool_id"] for h in hits} == NCT_TOOLS
    assert all(h["parameter_matches"] == {"NCT-id": "nct_id"} for h in hits)


async def test_categories_count_every_tool_once(service: ToolSearchService) -> None:
    result = await _call(service, "list_tool_categories", {})
    body = result.structured_content
    assert sum(c["tool_count"] for c in body["categories"]) == body["total_tools"] == 17 + 37
    assert body["servers"]["trials"] == 17
