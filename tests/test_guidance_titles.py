"""The title view of a policy question: which guidance's title lies nearest the question, and how
an answer whose sections lead elsewhere is flagged.

Expected values are computed by hand from small vectors, and the end-to-end check reads the
titles from the corpus files (reference_server/corpus/opa/cpso/), never from the tool's answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from fastmcp import Client

from reference_server.scoring.calibrated import load
from reference_server.scoring.features import Signals, features
from reference_server.tools.guidance_titles import TitleMatrix, title_gap, title_text
from tests.conftest import call

CPSO = Path(__file__).resolve().parent.parent / "reference_server" / "corpus" / "opa" / "cpso"


def _matrix() -> TitleMatrix:
    # three documents: a policy, its companion advice, and another policy
    rows = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    return TitleMatrix(("policy-a", "policy-a", "policy-b"), rows)


def test_a_guidance_takes_its_best_document_and_similarities_are_rounded() -> None:
    nearest = _matrix().nearest([0.8, 0.6])
    # policy-a: max(0.8, 0.48 + 0.48 = 0.96); policy-b: 0.6
    assert nearest == {"policy-a": 0.96, "policy-b": 0.6}
    third = _matrix().nearest([1 / 3, (8 / 9) ** 0.5])
    assert third["policy-b"] == 0.9428  # sqrt(8)/3 = 0.942809..., to 4 places


def test_the_gap_is_the_leading_guidance_less_the_nearest_other() -> None:
    nearest = {"policy-a": 0.96, "policy-b": 0.6, "policy-c": 0.7}
    families = {"policy-a-advice": "policy-a"}
    assert title_gap(nearest, "policy-a", families) == 0.26
    assert title_gap(nearest, "policy-a-advice", families) == 0.26  # a companion is its policy
    assert title_gap(nearest, "policy-b", families) == -0.36
    assert title_gap({"policy-a": 0.5, "policy-b": 0.5}, "policy-a", families) == 0.0  # a tie
    assert title_gap(nearest, "unknown", families) is None  # not a current guidance
    assert title_gap({"policy-a": 0.9}, "policy-a", families) is None  # nothing to compare


@pytest.mark.parametrize(
    ("gap", "lexical", "flagged"),
    [
        (0.0, 0.0, 1.0),  # a tie: another title lies as near
        (0.0001, 0.0, 0.0),  # the leading guidance's title is nearer, by the least step
        (-0.02, 0.9, 1.0),  # not every subject word names the leading section
        (-0.02, 1.0, 0.0),  # every word names it: the question is that section's
        (None, 0.0, 0.0),  # not measured (another tool, or the vector path did not answer)
    ],
)
def test_title_elsewhere_boundaries(gap: float | None, lexical: float, flagged: float) -> None:
    values = features(
        Signals(top_scores=(3.0, 1.0), lexical=lexical, title_gap=gap),
        None,
        0,
        ["sql", "vector"],
        0.9,
    )
    assert values["title_elsewhere"] == flagged
    assert values["title_gap"] == (gap or 0.0)


def test_an_answer_that_nothing_answers_is_not_about_a_title() -> None:
    values = features(
        Signals(top_scores=(3.0,), lexical=0.0, title_gap=-0.2, no_answer=True),
        None,
        0,
        ["sql", "vector"],
        0.5,
    )
    assert values["no_answer"] == 1.0 and values["title_elsewhere"] == 0.0


def test_title_text_names_the_subject_then_its_topics() -> None:
    assert title_text("Advertising", ["testimonials", "clinic website"]) == (
        "Advertising: testimonials, clinic website"
    )
    assert title_text("Advertising", []) == "Advertising"


def _title_of(stem: str) -> str:
    for path in CPSO.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if str(doc.get("source_url", "")).endswith(stem):
            return str(doc["title"])
    raise AssertionError(f"no CPSO corpus file for {stem}")


@pytest.mark.asyncio
async def test_a_policy_answer_carries_the_title_view_and_its_ceiling(client: Client[Any]) -> None:
    """A question that names its policy's subject leads with that policy, its title nearest; any
    answer flagged `title_elsewhere` states no more than the flag's ceiling in the model file."""
    out = await call(
        client, "opa.policy_check", {"query": "Can I advertise testimonials from patients?"}
    )
    assert out["policies"][0]["policy_title"] == _title_of("/Policies/Advertising")
    answered = out["confidence_basis"]["features"]
    assert answered["title_gap"] > 0 and answered["title_elsewhere"] == 0.0
    ceiling = load().families["opa_policy"].info.get("ceilings", {})["title_elsewhere"]
    flagged = 0
    for query in (
        "May my clinic's Instagram account post patient success stories?",
        "Can I write a prescription for my own antibiotics?",
        "Can I help a patient end their life?",
    ):
        out = await call(client, "opa.policy_check", {"query": query})
        if out["confidence_basis"]["features"]["title_elsewhere"]:
            flagged += 1
            assert out["confidence"] <= ceiling
    assert flagged, "none of the questions was flagged: the check above checked nothing"
