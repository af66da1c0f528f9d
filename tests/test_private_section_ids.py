"""The golden checks of opa.ipac_guidance and opa.program_lookup judge facts, not our section ids.

The spec gives a requirement or a recommendation only a `source_section_id`, so a backend that
follows it names each section by an id of its own. Each golden scenario of the two tools is
asked of the reference server, and its answer is re-spelt as such a backend would give it: an
opaque id per section, no URL, no heading, and the published schema without them. Every check
that holds on the reference answer holds on the re-spelt one or is "not checked" (which section
a requirement is from cannot be read from a private id), its ranking is "not measured" rather
than scored 0, and the re-spelt answer with a fact broken still fails.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from evals.run.extract import retrieved_ids
from evals.run.outcome import CallOutcome, ToolInfo
from evals.run.public_keys import only_private_ids
from evals.run.scenario import Scenario, parse_file
from evals.run.scenario_checks import evaluate_checks
from tests.conftest import call

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "opa"
FILES = ("ipac_guidance.yaml", "program_lookup.yaml")
# the fields the spec (seeds 000/001) gives a requirement and a recommendation
SPEC_FIELDS = {
    "level", "text", "rationale", "category", "age_range", "frequency", "conditions",
    "source_section_id",
}  # fmt: skip


def scenarios() -> list[Scenario]:
    found = [s for name in FILES for s in parse_file(GOLDEN / name)]
    return [s for s in found if not s.expects_error and not s.lookups]


def respelt(node: Any) -> Any:
    """The answer with each requirement or recommendation in the spec's fields only, its
    section named by an opaque id of its own."""
    if isinstance(node, list):
        return [respelt(item) for item in node]
    if not isinstance(node, dict):
        return node
    named = isinstance(node.get("source_section_id"), str)
    out = {k: respelt(v) for k, v in node.items() if not named or k in SPEC_FIELDS}
    if named:
        digest = hashlib.sha256(node["source_section_id"].encode()).hexdigest()[:8]
        out["source_section_id"] = f"sec-{digest}"
    return out


def respelt_schema(node: Any) -> Any:
    """The published schema with those items in the spec's fields only."""
    if isinstance(node, list):
        return [respelt_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: respelt_schema(v) for k, v in node.items()}
    props = out.get("properties")
    if isinstance(props, dict) and "source_section_id" in props:
        out["properties"] = {k: v for k, v in props.items() if k in SPEC_FIELDS}
        out["required"] = [k for k in out.get("required", []) if k in SPEC_FIELDS]
    return out


async def asked(client: Client[Any], scenario: Scenario) -> tuple[dict[str, Any], ToolInfo]:
    tools = {t.name: t for t in await client.list_tools()}
    tool = tools[scenario.tool]
    info = ToolInfo(scenario.tool, tool.inputSchema, respelt_schema(tool.outputSchema))
    return await call(client, scenario.tool, dict(scenario.args)), info


def judged(scenario: Scenario, answer: dict[str, Any], info: ToolInfo) -> list[Any]:
    outcome = CallOutcome(structured=answer, is_error=False, text="")
    ids = retrieved_ids(scenario.tool, answer)
    return evaluate_checks(scenario, outcome, info, ids, frozenset({"citations_resolve"}))


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: s.id)
async def test_a_backend_with_its_own_section_ids_passes_on_the_same_facts(
    client: Client[Any], scenario: Scenario
) -> None:
    ours, info = await asked(client, scenario)
    theirs = respelt(ours)
    for mine, other in zip(
        judged(scenario, ours, info), judged(scenario, theirs, info), strict=True
    ):
        if mine.passed:
            assert other.passed, other.message
    if scenario.relevant:
        assert only_private_ids(retrieved_ids(scenario.tool, theirs), scenario.relevant)
        assert not only_private_ids(retrieved_ids(scenario.tool, ours), scenario.relevant)


async def test_the_respelt_answer_still_fails_on_a_wrong_fact(client: Client[Any]) -> None:
    by_id = {s.id: s for s in scenarios()}
    n95 = by_id["opa-ipac-n95-respirator"]
    answer, info = await asked(client, n95)
    theirs = respelt(answer)
    assert all(c.passed for c in judged(n95, theirs, info))
    theirs["requirements"] = [r for r in theirs["requirements"] if "N95" not in r["text"]]
    failed = [c.check for c in judged(n95, theirs, info) if not c.passed]
    assert "mentions" in failed and "any_item" in failed

    cervical = by_id["opa-program-cervical-30-intervals"]
    answer, info = await asked(client, cervical)
    theirs = copy.deepcopy(respelt(answer))
    for rec in theirs["recommendations"]:
        if rec.get("frequency") == "every 5 years":
            rec["frequency"] = "every 3 years"
    assert not all(c.passed for c in judged(cervical, theirs, info))

    # the two publishers' levels for gloves: a conflict that no longer says one of them fails
    gloves = by_id["opa-ipac-ppe-gloves-level-conflict-pho-cpso"]
    answer, info = await asked(client, gloves)
    theirs = copy.deepcopy(respelt(answer))
    assert all(c.passed for c in judged(gloves, theirs, info))
    theirs["conflicts"] = [
        json.loads(json.dumps(c).replace("should", "must")) for c in theirs["conflicts"]
    ]
    assert not all(c.passed for c in judged(gloves, theirs, info))
