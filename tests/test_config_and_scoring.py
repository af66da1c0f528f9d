"""Configuration parsing, the confidence formula and citation formatting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference_server.config import Settings
from reference_server.scoring.citations import format_citation, slugify
from reference_server.scoring.confidence import OFF, OPA, SCHEDULE, calculate_confidence
from reference_server.scoring.conflicts import compare


def test_faults_from_environment_variables() -> None:
    s = Settings.from_env({"OCM_FAULT_SQL_DELAY_MS": "200", "OCM_FAULT_VECTOR_FAIL": "true"})
    assert s.faults.sql_delay_ms == 200 and s.faults.vector_fail and s.faults.active


def test_faults_from_file(tmp_path: Path) -> None:
    f = tmp_path / "faults.json"
    f.write_text(json.dumps({"vector_delay_ms": 150}))
    s = Settings.from_env(
        {"OCM_FAULTS_FILE": str(f), "OCM_MODE": "keyword", "OCM_SQL_TIMEOUT_MS": "300"}
    )
    assert s.faults.vector_delay_ms == 150 and s.mode == "keyword" and s.sql_timeout_ms == 300


def test_faults_off_by_default() -> None:
    assert not Settings.from_env({}).faults.active


def test_bad_configuration_is_rejected() -> None:
    with pytest.raises(ValueError):
        Settings.from_env({"OCM_MODE": "fastest"})


@pytest.mark.parametrize(
    "n_sql,n_vec,conflicts,corroborated,profile,expected",
    [
        # OPA (000/001): 0.9 needs an SQL hit the vector path corroborates
        (1, 0, 0, 0, OPA, 0.6),  # SQL hit, no corroboration: single-path base 0.6
        (3, 4, 0, 0, OPA, 0.69),  # both paths, no section in common: 0.6 + (4 - 1) * 0.03
        (3, 2, 0, 1, OPA, 0.9),  # one corroborated hit earns the base, no additional passage
        (3, 3, 0, 3, OPA, 0.96),  # 0.9 + 2 additional * 0.03
        (5, 10, 0, 10, OPA, 1.0),  # 0.9 + min(0.15, 9 * 0.03) = 1.05, clamped to 1.0
        (0, 3, 0, None, OPA, 0.66),  # vector only: 0.6 + 2 additional * 0.03
        (0, 10, 0, None, OPA, 0.75),  # vector only: 0.6 + min(0.15, 9 * 0.03)
        (0, 1, 0, None, OPA, 0.6),  # a single vector passage: the base alone
        (2, 2, 1, 2, OPA, 0.83),  # 0.9 + 0.03 - 0.1
        (2, 2, 4, 2, OPA, 0.83),  # four conflicts: still one 0.1 penalty ("-0.1 for conflicts")
        (2, 3, 0, None, OPA, 0.96),  # legacy call: n_vec taken as corroborating: 0.9 + 2 * 0.03
        (0, 4, 0, 4, OPA, 0.69),  # corroboration claimed without an SQL hit is ignored
        # Dr. OFF (002): base 0.9 on any SQL hit, every vector match counts, SQL records add 0.02
        (1, 0, 0, None, OFF, 0.9),  # SQL hit alone
        (4, 0, 0, None, OFF, 0.96),  # 0.9 + min(0.06, 3 * 0.02)
        (1, 2, 0, None, OFF, 0.96),  # 0.9 + 2 * 0.03
        (1, 1, 4, None, OFF, 0.83),  # odb.get group, four conflicts: 0.9 + 0.03 - 0.1 once
        (0, 3, 0, None, OFF, 0.69),  # vector only: 0.6 + 3 * 0.03
        (1, 5, 0, None, SCHEDULE, 0.99),  # schedule caps vector boost at 0.09
        (2, 1, 1, None, SCHEDULE, 0.85),  # 0.9 + 0.03 + 0.02 - 0.1
        (0, 0, 0, None, OPA, 0.0),  # nothing found
        (0, 0, 3, None, OFF, 0.0),  # nothing found, conflicts or not
    ],
)
def test_confidence_formula(
    n_sql: int,
    n_vec: int,
    conflicts: int,
    corroborated: int | None,
    profile: object,
    expected: float,
) -> None:
    got = calculate_confidence(n_sql, n_vec, conflicts, profile, num_corroborated=corroborated)  # type: ignore[arg-type]
    assert got == pytest.approx(expected)


def test_confidence_keeps_its_positional_signature() -> None:
    """Call sites written before the profiles keep working: (sql, vector, conflicts, profile)."""
    assert calculate_confidence(1, 1, 0, OFF) == pytest.approx(0.93)
    assert calculate_confidence(1, 1) == pytest.approx(0.9)


def test_citation_format_and_anchor() -> None:
    doc = {
        "document_id": "cpso-virtual-care",
        "source_org": "cpso",
        "title": "Virtual Care",
        "effective_date": "2022-06-01",
        "source_url": "https://x.test/vc",
    }
    section = {
        "section_id": "cpso-virtual-care:s03",
        "section_heading": "Virtual Care and Patients’ Best Interests",
    }
    c = format_citation(doc, section)
    # show source: the section's passage id, or the document's for a whole-document citation
    assert c["chunk_id"] == "cpso-virtual-care:s03"
    assert format_citation(doc)["chunk_id"] == "cpso-virtual-care"
    assert c["text"] == (
        "College of Physicians and Surgeons of Ontario. Virtual Care, Virtual Care and Patients’ Best Interests "
        "[Effective: 2022-06-01]"
    )
    assert c["anchor"] == "virtual-care-and-patients-best-interests"
    assert c["url"] == "https://x.test/vc#virtual-care-and-patients-best-interests"
    assert slugify("  A/B -- C  ") == "a-b-c"


def test_conflict_only_when_values_differ() -> None:
    assert compare("fee", 61.15, 61.150001, "sql") is None
    assert compare("fee", 61.15, None, "sql") is None
    c = compare("fee", 61.15, 70.10, "SQL fee used")
    assert c is not None and c.sql_value == 61.15 and c.vector_value == 70.10
