"""The golden set judges a backend written to the spec on its facts, not on our extra fields.

Each golden scenario is asked of the reference server, and its answer is cut to what a backend
written to the spec (seeds 000-002) would publish: every field the tool's descriptor lists as an
extension is removed from the answer and from the published outputSchema. Every check that holds
on the reference answer holds on the cut one or is "not checked", enough checks are still
judged, and a cut answer with a fact broken still fails.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

from fastmcp import Client

from evals.run.extension_fields import ANY, Shape, declares, nodes_at, shape
from evals.run.extract import retrieved_ids
from evals.run.id_lookup import resolve_args
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.scenario import Scenario, parse_file
from evals.run.scenario_checks import evaluate_checks
from evals.run.tool_descriptors import builtin
from ocm_common.golden import TOOLS_SUFFIX
from ocm_common.json_types import JsonSchema

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
DESCRIPTORS = builtin()


def scenarios() -> list[Scenario]:
    files = sorted(p for p in GOLDEN.rglob("*.yaml") if not p.name.endswith(TOOLS_SUFFIX))
    found = [s for path in files for s in parse_file(path)]
    return [s for s in found if not s.expects_error and DESCRIPTORS.of(s.tool).extensions]


def cut(node: Any, steps: Shape) -> None:
    """Remove the field at ``steps`` wherever the answer has it."""
    if not steps:
        return
    step, rest = steps[0], steps[1:]
    if step == ANY:
        for item in node if isinstance(node, list) else []:
            cut(item, rest)
    elif isinstance(node, dict) and step in node:
        if rest:
            cut(node[step], rest)
        else:
            del node[step]


def cut_schema(schema: JsonSchema, steps: Shape) -> None:
    """Remove the field at ``steps`` from the published schema (every object declaring it)."""
    *parent, field = steps
    for node in nodes_at(schema, tuple(parent)):
        props = node.get("properties")
        if field != ANY and isinstance(props, dict) and field in props:
            del props[field]
            required = node.get("required")
            if isinstance(required, list):
                node["required"] = [k for k in required if k != field]


def spec_shaped(tool: str, answer: dict[str, Any], schema: Any) -> tuple[dict[str, Any], Any]:
    answer, schema = copy.deepcopy(answer), copy.deepcopy(schema)
    for extension in DESCRIPTORS.of(tool).extensions:
        cut(answer, shape(extension))
        if isinstance(schema, dict):
            cut_schema(schema, shape(extension))
    return answer, schema


async def asked(client: Client[Any], scenario: Scenario) -> tuple[dict[str, Any], ToolInfo]:
    tools = {t.name: t for t in await client.list_tools()}
    tool = tools[scenario.tool]

    async def call_tool(name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        result = await client.call_tool(name, args, raise_on_error=False)
        return None if result.is_error else result.structured_content

    args = await resolve_args(call_tool, scenario.lookups, dict(scenario.args), tool.input_schema)
    assert args is not None, f"{scenario.id}: its id lookup found nothing"
    answer = await call_tool(scenario.tool, args)
    assert answer is not None, f"{scenario.id}: the reference server answered an error"
    return answer, ToolInfo(scenario.tool, tool.input_schema, tool.output_schema)


def judged(scenario: Scenario, answer: dict[str, Any], info: ToolInfo) -> list[Any]:
    outcome = CallOutcome(structured=answer, is_error=False, text="")
    ids = retrieved_ids(scenario.tool, answer)
    extensions = DESCRIPTORS.of(scenario.tool).extensions
    return evaluate_checks(
        scenario, outcome, info, ids, frozenset({"citations_resolve"}), extensions=extensions
    )


async def test_a_spec_shaped_backend_passes_on_the_same_facts(client: Client[Any]) -> None:
    judged_on_facts: Counter[str] = Counter()
    unchecked: Counter[str] = Counter()
    for scenario in scenarios():
        ours, info = await asked(client, scenario)
        theirs, schema = spec_shaped(scenario.tool, ours, info.output_schema)
        cut_info = ToolInfo(scenario.tool, info.input_schema, schema)
        mine = judged(scenario, ours, info)
        other = judged(scenario, theirs, cut_info)
        for before, after in zip(mine, other, strict=True):
            if before.passed:
                assert after.passed, f"{scenario.id}: {after.message}"
            if not after.implicit:
                (judged_on_facts if after.checked else unchecked)[scenario.tool] += 1
            if before.checked and not after.checked:
                assert "beyond the spec" in (after.message or ""), after.message
    # every tool with extensions is still judged, mostly on spec fields
    for tool in {s.tool for s in scenarios()}:
        assert judged_on_facts[tool] > unchecked[tool], (tool, judged_on_facts, unchecked)


async def test_the_cut_answer_still_fails_on_a_wrong_fact(client: Client[Any]) -> None:
    by_id = {s.id: s for s in scenarios()}
    superseded = next(s for s in by_id.values() if s.id.startswith("opa-fresh"))
    answer, info = await asked(client, superseded)
    theirs, schema = spec_shaped(superseded.tool, answer, info.output_schema)
    cut_info = ToolInfo(superseded.tool, info.input_schema, schema)
    assert all(c.passed for c in judged(superseded, theirs, cut_info))
    assert theirs["stale_documents"] and "staleness" not in theirs["stale_documents"][0]
    theirs["stale_documents"][0]["title"] = "Some Other Guideline"
    assert not all(c.passed for c in judged(superseded, theirs, cut_info))


async def test_every_listed_extension_is_a_field_the_reference_server_publishes(
    client: Client[Any],
) -> None:
    """A listed extension our schema does not declare is a typo that would exempt nothing; a
    key of ours inside a free-form dict is declared through its parent."""
    schemas = {t.name: t.output_schema for t in await client.list_tools()}
    for tool, descriptor in DESCRIPTORS.items():
        for extension in descriptor.extensions:
            steps = shape(extension)
            assert declares(schemas[tool], steps) or declares(schemas[tool], steps[:-1]), (
                tool,
                extension,
            )
