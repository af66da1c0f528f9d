"""OPA case families on a small corpus written here: one case per heading (shared ones skipped,
counted), levels from the source wording, both sides of every program boundary, and off-topic
subjects that the corpus itself vetoes once a document names them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from evals.derive.build import derive
from evals.derive.corpus import Corpus
from evals.derive.families.opa import paraphrase
from evals.derive.registry import skipped


def _doc(document_id: str, org: str, **fields: Any) -> dict[str, Any]:
    return {
        "document_id": document_id,
        "source_org": org,
        "document_type": "policy",
        "title": document_id.replace("-", " ").title(),
        "source_url": f"https://www.example.org/{org}/{document_id}",
        "updated_date": "2024-01-01",
        "effective_date": "2024-01-01",
        "published_date": "2020-01-01",
        "topics": [],
        "is_superseded": False,
        "superseded_by": None,
        "companion_of": None,
        "derived_from": f"opa/{org}/{document_id}.json",
        "sections": [],
        **fields,
    }


def _corpus(tmp_path: Path, docs: list[dict[str, Any]]) -> Corpus:
    for doc in docs:
        folder = tmp_path / "opa" / doc["source_org"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{doc['document_id']}.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    (tmp_path / "off").mkdir(exist_ok=True)
    return Corpus(tmp_path / "off")


def _section(heading: str, text: str = "Some text.", level: str | None = None) -> dict[str, Any]:
    return {"heading": heading, "policy_level": level, "text": text}


CPSO = [
    _doc(
        "cpso-consent",
        "cpso",
        topics=["consent", "capacity", "substitute decision-maker"],
        sections=[
            _section("Definitions"),
            _section("Empty Heading", text="  "),  # no text: not indexed, not numbered
            _section("Obtaining Consent", level="expectation"),
            _section("Helpful Practices", level="advice"),
        ],
    ),
    _doc(
        "cpso-consent-advice",
        "cpso",
        document_type="advice",
        companion_of="cpso-consent",
        topics=["consent", "interpreters", "minors"],
        sections=[_section("Definitions"), _section("Working With Interpreters", level=None)],
    ),
]


def test_a_case_per_heading_naming_one_document_and_shared_headings_skipped(
    tmp_path: Path,
) -> None:
    cases = derive(_corpus(tmp_path, CPSO), families=["opa.section_heading"])
    by_query = {c.args["query"]: c for c in cases["opa.section_heading"]}
    assert set(by_query) == {"Obtaining Consent", "Helpful Practices", "Working With Interpreters"}
    # judged by public keys: the document's official URL and the section's own heading
    assert by_query["Obtaining Consent"].relevant == {
        "https://www.example.org/cpso/cpso-consent § Obtaining Consent": 3
    }
    assert "opa/cpso/cpso-consent.yaml source_url, sections[2].heading" in (
        by_query["Obtaining Consent"].source
    )
    assert skipped("opa.section_heading") == {
        "heading shared by several documents (names no one document)": 2
    }


def test_paraphrase_uses_synonyms_and_turns_pairs_round() -> None:
    text = paraphrase("k", "Physicians and Obtaining Consent")
    assert "doctors" in text and text.index("obtaining consent") < text.index("doctors")
    assert paraphrase("k", "Obtaining Consent") == paraphrase("k", "Obtaining Consent")


def test_policy_levels_follow_the_source_wording_and_advice_documents(tmp_path: Path) -> None:
    cases = derive(_corpus(tmp_path, CPSO), families=["opa.policy_level"])["opa.policy_level"]
    levels = {
        c.expect[0].value["section_heading"]: c.expect[0].value["policy_level"]
        for c in cases
        if c.expect[0].value["policy_title"] == "Cpso Consent"
    }
    assert levels == {"Obtaining Consent": "expectation", "Helpful Practices": "advice"}
    advice = [c for c in cases if c.expect[0].value["policy_title"] == "Cpso Consent Advice"]
    assert {c.expect[0].value["policy_level"] for c in advice} == {"advice"}
    assert len(advice) == 2  # an advice document's sections are advice, however worded
    assert skipped("opa.policy_level") == {
        "policy section worded neither as expectation nor as advice": 1
    }


PROGRAM = _doc(
    "oh-screening",
    "ontario_health",
    program={
        "key": "breast",
        "name": "Ontario Breast Screening Program",
        "eligibility": {"min_age": 40, "max_age": 74},
        "intervals": {"average_risk": "every 2 years"},
        "recommendations": [
            {
                "text": "Mammogram every two years.",
                "age_range": [50, 74],
                "frequency": "every 2 years",
                "risk_factors": [],
            },
            {
                "text": "Yearly MRI for carriers.",
                "age_range": [30, 69],
                "frequency": "every year",
                "risk_factors": ["BRCA1"],
            },
        ],
    },
)


def test_program_boundaries_are_asked_on_both_sides(tmp_path: Path) -> None:
    cases = derive(_corpus(tmp_path, [PROGRAM]), families=["opa.program_boundary"])
    by_args = {
        (c.args.get("patient_age"), tuple(c.args.get("risk_factors") or ())): c
        for c in cases["opa.program_boundary"]
        if c.args.get("query_type") == "eligibility"
    }
    assert {age: c.expect[0].value for (age, _), c in by_args.items()} == {
        39: True,
        40: False,
        74: False,
        75: True,
    }
    recs = [c for c in cases["opa.program_boundary"] if "rec" in c.id]
    carrier = {c.args["patient_age"]: c.expect[0] for c in recs if c.args.get("risk_factors")}
    assert sorted(carrier) == [29, 30, 69, 70]
    assert carrier[30].check == "matches"
    assert re.search(carrier[30].pattern or "", "At age 30 with BRCA1: Yearly MRI for carriers.")
    assert not re.search(carrier[30].pattern or "", "At age 30: Mammogram every two years.")
    assert carrier[29].check == "not_contains" and carrier[29].value == "Yearly MRI for carriers."
    interval = [c for c in cases["opa.program_boundary"] if c.id.endswith("interval-average_risk")]
    assert interval[0].expect[0].value == "every 2 years"


def test_off_topic_questions_are_vetoed_once_a_document_names_the_subject(
    tmp_path: Path,
) -> None:
    vet = _doc("cpso-vet", "cpso", title="Treating a Dog Bite", topics=["bites"])
    plain = derive(_corpus(tmp_path / "a", CPSO), families=["opa.off_topic"])["opa.off_topic"]
    vetoed = derive(_corpus(tmp_path / "b", [*CPSO, vet]), families=["opa.off_topic"])
    keys = {c.id.rsplit(".", 1)[1] for c in plain}
    assert "veterinary-dosing" in keys
    assert "veterinary-dosing" not in {c.id.rsplit(".", 1)[1] for c in vetoed["opa.off_topic"]}
    assert skipped("opa.off_topic") == {"a document names this subject": 1}
    assert {c.tool for c in plain} == {"opa.search_sections"}
    first = plain[0].expect
    assert first[0].path == "no_relevant_document" and first[0].value is True
    # the confidence is the probability the flag is right: measured by calibration, not bounded
    assert [c.check for c in first] == ["equals"]
