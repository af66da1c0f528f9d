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
    "n_sql,n_vec,conflicts,profile,expected",
    [
        (1, 0, 0, OPA, 0.9),  # SQL hit, no corroboration
        (3, 2, 0, OPA, 0.96),  # 0.9 + 2 * 0.03
        (1, 10, 0, OPA, 1.0),  # 0.9 + min(0.15, 0.30) capped at 1.0
        (0, 3, 0, OPA, 0.69),  # vector only: 0.6 + 0.09
        (0, 10, 0, OPA, 0.75),  # vector boost capped at 0.15
        (2, 1, 1, OPA, 0.83),  # 0.9 + 0.03 - 0.1
        (4, 0, 0, OFF, 0.96),  # 0.9 + min(0.06, 3 * 0.02)
        (1, 5, 0, SCHEDULE, 0.99),  # schedule caps vector boost at 0.09
        (0, 0, 0, OPA, 0.0),  # nothing found
        (0, 1, 7, OPA, 0.0),  # clamped at 0
    ],
)
def test_confidence_formula(
    n_sql: int, n_vec: int, conflicts: int, profile: object, expected: float
) -> None:
    assert calculate_confidence(n_sql, n_vec, conflicts, profile) == pytest.approx(expected)  # type: ignore[arg-type]


def test_citation_format_and_anchor() -> None:
    doc = {
        "source_org": "cpso",
        "title": "Virtual Care",
        "effective_date": "2022-06-01",
        "source_url": "https://x.test/vc",
    }
    section = {"section_heading": "Virtual Care and Patients’ Best Interests"}
    c = format_citation(doc, section)
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
