"""Checks judge facts in any wording and ids found by asking the backend, never our spelling.

Described cases from a team's backend: its own passage ids, "one service" where we wrote "1",
"48 h" for "48 hours", a citation "Mobility Devices Manual, section 705", and a backend that
cannot say where a fact is (one failure, named once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastmcp import FastMCP

from evals.run.events import EventBus
from evals.run.fact_text import states
from evals.run.id_lookup import IdLookup, fill, pick_ids
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target


@pytest.mark.parametrize(
    ("text", "term", "stated"),
    [
        ("Limited to one service per hospital admission", "1 service per hospital admission", True),
        ("Limited to 1 service per hosp. admission", "1 service per hospital admission", False),
        ("not if discharged within 48 h of admission", "48 hours", True),
        ("not if discharged within 48-hour of admission", "48 hours", True),
        ("not if discharged within 24 hours", "48 hours", False),
        ("ADP pays 75 per cent of the price", "75%", True),
        ("The fee is $20.00 per call", 20, True),
        ("The fee is $20.50 per call", 20, False),
        ("Sitagliptin 100mg tablets", "100 mg", True),
        ("Twice a year", "2", True),
        ("LU code 665 (semaglutide)", "LU 665", True),
        ("LU code 666 (semaglutide)", ["LU 665", "LU 666"], True),
        ("see Jardiance, DIN 02443937", "DIN 02443937", True),
        ("bill C124 on the day of discharge", "C124", True),
        ("Mobility Devices Manual, section 705", "adp:mobility:Section 705", True),
        ("Mobility Devices Manual, section 710", "adp:mobility:Section 705", False),
    ],
)
def test_a_fact_is_stated_in_any_wording(text: str, term: Any, stated: bool) -> None:
    assert states(text, term) is stated


CITING = {
    "citations": [
        {"source": "Schedule", "loc": "fee code C122", "chunk_id": "passage-7"},
        {"source": "Schedule", "loc": "fee code C124", "chunk_id": "passage-9"},
        {"source": "ADP", "loc": "Mobility Devices Manual, section 705", "chunk_id": "adp-12"},
    ]
}


def test_a_lookup_picks_the_backends_own_id_by_public_key() -> None:
    by_code = IdLookup(tool="t", path="citations[*]", key="C124", id="chunk_id", into="chunk_ids")
    assert pick_ids(by_code, CITING) == ["passage-9"]
    by_section = by_code.model_copy(update={"key": "adp:mobility:Section 705"})
    assert pick_ids(by_section, CITING) == ["adp-12"]
    assert pick_ids(by_code.model_copy(update={"key": "C999"}), CITING) == []
    # a list argument keeps what the scenario adds after the ids found; a string takes one id
    schema = {"properties": {"chunk_ids": {"type": "array"}, "section_id": {"type": "string"}}}
    assert fill({"chunk_ids": ["x"]}, "chunk_ids", ["passage-9"], schema) == {
        "chunk_ids": ["passage-9", "x"]
    }
    assert fill({}, "section_id", ["a", "b"], schema) == {"section_id": "a"}


PASSAGES = {
    "passage-9": "C124: $61.15; once per admission, not within 48 h of admission.",
    "passage-7": "C122: $61.15.",
}


def team_backend(*, cites: bool = True) -> FastMCP:
    """A backend with its own ids and wording (the published shape of the two tools)."""
    server = FastMCP("team")

    @server.tool(name="schedule.get")
    def schedule_get(q: str, codes: list[str] | None = None) -> dict[str, Any]:
        return {"items": [], "citations": CITING["citations"] if cites else []}

    @server.tool(name="source.passages")
    def source_passages(chunk_ids: list[str]) -> dict[str, Any]:
        found = [i for i in chunk_ids if i in PASSAGES]
        return {
            "passages": [{"chunk_id": i, "text": PASSAGES[i], "highlights": []} for i in found],
            "missing_ids": [i for i in chunk_ids if i not in PASSAGES],
            "total_chunks": len(found),
        }

    return server


GOLDEN = """
scenarios:
  - id: team-passage-c124
    title: The passage cited for C124 states its fee and the 48-hour rule
    tool: source.passages
    ids_from: {tool: schedule.get, args: {q: C124, codes: [C124]}, path: "citations[*]",
               key: C124, id: chunk_id, into: chunk_ids, grade: 3}
    args: {chunk_ids: [no-such-passage]}
    expect:
      - {check: equals, path: "passages[*].chunk_id", value: [passage-9]}
      - {check: mentions, path: "passages[0].text", value: [C124, 61.15, 48 hours, 1 per admission]}
      - {check: equals, path: missing_ids, value: [no-such-passage]}
    tags: [source, no-citations]
    version: 1
    source: described in the test
"""


async def _run(tmp_path: Path, server: FastMCP) -> Any:
    golden = tmp_path / "golden.yaml"
    golden.write_text(GOLDEN)
    return await execute(
        server_target(server),
        load_scenarios(golden),
        tmp_path / "run",
        options=RunOptions(ragas=False),
        bus=EventBus(),
    )


async def test_a_scenario_asks_the_backend_for_its_own_id_first(tmp_path: Path) -> None:
    log = await _run(tmp_path, team_backend())
    (record,) = [r for r in log.records if r.id == "team-passage-c124"]
    failed = [c for c in record.checks if not c.passed]
    assert record.status == "passed", failed
    assert record.args["chunk_ids"] == ["passage-9", "no-such-passage"]
    assert record.relevant == {"passage-9": 3}


async def test_an_id_the_backend_cannot_name_is_one_failure(tmp_path: Path) -> None:
    log = await _run(tmp_path, team_backend(cites=False))
    (record,) = [r for r in log.records if r.id == "team-passage-c124"]
    assert record.status == "failed"
    assert [(c.check, c.passed) for c in record.checks] == [("ids_from", False)]
    assert "names it" in (record.checks[0].message or "")


def test_a_key_is_matched_as_a_key_not_as_words() -> None:
    policy = "https://www.cpso.on.ca/en/Policies/Virtual-Care"
    advice = policy + "/Advice-to-the-Profession-Virtual-Care"
    assert states(advice, advice) and not states(advice, policy)
    assert not states("fee code C1245", "C124")
