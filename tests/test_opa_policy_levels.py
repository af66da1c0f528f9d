"""CPSO expectation/advice levels: derived for every section at index time, and opa.policy_check's
'expectations ranked higher than advice' applied to the whole candidate pool."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from fastmcp import Client

from reference_server.config import Settings
from reference_server.index.opa_builder import policy_level
from reference_server.tools.opa_policy_check import POOL_FLOOR, expectations_first
from reference_server.tools.section_merge import SectionHit
from tests.conftest import call
from tests.opa_rows import section_row

POLICY = {"source_org": "cpso", "document_type": "policy"}
ADVICE = {"source_org": "cpso", "document_type": "advice"}


@pytest.mark.parametrize(
    "doc,section,expected",
    [
        (POLICY, {"policy_level": "advice", "text": "Physicians must"}, "advice"),  # authored wins
        (ADVICE, {"text": "Hospitals are required to disclose critical incidents."}, "advice"),
        (POLICY, {"text": "Physicians must obtain consent."}, "expectation"),
        (POLICY, {"text": "Physicians shall not charge."}, "expectation"),
        (POLICY, {"text": "Physicians are advised to document."}, "advice"),
        (
            POLICY,
            {"text": "In this policy, a boundary marks the limit of a safe relationship."},
            "expectation",
        ),
        ({"source_org": "pho", "document_type": "guideline"}, {"text": "Staff must wash."}, None),
    ],
)
def test_policy_level_is_derived_for_every_cpso_section(
    doc: dict[str, Any], section: dict[str, Any], expected: str | None
) -> None:
    assert policy_level(doc, section) == expected


def test_index_stores_a_level_for_every_cpso_chunk(settings: Settings) -> None:
    conn = sqlite3.connect(f"file:{settings.opa_db}?mode=ro", uri=True)
    try:
        missing, total = conn.execute(
            "SELECT SUM(policy_level IS NULL), COUNT(*) FROM opa_sections WHERE source_org = 'cpso'"
        ).fetchone()
        mismatched = conn.execute(
            """SELECT COUNT(*) FROM opa_sections
               WHERE source_org = 'cpso' AND document_type = 'advice' AND policy_level != 'advice'"""
        ).fetchone()[0]
    finally:
        conn.close()
    assert total > 900 and missing == 0 and mismatched == 0


def _hit(section_id: str, level: str, score: float) -> SectionHit:
    return SectionHit(
        section_id, section_id, section_row(section_id, policy_level=level), score=score
    )


def test_expectations_first_orders_the_pool_before_the_cut() -> None:
    hits = [
        _hit("adv-a", "advice", 1.0),
        _hit("adv-b", "advice", 0.9),
        _hit("exp-c", "expectation", 0.8),  # in the pool (>= POOL_FLOOR x best): jumps both advice
        _hit("exp-d", "expectation", POOL_FLOOR * 1.0 - 0.01),  # below the pool floor: stays last
    ]
    assert [h.section_id for h in expectations_first(hits)] == ["exp-c", "adv-a", "adv-b", "exp-d"]
    assert [h.section_id for h in expectations_first(hits)[:2]] == ["exp-c", "adv-a"]
    assert expectations_first([]) == []


@pytest.mark.asyncio
async def test_policy_check_top3_keeps_the_pool_expectations(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.policy_check",
        {"query": "Continuity of care requirements when leaving practice", "n_results": 3},
    )
    levels = [p["policy_level"] for p in out["policies"]]
    assert levels == sorted(
        levels, key=lambda lv: lv != "expectation"
    )  # no advice above an expectation
    assert "Closing a Medical Practice" in {p["policy_title"] for p in out["policies"]}


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "level,query,section",
    [
        (
            "expectation",
            "What counts as discrimination when accepting new patients?",
            "cpso-accepting-new-patients:s01",
        ),
        (
            "advice",
            "Which priority populations should physicians consider when accepting new patients?",
            "cpso-accepting-new-patients-advice:s02",
        ),
    ],
)
async def test_level_filter_keeps_sections_without_an_authored_level(
    client: Client[Any], level: str, query: str, section: str
) -> None:
    out = await call(
        client, "opa.policy_check", {"query": query, "policy_level": level, "n_results": 5}
    )
    assert {p["policy_level"] for p in out["policies"]} == {level}
    assert any(p["section_id"].split(":c")[0] == section for p in out["policies"])
