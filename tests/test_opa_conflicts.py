"""opa.ipac_guidance surfaces conflicts: requirement levels that disagree between
PHO and CPSO (or PHO's two documents), and SQL/vector metadata that disagree (a stale index)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastmcp import Client

from reference_server.retrieval.opa_section_rows import IpacBlock
from reference_server.scoring.conflicts import (
    Statement,
    StatementIndex,
    level_conflicts,
    statements_from_text,
)
from reference_server.tools.section_merge import SectionHit, metadata_conflicts
from tests.conftest import call
from tests.opa_rows import section_row

PHO_GLOVES = Statement(
    "should",
    "Wear gloves when hands are expected to contact blood or body fluids.",
    "pho-office",
    "PHO: Office Practice",
)
CPSO_TEXT = (
    "Physicians must wear gloves when contact with blood or body fluids is expected. "
    "Offices are described in the appendix. Staff should keep gloves stocked at reception."
)


def test_statements_keep_only_sentences_that_state_a_level() -> None:
    got = statements_from_text(CPSO_TEXT, "cpso-ipac", "CPSO: IPAC policy")
    assert [(s.level, s.text[:18]) for s in got] == [
        ("must", "Physicians must we"),
        ("should", "Staff should keep "),
    ]


def test_level_conflict_on_the_same_item_and_practice() -> None:
    others = statements_from_text(CPSO_TEXT, "cpso-ipac", "CPSO: IPAC policy")
    (conflict,) = level_conflicts([PHO_GLOVES], others, ["gloves", "gown"])
    assert conflict.field == "gloves: requirement level"
    assert conflict.sql_value.startswith("should (PHO: Office Practice)")
    assert conflict.vector_value.startswith("must (CPSO: IPAC policy)")
    assert "Treat it as 'must'" in conflict.resolution
    # 'keep gloves stocked at reception' names gloves but not the same practice: no conflict.


def test_a_prebuilt_reference_gives_what_appending_its_statements_gives() -> None:
    """opa.ipac_guidance indexes CPSO's statements once per process and passes them as the
    reference: the conflicts, and their order, must be those of one flat list."""
    own = [Statement("must", "Wear gloves for contact with blood.", "pho-other", "PHO: other")]
    lab = Statement(
        "may", "Gloves may be worn for blood contact in a lab.", "cpso-lab", "CPSO: lab"
    )
    fixed = [*statements_from_text(CPSO_TEXT, "cpso-ipac", "CPSO: IPAC policy"), lab]
    flat = level_conflicts([PHO_GLOVES], own + fixed, ["gloves"])
    assert len(flat) == 3
    assert level_conflicts([PHO_GLOVES], own, ["gloves"], reference=StatementIndex(fixed)) == flat


@pytest.mark.parametrize(
    "other",
    [
        Statement("should", "Physicians should wear gloves for blood contact.", "cpso", "CPSO: x"),
        Statement("must", "Wear gloves for contact with blood.", "pho-office", "PHO: same doc"),
        Statement("must", "Wear a gown when contact with blood is expected.", "cpso", "CPSO: x"),
    ],
    ids=["same-level", "same-document", "other-item"],
)
def test_no_conflict_without_a_real_disagreement(other: Statement) -> None:
    assert level_conflicts([PHO_GLOVES], [other], ["gloves"]) == []


def test_stale_vector_copy_of_the_ipac_block_is_a_conflict() -> None:
    block = {"topic": "ppe", "requirements": [{"level": "must", "text": "x"}]}
    row = section_row(
        "pho-x:s01", updated_date="2024-01-01", ipac=IpacBlock.decode(json.dumps(block))
    )
    stale = {"topic": "ppe", "requirements": [{"level": "should", "text": "x"}]}
    meta = {
        "is_superseded": False,
        "updated_date": "2024-01-01",
        "policy_level": "",
        "ipac": json.dumps(stale),
    }
    hit = SectionHit("pho-x:s01", "pho-x:s01", row, vector_meta=meta)
    assert [c.field for c in metadata_conflicts([hit])] == ["pho-x:s01.ipac"]
    hit.vector_meta = {**meta, "ipac": json.dumps(block)}
    assert metadata_conflicts([hit]) == []


@pytest.mark.asyncio
async def test_ipac_ppe_surfaces_the_pho_cpso_glove_conflict(client: Client[Any]) -> None:
    out = await call(client, "opa.ipac_guidance", {"topic": "ppe"})
    fields = {c["field"] for c in out["conflicts"]}
    assert "gloves: requirement level" in fields
    gloves = next(c for c in out["conflicts"] if c["field"] == "gloves: requirement level")
    assert gloves["sql_value"].startswith("should (PHO: ")
    assert gloves["vector_value"].startswith("must (CPSO: ")
    # The answer still lists PHO's glove requirement as PHO words it.
    assert any(
        r["level"] == "should" and "gloves" in r["text"].lower() for r in out["requirements"]
    )
    assert out["confidence"] <= 0.9  # -0.1 for conflicts between sources
