"""opa.program_lookup: aliases, the outside-age flag, provenance of each fact, info_needed, conflicts.

Expected values come from the Ontario Health corpus documents, whose facts were verified against
the public pages their `sources` name (reference_server/corpus/FORMAT.md).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from fastmcp import Client

from reference_server.retrieval.opa_programs import (
    FactCheck,
    ProgramDoc,
    ProgramEligibility,
    ProgramRec,
    Seen,
    StoredProgram,
    program_block,
    program_key,
)
from reference_server.scoring.confidence import Counts, calculate_confidence, confidence_from
from reference_server.tools.program.facts import (
    UNVERIFIED_PENALTY,
    applicable,
    merged_program,
    outside_ages,
    program_conflicts,
)
from tests.conftest import call, call_error


def elig(lo: int, hi: int | None) -> ProgramEligibility:
    return ProgramEligibility(None, None, (), lo, hi)


def rec(text: str, risk_factors: list[str], conditions: list[str] | None = None) -> ProgramRec:
    return program_block(
        {
            "recommendations": [
                {"text": text, "risk_factors": risk_factors, "conditions": conditions}
            ]
        },
        "d",
        "",
    ).recommendations[0]


def doc(document_id: str, program: StoredProgram) -> ProgramDoc:
    return ProgramDoc(
        document_id, "", "", None, None, None, program_block(program, document_id, "")
    )


LUNG_REFERRALS = "https://cancercareontario.ca/en/guidelines-advice/cancer-continuum/screening/lung-cancer-screening-information/referrals"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("benefits of screening", None),  # 'fit' inside 'benefits' is not colorectal
        ("FIT test", "colorectal"),
        ("colonoscopy after an abnormal FIT", "colorectal"),
        ("mammograms", "breast"),
        ("Pap tests", "cervical"),
        ("HPV self-collection", "cervical"),
        ("lung cancer screening", "lung"),
        ("kidney care", None),
        ("profitable", None),
    ],
)
def test_program_key_matches_whole_words(name: str, key: str | None) -> None:
    assert program_key(name) == key


def test_outside_ages_uses_screening_ages_and_matching_risk() -> None:
    ages = elig(50, 74)
    assert outside_ages(ages, [], 40) is True
    assert outside_ages(ages, [rec("screen", ["family history"])], 45) is False
    assert outside_ages(ages, [], 60) is False
    assert outside_ages(elig(55, None), [], 90) is False
    assert outside_ages(ages, [], None) is None
    assert outside_ages(None, [], 40) is None


def test_most_specific_risk_match_leads() -> None:
    recs = [
        rec("screen", ["first-degree relative of carrier after counselling"]),
        rec("counsel", ["untested first-degree relative of carrier"]),
        rec("general", []),
    ]
    chosen = applicable(recs, None, ["untested first-degree relative of carrier"])
    assert [r.text for r in chosen] == ["counsel", "general"]


def test_condition_match_leads_the_general_recommendations() -> None:
    # ontario-health-hpv-testing-hub (self-collected negative: 3 years) and
    # ontario-health-ocsp-hpv-screening (HPV negative: 5 years), in the order the tool pools them.
    recs = [
        rec("begin at 25", [], ["has a cervix"]),
        rec("5 years", [], ["HPV negative"]),
        rec("3 years", [], ["self-collected HPV negative"]),
        rec("immunocompromised", ["hiv"], ["HPV negative"]),
    ]
    chosen = applicable(recs, 40, ["self-collected HPV-negative"])
    assert [r.text for r in chosen] == ["3 years", "5 years", "begin at 25"]
    assert applicable(recs, 40, ["HPV negative"])[0].text == "5 years"


def test_conflicting_intervals_between_documents_are_surfaced() -> None:
    docs = [
        doc("a", {"intervals": {"average_risk": "every 5 years"}}),
        doc("b", {"intervals": {"average_risk": "every 3 years"}}),
    ]
    (conflict,) = program_conflicts(docs, [])
    assert conflict.field == "intervals.average_risk"
    assert (conflict.sql_value, conflict.vector_value) == ("every 5 years", "every 3 years")
    assert program_conflicts(docs[:1], []) == []
    stale = [doc("a", {"intervals": {"average_risk": "old"}})]
    assert [c.field for c in program_conflicts(docs[:1], stale)] == ["a.program"]


def test_unverified_penalty_is_hand_computed() -> None:
    def penalised(sql: int, vector: int, conflicts: int = 0) -> float:
        counts = Counts(sql, vector, penalty=UNVERIFIED_PENALTY)
        return confidence_from(counts, conflicts)

    assert penalised(1, 2) == 0.83  # 0.9 + 0.03 - 0.1
    assert confidence_from(Counts(1, 2), 0) == 0.93
    assert penalised(0, 1, conflicts=1) == 0.4  # 0.6 - 0.1 for the conflict - 0.1
    assert confidence_from(Counts(0, 1, penalty=0.55), 1) == 0.0  # never below zero
    assert penalised(0, 0) == 0.0  # no evidence: nothing to deduct from
    # The deduction is the formula's value less the penalty, rounded to 4 places, for any counts.
    for sql in range(4):
        for vector in range(8):
            for conflicts in (0, 1):
                plain = calculate_confidence(sql, vector, conflicts)
                want = round(max(0.0, plain - UNVERIFIED_PENALTY), 4) if plain else plain
                assert penalised(sql, vector, conflicts) == want


def test_intervals_are_pooled_across_documents_primary_first() -> None:
    docs = [
        doc("x", {"intervals": {"a": "1"}, "provenance": {"intervals.a": "unverified"}}),
        doc(
            "y",
            {
                "intervals": {"a": "2", "b": "3"},
                "provenance": {"intervals.b": [{"url": "u", "seen": "s"}]},
            },
        ),
    ]
    prog = merged_program(docs)
    assert prog is not None and prog.intervals == {"a": "1", "b": "3"}
    assert prog.check("intervals.a") == FactCheck(unverified=True)
    assert prog.check("intervals.b") == FactCheck((Seen("u", "s"),))
    assert merged_program([]) is None


@pytest.mark.asyncio
async def test_self_collected_hpv_negative_gets_the_self_collected_interval(
    client: Client[Any],
) -> None:
    out = await call(
        client,
        "opa.program_lookup",
        {"program": "cervical", "patient_age": 42, "risk_factors": ["self-collected HPV-negative"]},
    )
    # ontario-health-hpv-testing-hub section 4: self-collected negative -> re-screen in 3 years.
    text = out["patient_specific"]["recommendation"]
    assert "3 years" in text and "5 years" not in text


@pytest.mark.asyncio
async def test_lung_78_is_within_referral_ages_with_its_source(client: Client[Any]) -> None:
    out = await call(
        client,
        "opa.program_lookup",
        {"program": "lung", "patient_age": 78, "risk_factors": ["former smoker"]},
    )
    ps = out["patient_specific"]
    assert ps["outside_screening_age"] is False and "55 to 80" in ps["recommendation"]
    assert ps["verified_from"][0]["url"] == LUNG_REFERRALS
    assert any(c["url"] == LUNG_REFERRALS for c in out["citations"])


@pytest.mark.asyncio
async def test_every_recommendation_is_verified_or_marked(client: Client[Any]) -> None:
    out = await call(client, "opa.program_lookup", {"program": "lung", "query_type": "pathway"})
    for rec in out["recommendations"]:
        assert rec["unverified"] or rec["verified_from"], rec["text"]
    assert any(r["unverified"] for r in out["recommendations"])
    assert out["unverified_facts"] and any("could not be verified" in n for n in out["notes"])
    # The pathway rests on unverified Lung-RADS intervals: 0.1 below the spec's maximum of 1.0.
    assert out["confidence"] <= 0.95


@pytest.mark.asyncio
async def test_fully_verified_answer_keeps_full_confidence(client: Client[Any]) -> None:
    out = await call(client, "opa.program_lookup", {"program": "breast", "patient_age": 55})
    assert out["patient_specific"]["unverified"] is False
    assert out["unverified_facts"] == [] and out["confidence"] >= 0.9


@pytest.mark.asyncio
async def test_info_needed_limits_the_parts_filled(client: Client[Any]) -> None:
    out = await call(
        client, "opa.program_lookup", {"program": "colorectal", "info_needed": ["locations"]}
    )
    assert out["additional_info"]["locations"]
    assert out["recommendations"] == [] and out["algorithms"] == [] and out["intervals"] == {}
    assert out["eligibility"]["age_criteria"] is None
    out = await call(
        client, "opa.program_lookup", {"program": "colorectal", "info_needed": ["eligibility"]}
    )
    assert out["eligibility"]["age_criteria"] and out["intervals"] == {}


@pytest.mark.asyncio
async def test_last_updated_is_the_time_of_the_lookup(client: Client[Any]) -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    out = await call(client, "opa.program_lookup", {"program": "cervical"})
    stamp = dt.datetime.fromisoformat(out["last_updated"])
    assert before - dt.timedelta(seconds=1) <= stamp <= dt.datetime.now(dt.UTC)
    assert out["document_updated"] == "2025-03-03"


@pytest.mark.asyncio
async def test_freshness_reports_unverified_and_stale_source_facts(client: Client[Any]) -> None:
    out = await call(client, "opa.freshness_probe", {"source_orgs": ["ontario_health", "moh"]})
    issues = {i["document_id"]: i for i in out["provenance_issues"]}
    assert (
        "sections[4] Low-Dose CT Screening and Results, paragraph 3"
        in issues["ontario-health-olsp-lung-screening"]["unverified_facts"]
    )
    bulletin = issues["moh-infobulletin-221102-ovcp-video-visit-payment"]
    assert bulletin["unverified_facts"] == [] and bulletin["oldest_source_seen"] == "2022-11-14"
    breast = issues["ontario-health-obsp-breast-screening"]  # one source page dated 2024-10-08
    assert breast["unverified_facts"] == [] and breast["oldest_source_seen"] == "2024-10-08"
    assert "ontario-health-hpv-testing-hub" not in issues  # all verified from recent copies
    assert any(
        r.startswith(
            "Re-verify 'Ontario Lung Screening Program' (ontario-health-olsp-lung-screening)"
        )
        for r in out["recommendations"]
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("program", ["   ", "a\x00b"])
async def test_blank_or_control_character_program_is_refused(
    client: Client[Any], program: str
) -> None:
    message = await call_error(client, "opa.program_lookup", {"program": program})
    assert "'program'" in message and "visible character and no control characters" in message


@pytest.mark.asyncio
async def test_program_with_ordinary_text_is_answered(client: Client[Any]) -> None:
    out = await call(client, "opa.program_lookup", {"program": "  lung\tscreening "})
    assert out["in_local_corpus"] is True and out["program"]
