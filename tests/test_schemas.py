"""Published schemas: every tool answers structuredContent valid against its outputSchema, the
published schemas match the committed snapshot (schema drift is a visible diff), and every
schema's boundary cases (the calls each fuzz run makes first) can be built and are valid.

Regenerate the snapshot after an intended change: UPDATE_SNAPSHOTS=1 pytest tests/test_schemas.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
from fastmcp import Client

from evals.run.schema_edges import schema_edges

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_schemas.json"

SAMPLES: dict[str, list[dict[str, Any]]] = {
    "opa.search_sections": [
        {"query": "cervical screening"},
        {"query": "consent", "source_org": "cpso", "search_mode": "keyword"},
    ],
    "opa.get_section": [{"section_id": "cpso-virtual-care:s02", "include_children": True}],
    "opa.policy_check": [{"query": "virtual care documentation"}],
    "opa.program_lookup": [
        {"program": "breast", "patient_age": 52},
        {"program": "cervical", "query_type": "pathway"},
    ],
    "opa.ipac_guidance": [{"topic": "reprocessing", "specific_item": "speculum"}],
    "opa.freshness_probe": [{}],
    "opa.clinical_tools": [{"condition": "copd", "include_sections": True}],
    "schedule.get": [{"q": "discharge day MRP", "codes": ["C124"]}],
    "adp.get": [{"query": "power wheelchair funding", "patient_income": 19000}],
    "odb.get": [{"drug": "atorvastatin"}, {"q": "cheapest statin", "drug_class": "statin"}],
    "source.passages": [{"chunk_ids": ["cpso-virtual-care:s01"], "highlight_terms": ["virtual"]}],
    "coverage.answer": [{"question": "Can I bill C124 for discharge as MRP?"}],
}


async def _published(client: Client[Any]) -> dict[str, dict[str, Any]]:
    return {
        t.name: {"inputSchema": t.input_schema, "outputSchema": t.output_schema}
        for t in await client.list_tools()
    }


async def test_structured_content_validates_against_output_schema(client: Client[Any]) -> None:
    schemas = await _published(client)
    checked = 0
    for name, schema in schemas.items():
        for args in SAMPLES[name]:
            result = await client.call_tool(name, args, raise_on_error=False)
            assert not result.is_error, (name, result.content)
            jsonschema.validate(result.structured_content, schema["outputSchema"])
            checked += 1
    assert checked >= len(schemas)


async def test_schemas_match_snapshot(client: Client[Any]) -> None:
    current = await _published(client)
    if os.environ.get("UPDATE_SNAPSHOTS") or not SNAPSHOT.exists():
        SNAPSHOT.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
    assert json.loads(SNAPSHOT.read_text()) == json.loads(json.dumps(current)), (
        "tool schemas changed: review and UPDATE_SNAPSHOTS=1"
    )


def _max_length_fields(node: dict[str, Any], path: str = "") -> list[tuple[str, int]]:
    """(field, maxLength) for every string with a maxLength, nested objects and items too."""
    found = []
    if node.get("type") == "string" and "maxLength" in node:
        found.append((path, int(node["maxLength"])))
    for name, child in (node.get("properties") or {}).items():
        found += _max_length_fields(child, f"{path}.{name}" if path else name)
    if isinstance(node.get("items"), dict):
        found += _max_length_fields(node["items"], f"{path}[]")
    return found


async def test_every_schema_edge_is_built_and_valid(client: Client[Any]) -> None:
    schemas = await _published(client)
    for name, schema in schemas.items():
        made = schema_edges(schema["inputSchema"])
        assert made.edges and not made.dropped, (name, made.dropped)
        for edge in made.edges:
            jsonschema.validate(edge.args, schema["inputSchema"])
        labels = {e.label for e in [*made.edges, *made.repeats]}
        for path, longest in _max_length_fields(schema["inputSchema"]):
            for style in ("words", "codepoints"):
                assert f"{path}: maxLength {longest} {style}" in labels, (name, path, style)
