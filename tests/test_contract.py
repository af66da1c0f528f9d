"""The published contract: the schemas say exactly what the tools accept, errors list every
problem with its field and allowed values, and protocol-level answers follow the MCP spec."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from fastmcp import Client
from mcp.shared.exceptions import MCPError

from reference_server.server import INVALID_PARAMS, project_version
from reference_server.tools.request_model import NON_BLANK
from tests.conftest import call_error
from tests.served_tools import SERVED


async def _schemas(client: Client[Any]) -> dict[str, dict[str, Any]]:
    return {t.name: t.input_schema for t in await client.list_tools()}


def _walk(node: Any, path: str = "") -> Any:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}/{i}")


async def test_every_schema_is_valid_json_schema_with_names_and_descriptions(
    client: Client[Any],
) -> None:
    tools = await client.list_tools()
    assert len(tools) == len(SERVED)
    for tool in tools:
        assert tool.name and tool.description, tool.name
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema or {})


async def test_parameters_are_published_with_their_plain_type(client: Client[Any]) -> None:
    """No `anyOf: [X, null]` and no `$ref`: clients that fill parameters by `type` (the
    Inspector CLI parses array/object values only then) can send lists and objects."""
    for name, schema in (await _schemas(client)).items():
        for path, node in _walk(schema):
            assert "$ref" not in node, (name, path)
            assert {"type": "null"} not in node.get("anyOf", []), (name, path)
        for prop, node in schema.get("properties", {}).items():
            assert "type" in node or "enum" in node, (name, prop)


async def test_free_text_is_published_non_blank_and_bounded(client: Client[Any]) -> None:
    schemas = await _schemas(client)
    for name, field in [
        ("opa.search_sections", "query"),
        ("opa.policy_check", "query"),
        ("schedule.get", "q"),
        ("coverage.answer", "question"),
        ("odb.get", "drug"),
        ("adp.get", "query"),
    ]:
        node = schemas[name]["properties"][field]
        assert node["minLength"] == 1 and node["maxLength"] <= 2000, (name, field)
        assert node["pattern"] == NON_BLANK, (name, field)


async def test_rules_between_fields_are_published_as_required_sets(client: Client[Any]) -> None:
    schemas = await _schemas(client)
    assert schemas["adp.get"]["anyOf"] == [{"required": ["query"]}, {"required": ["device"]}]
    assert {tuple(s["required"]) for s in schemas["odb.get"]["anyOf"]} == {
        ("drug",),
        ("din",),
        ("ingredient",),
        ("drug_class",),
        ("q",),
    }


async def test_schema_valid_program_names_are_accepted(client: Client[Any]) -> None:
    """`program` publishes what the tool recognises; a value the schema accepts is answered."""
    schema = (await _schemas(client))["opa.program_lookup"]
    validator = jsonschema.Draft202012Validator(schema)
    for program in ["Lung", "OBSP mammography", "HPV testing", "colon screening"]:
        assert validator.is_valid({"program": program}), program
        result = await client.call_tool(
            "opa.program_lookup", {"program": program}, raise_on_error=False
        )
        assert not result.is_error, (program, result.content)
    # Spec 000 takes any Ontario Health program; one without local corpus is answered as such,
    # not refused: the schema accepts it and the answer says it is not covered.
    assert validator.is_valid({"program": "kidney care"})
    result = await client.call_tool(
        "opa.program_lookup", {"program": "kidney care"}, raise_on_error=False
    )
    assert not result.is_error and result.structured_content["in_local_corpus"] is False


async def test_every_problem_of_a_call_is_listed(client: Client[Any]) -> None:
    message = await call_error(
        client,
        "opa.search_sections",
        {"query": "   ", "n_results": 99, "source_org": "nope", "bogus": 1},
    )
    assert "4 problems" in message
    assert "'query'" in message and "visible character" in message
    assert "'n_results'" in message and "from 1 to 20" in message
    assert "'source_org'" in message and "'cpso'" in message
    assert "'bogus'" in message and "unknown argument" in message


async def test_cross_field_rule_is_listed_with_field_problems(client: Client[Any]) -> None:
    message = await call_error(client, "odb.get", {"top_k": "5"})
    assert "'top_k'" in message and "an integer from 1 to 10" in message
    assert "'drug'" in message and "'din'" in message and "'q'" in message


async def test_types_are_not_coerced(client: Client[Any]) -> None:
    """ "5" is not an integer and 1 is not a boolean: the server checks what the schema says."""
    message = await call_error(
        client,
        "opa.search_sections",
        {"query": "consent", "n_results": "5", "include_superseded": 1},
    )
    assert "'n_results'" in message and "'include_superseded'" in message


async def test_control_characters_and_whitespace_only_text_are_refused(
    client: Client[Any],
) -> None:
    for text in ["", " \t\n ", "consent\x00", "\x1b[31m"]:
        message = await call_error(client, "opa.policy_check", {"query": text})
        assert "'query'" in message


async def test_unknown_tool_is_a_json_rpc_error(client: Client[Any]) -> None:
    with pytest.raises(MCPError) as info:
        await client.call_tool_mcp("opa.does_not_exist", {})
    assert info.value.code == INVALID_PARAMS
    assert "opa.does_not_exist" in info.value.message


async def test_server_info_version_is_the_project_version(client: Client[Any]) -> None:
    assert client.server_info is not None
    assert client.server_info.version == project_version()
    assert project_version() != "0.0.0"


async def test_tools_list_is_stable_across_calls(client: Client[Any]) -> None:
    first = [t.model_dump() for t in await client.list_tools()]
    for _ in range(3):
        assert [t.model_dump() for t in await client.list_tools()] == first
