"""The calibrated confidence: the committed model file loads and is applied the same way every
time, an ambiguous heading is not answered at 0.9 or more and lists the documents it may mean, an
ADP device whose manual states no split says the split is the general rule with a lower
confidence, and the spec's evidence score stays visible in `confidence_basis`.

Expected values come from the corpus files (reference_server/corpus/), never from the tools'
answers: the documents carrying a heading are read from corpus/opa/*/*.yaml, and which ADP
manuals state a split of their own from tools/adp/terms.py's table (checked against
../shared/data/adp/adp_extraction.json).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from fastmcp import Client, FastMCP
from hypothesis import given, settings
from hypothesis import strategies as st

from ocm_common.clinician_questions import FAMILIES
from reference_server.scoring import calibrated, fit, split
from reference_server.scoring.calibrated import CalibrationFileError, Logistic, parse, stated
from reference_server.scoring.confidence import OFF, OPA, SCHEDULE, calculate_confidence
from reference_server.scoring.features import FEATURES, Signals, features, margin
from reference_server.tools import ALL_TOOLS
from reference_server.tools.pipeline import DualPathTool
from tests.conftest import call, run_fresh

CORPUS = Path(__file__).resolve().parent.parent / "reference_server" / "corpus" / "opa"
UNFITTED_QUESTIONS = (
    Path(__file__).resolve().parent.parent / "evals" / "unfitted_clinician_questions.yaml"
)
PROFILES = {"opa": OPA, "off": OFF, "schedule": SCHEDULE}


# ----------------------------------------------------------------------------- the model file


def test_committed_model_file_loads_with_every_tool_family() -> None:
    model = calibrated.load(calibrated.MODEL_FILE)
    families = {
        t.confidence_family
        for t in ALL_TOOLS
        if isinstance(t, DualPathTool) and t.confidence_family is not None
    }
    assert families and families <= set(model.families)
    raw = yaml.safe_load(calibrated.MODEL_FILE.read_text(encoding="utf-8"))
    assert raw["split"]["seed"] == split.SEED and raw["fitted"]
    for name, body in raw["families"].items():
        assert body["n"] > 0 and 0 < body["right"] <= body["n"], name
        assert len(body["features"]) == len(body["coefficients"]) <= 8, name


def test_a_model_is_the_logistic_of_its_features_in_file_order() -> None:
    """Hand-computed: z = -1 + 2 * 0.5 = 0 -> 0.5; z = -1 + 2 * 1 + 0.5 * 1 = 1.5 ->
    1 / (1 + e^-1.5) = 0.8176 (4 places)."""
    m = Logistic("t", ("spec_score", "margin"), (2.0, 0.5), -1.0)
    assert m.probability({"spec_score": 0.5, "margin": 0.0}) == 0.5
    assert m.probability({"spec_score": 1.0, "margin": 1.0}) == 0.8176
    assert m.probability({"spec_score": 1.0, "margin": 1.0}) == 0.8176  # same again
    assert Logistic("t", ("spec_score",), (100.0,), 0.0).probability({"spec_score": 1.0}) == 0.999
    assert Logistic("t", ("spec_score",), (-100.0,), 0.0).probability({"spec_score": 1.0}) == 0.001


def test_committed_model_gives_the_same_number_for_the_same_features() -> None:
    model = calibrated.load(calibrated.MODEL_FILE)
    values = features(Signals(top_scores=(2.0, 1.0), shared=3), None, 0, ["sql", "vector"], 0.96)
    for family in model.families.values():
        first = family.probability(values)
        assert all(family.probability(dict(values)) == first for _ in range(5))
        assert first == round(first, 4) and 0.0 < first < 1.0


def test_rules_over_the_fitted_number() -> None:
    """No path answered: 0; sources disagree or an unverified fact leads: at most the spec's
    score; otherwise the fitted number as it is."""
    assert stated(0.97, 0.89, answered=True, capped=False) == 0.97
    assert stated(0.97, 0.89, answered=True, capped=True) == 0.89
    assert stated(0.40, 0.89, answered=True, capped=True) == 0.40
    assert stated(0.97, 0.89, answered=False, capped=False) == 0.0


def test_a_degraded_answer_states_the_least_it_could_have_had() -> None:
    """Hand-computed on z = -1 + 2 * spec_score - 3 * default_rule + 1.5 * margin - 0.5 * shared:
    spec_score (evidence, positive) keeps its value 0.6, default_rule (negative) goes to 1, margin
    (positive) to 0, shared keeps 1: z = -1 + 1.2 - 3 - 0.5 = -3.3 -> 0.0356."""
    m = Logistic(
        "t", ("spec_score", "default_rule", "margin", "shared"), (2.0, -3.0, 1.5, -0.5), -1.0
    )
    observed = {"spec_score": 0.6, "default_rule": 0.0, "margin": 0.8, "shared": 1.0}
    assert m.lowest(observed) == 0.0356
    assert stated(0.9, 0.95, answered=True, capped=False, degraded_floor=0.0356) == 0.0356
    assert stated(0.02, 0.95, answered=True, capped=False, degraded_floor=0.0356) == 0.02
    # an evidence feature whose coefficient is negative could have been as high as 1
    assert Logistic("t", ("spec_score",), (-2.0,), 1.0).lowest({"spec_score": 0.3}) == 0.2689


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_degraded_answer_never_states_more_than_the_healthy_one(data: st.DataObject) -> None:
    """For every committed family: whatever the healthy answer's features were, the same answer
    with a path failed (evidence no higher, `shared` the same, anything else anything) states no
    more through `lowest` than the healthy one's fitted probability."""
    model = calibrated.load(calibrated.MODEL_FILE)
    unit = st.floats(0.0, 1.0, allow_nan=False)
    for family in model.families.values():
        healthy = {n: data.draw(unit) for n in family.features}
        if "shared" in healthy:
            healthy["shared"] = data.draw(st.floats(0.0, 5.0, allow_nan=False))
        degraded = {
            n: (
                data.draw(st.floats(0.0, v, allow_nan=False))
                if n in calibrated.EVIDENCE
                else v
                if n in calibrated.UNBOUNDED
                else data.draw(unit)
            )
            for n, v in healthy.items()
        }
        assert family.lowest(degraded) <= family.probability(healthy), family.family


def test_the_fit_recovers_the_direction_of_the_evidence() -> None:
    """A family whose right answers have a larger margin: positive margin coefficient (a family
    of both-path answers leaves single-path ones out); one class only: its smoothed rate,
    (right + 1) / (n + 2), whatever the features."""
    assert "opa_search" in fit.BOTH_PATHS_ONLY
    rows = [
        fit.Answer(
            f"c{i}",
            "opa.search_sections",
            "opa_search",
            _features(margin=m, both_paths=b),
            right,
            "r",
        )
        for i, (m, right, b) in enumerate(
            [(0.9, True, 1.0)] * 40
            + [(0.1, False, 1.0)] * 30
            + [(0.9, False, 1.0)] * 5
            + [(0.1, True, 1.0)] * 5
            + [(0.9, False, 0.0)] * 10
        )
    ]
    body = fit.fit_family("opa_search", rows)
    coefficients = dict(zip(body["features"], body["coefficients"], strict=True))
    assert coefficients["margin"] > 0 and body["n"] == 80 and body["right"] == 45
    assert body["paths"] == "both"
    same = [fit.Answer(f"c{i}", "odb.get", "odb", _features(), True, "r") for i in range(18)]
    only_right = fit.fit_family("odb", same)
    assert only_right["coefficients"] == [0.0] * len(only_right["features"])
    assert 1 / (1 + math.exp(-only_right["intercept"])) == pytest.approx(19 / 20, abs=1e-6)


def _features(**values: float) -> dict[str, float]:
    return {name: values.get(name, 0.0) for name in FEATURES}


def test_a_broken_model_file_is_refused_naming_the_problem() -> None:
    good = {"model": "logistic", "features": ["margin"], "coefficients": [1.0], "intercept": 0}
    with pytest.raises(CalibrationFileError, match="version"):
        parse({"version": 99, "families": {}})
    with pytest.raises(CalibrationFileError, match=r"unknown features .*'nonsense'"):
        parse({"version": 1, "families": {"x": {**good, "features": ["nonsense"]}}})
    with pytest.raises(CalibrationFileError, match="1 features, 2 coefficients"):
        parse({"version": 1, "families": {"x": {**good, "coefficients": [1.0, 2.0]}}})
    with pytest.raises(CalibrationFileError, match=r"x\.paths: expected 'any' or 'both'"):
        parse({"version": 1, "families": {"x": {**good, "paths": "some"}}})


def test_a_model_of_both_path_answers_bounds_an_answer_one_path_gave() -> None:
    """`paths: both`: an answer without both paths (a path failed, or only one was asked) takes
    the lowest bound; a model of any answers bounds only a failed path's. Hand-computed on
    z = 2 * margin - 1 * unsettled: margin (positive) to 0, unsettled (negative) to 1: z = -1 ->
    0.2689."""
    body = {"model": "logistic", "features": ["margin", "unsettled"], "coefficients": [2.0, -1.0]}
    both = parse({"version": 1, "families": {"f": {**body, "intercept": 0, "paths": "both"}}})
    anyp = parse({"version": 1, "families": {"f": {**body, "intercept": 0}}})
    one_path = {"margin": 0.9, "unsettled": 0.0, "both_paths": 0.0}
    two_paths = {**one_path, "both_paths": 1.0}
    assert both.families["f"].bound_for(one_path, path_failed=False) == 0.2689
    assert both.families["f"].bound_for(two_paths, path_failed=False) is None
    assert both.families["f"].bound_for(two_paths, path_failed=True) == 0.2689
    assert anyp.families["f"].bound_for(one_path, path_failed=False) is None
    assert anyp.families["f"].bound_for(one_path, path_failed=True) == 0.2689


def test_a_flagged_answer_states_no_more_than_its_flags_ceiling() -> None:
    """Hand-computed: z = 3 * margin, margin 1 -> 0.9526; unsettled (ceiling 0.7) caps it at 0.7,
    an unflagged answer keeps it; the lowest bound takes the lowest ceiling it could have met."""
    body = {"model": "logistic", "features": ["margin", "unsettled"], "coefficients": [3.0, 0.0]}
    model = parse(
        {
            "version": 1,
            "families": {"f": {**body, "intercept": 0, "ceilings": {"unsettled": 0.7}}},
        }
    ).families["f"]
    assert model.probability({"margin": 1.0, "unsettled": 0.0}) == 0.9526
    assert model.probability({"margin": 1.0, "unsettled": 1.0}) == 0.7
    assert model.lowest({"margin": 1.0, "unsettled": 0.0}) == 0.5
    good = {**body, "intercept": 0}
    with pytest.raises(CalibrationFileError, match=r"f\.ceilings: unknown flag 'nonsense'"):
        parse({"version": 1, "families": {"f": {**good, "ceilings": {"nonsense": 0.5}}}})
    with pytest.raises(CalibrationFileError, match=r"f\.ceilings\.unsettled: .*\(0, 1\]"):
        parse({"version": 1, "families": {"f": {**good, "ceilings": {"unsettled": 1.5}}}})


def test_a_flags_ceiling_is_the_rate_of_its_most_confident_quarter() -> None:
    """Twelve unsettled both-path answers, margins 0.1-0.9: the top quarter by fitted logit is
    the three at margin 0.9 plus the one tied with them (four), two right: (2 + 1) / (4 + 2) =
    0.5, whatever order the answers come in. A single-path flagged answer is left out; a family
    without the flag among its features gets no ceiling."""
    rows = [
        (0.1, True), (0.1, False), (0.2, True), (0.3, True), (0.4, False), (0.5, True),
        (0.6, True), (0.7, True), (0.9, True), (0.9, False), (0.9, False), (0.9, True),
    ]  # fmt: skip
    answers = [
        fit.Answer(f"c{i}", "t", "f", _features(margin=m, unsettled=1.0, both_paths=1.0), r, "r")
        for i, (m, r) in enumerate(rows)
    ] + [fit.Answer("one", "t", "f", _features(margin=1.0, unsettled=1.0), False, "r")]
    coefficients = {"margin": 2.0, "unsettled": -1.0}
    names = ("margin", "unsettled")
    assert fit._ceilings(names, coefficients, 0.0, answers) == {"unsettled": 0.5}
    assert fit._ceilings(names, coefficients, 0.0, answers[::-1]) == {"unsettled": 0.5}
    assert fit._ceilings(("margin",), coefficients, 0.0, answers) == {}


def test_clinician_questions_with_a_doubt_flag_cap_every_flags_ceiling() -> None:
    """The quarter rule gives unsettled (11 + 1) / (12 + 2) = 0.8571 over twelve derived answers
    at one margin (eleven right). Ten flagged clinician questions, four right, cap it at
    (4 + 1) / (10 + 2) = 0.4167; nine (below MIN_CLINICIAN_FLAGGED) leave it alone, and a
    clinician question without a flag, or one path, counts for nothing."""
    assert fit.MIN_CLINICIAN_FLAGGED == 10
    flagged = _features(margin=0.5, unsettled=1.0, both_paths=1.0)
    derived = [fit.Answer(f"d{i}", "t", "f", flagged, i > 0, "r") for i in range(12)]

    def clinician(n: int) -> list[fit.Answer]:
        return [fit.Answer(f"clinician.f.{i:03d}", "t", "f", flagged, i < 4, "r") for i in range(n)]

    bystanders = [
        fit.Answer("clinician.f.900", "t", "f", _features(margin=0.5, both_paths=1.0), True, "r"),
        fit.Answer("clinician.f.901", "t", "f", _features(margin=0.5, unsettled=1.0), True, "r"),
    ]
    names = ("margin", "unsettled")
    coefficients = {"margin": 2.0, "unsettled": -1.0}
    assert fit._ceilings(names, coefficients, 0.0, derived) == {"unsettled": 0.8571}
    # the quarter now holds the clinician questions too, tied at the same logit: 15 of 22 right
    capped = fit._ceilings(names, coefficients, 0.0, derived + clinician(10) + bystanders)
    assert capped == {"unsettled": 0.4167}
    uncapped = fit._ceilings(names, coefficients, 0.0, derived + clinician(9) + bystanders)
    assert uncapped == {"unsettled": round((11 + 4 + 1) / (21 + 2), 4)}


def test_features_are_named_plain_floats_in_one_order() -> None:
    values = features(
        Signals(top_scores=(4.0, 3.0), shared=4, default_rule=True), None, 2, ["sql"], 0.6
    )
    assert tuple(values) == FEATURES
    assert values["margin"] == 0.25 and values["shared"] == 2.0  # (4-3)/4; log2(4)
    assert (
        values["both_paths"] == 0.0 and values["conflict"] == 1.0 and values["default_rule"] == 1.0
    )
    assert margin(()) == 0.0 and margin((3.0,)) == 1.0 and margin((2.0, 2.0)) == 0.0


@pytest.mark.parametrize(
    ("top_scores", "lexical", "paths", "contested"),
    [
        ((10.0, 6.0), 0.0, ["sql", "vector"], 0.0),  # margin exactly 0.4: clear enough
        ((10.0, 6.001), 0.0, ["sql", "vector"], 1.0),  # just under 0.4
        ((10.0, 9.0), 1 / 3, ["sql", "vector"], 1.0),  # a third of the words: not named
        ((10.0, 9.0), 0.5, ["sql", "vector"], 0.0),  # half the words name it
        ((10.0, 9.0), 0.0, ["vector"], 0.0),  # one path: nothing was contested
        ((10.0,), 0.0, ["sql", "vector"], 0.0),  # one document: margin 1
    ],
)
def test_contested_marks_a_close_second_the_words_do_not_settle(
    top_scores: tuple[float, ...], lexical: float, paths: list[str], contested: float
) -> None:
    """Boundaries first: margin 0.4 and a word share of a third (features.CONTESTED_*)."""
    values = features(Signals(top_scores=top_scores, lexical=lexical), None, 0, paths, 0.9)
    assert values["contested"] == contested


def test_the_split_is_seeded_and_about_half() -> None:
    ids = [f"derived.odb.din.{i}" for i in range(2000)]
    fit_half = [i for i in ids if split.in_fit_half(i)]
    assert fit_half == [i for i in ids if split.in_fit_half(i)]
    assert 900 < len(fit_half) < 1100
    assert fit_half != [i for i in ids if split.in_fit_half(i, seed=1)]


def _corpus_documents() -> dict[str, dict[str, Any]]:
    """Every current OPA corpus document by its official URL."""
    out = {}
    for path in CORPUS.glob("*/*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not doc.get("is_superseded"):
            out[str(doc["source_url"])] = doc
    return out


def test_clinician_questions_name_published_guidance_and_split_like_the_rest(
    tmp_path: Path,
) -> None:
    """Every URL a hand-written question names is a current document's official URL in the
    corpus, a policy comes with its companion when it has one, and the cases are split by the
    same seeded rule as the derived ones, into one family per tool."""
    documents = _corpus_documents()
    content = yaml.safe_load(split.QUESTIONS.read_text(encoding="utf-8"))
    unfitted = yaml.safe_load(UNFITTED_QUESTIONS.read_text(encoding="utf-8"))
    assert set(content) == set(FAMILIES) == set(unfitted)
    asked = set()
    for groups in [*content.values(), *unfitted.values()]:
        for group in groups:
            urls = group["guidance"]
            assert urls and all(u in documents for u in urls), urls
            ids = {documents[u]["document_id"] for u in urls}
            companions = {
                documents[u]["document_id"]
                for u in documents
                if documents[u].get("companion_of") in ids
            }
            assert companions <= ids, (urls, companions - ids)
            assert group["questions"] and all(q.strip() for q in group["questions"])
            for q in group["questions"]:  # no question is both fitted on and not
                assert q.strip().lower() not in asked, q
                asked.add(q.strip().lower())
    (tmp_path / "derived").mkdir()
    counts = split.split_cases(
        tmp_path / "derived", tmp_path / "cases", None, split.SEED, split.QUESTIONS
    )
    for tool, (family, path) in FAMILIES.items():
        lines = [
            json.loads(line)
            for half in ("fit", "held_out")
            for line in (tmp_path / "cases" / half / f"{family}.jsonl").read_text().splitlines()
        ]
        asked = sum(len(g["questions"]) for g in content[tool])
        assert len(lines) == asked == sum(counts[family].values())
        assert all(c["tool"] == tool and c["expect"][0]["path"] == path for c in lines)
        fit_ids = {c["id"] for c in lines if split.in_fit_half(c["id"])}
        assert 0 < len(fit_ids) < asked


def test_the_paths_agree_when_they_lead_with_one_guidance() -> None:
    """A document and its companion are one guidance: for the margin and for whether the
    keyword and vector paths lead with the same answer."""
    from reference_server.tools import section_ambiguity as sa
    from reference_server.tools import section_merge as sm

    def hit(doc: str, score: float, sql: int | None, vec: int | None) -> sm.SectionHit:
        row = SimpleNamespace(document_id=doc)
        return sm.SectionHit(f"{doc}:s1", f"{doc}:s1", row, score, sql, vec)  # type: ignore[arg-type]

    families = {"policy-advice": "policy"}
    together = sm.Ranked([hit("policy", 3.0, 1, None), hit("policy-advice", 2.9, None, 1)], [], {})
    together = sm.Ranked(together.hits, together.hits, {}, families=families)
    assert sa.paths_agree(together)
    assert sa.best_per_guidance(together) == (3.0,)  # one guidance: margin 1
    apart = sm.Ranked(together.hits, together.hits, {})  # no companions known
    assert not sa.paths_agree(apart)
    assert sa.best_per_guidance(apart) == (3.0, 2.9)
    one_path = sm.Ranked([hit("policy", 3.0, 1, None)], [], {}, families=families)
    assert not sa.paths_agree(one_path)


# ----------------------------------------------------------------------------- the answers


def _owners(heading: str) -> set[str]:
    """The current documents whose corpus file has a section with this heading."""
    key = " ".join(re.findall(r"[a-z0-9]+", heading.casefold()))
    out = set()
    for path in CORPUS.glob("*/*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if doc.get("is_superseded"):
            continue
        for section in doc.get("sections") or []:
            if (
                " ".join(re.findall(r"[a-z0-9]+", str(section.get("heading", "")).casefold()))
                == key
            ):
                out.add(doc["document_id"])
    return out


@pytest.mark.asyncio
async def test_a_heading_several_documents_share_lists_them_below_0_9(client: Client[Any]) -> None:
    heading = "Pharmacotherapy options"
    owners = _owners(heading)
    assert (
        len(owners) >= 3
    )  # the corpus: obesity management, chronic insomnia, alcohol use disorder
    out = await call(client, "opa.search_sections", {"query": heading})
    listed = {c["document_id"] for c in out["ambiguous_between"]}
    assert owners <= listed
    assert out["confidence"] < 0.9


@pytest.mark.asyncio
async def test_a_question_naming_its_document_is_not_ambiguous(client: Client[Any]) -> None:
    out = await call(
        client, "opa.search_sections", {"query": "CPSO policy on medical assistance in dying"}
    )
    assert out["ambiguous_between"] == []
    assert out["confidence_basis"]["features"]["shared"] == 0.0


@pytest.mark.asyncio
async def test_adp_device_without_its_own_split_says_it_is_the_general_rule(
    client: Client[Any],
) -> None:
    hearing = await call(client, "adp.get", {"query": "ADP funding for a hearing aid?"})
    walker = await call(client, "adp.get", {"query": "ADP funding for a walker?"})
    # the Hearing Devices manual states no split (terms.py); the Mobility manual does (110.01, 705)
    assert re.search(r"(?i)no funding split of its own", hearing["summary"])
    assert re.search(r"(?i)unless noted otherwise", hearing["summary"])
    assert re.search(r"(?i)maximum contribution.*grants", hearing["summary"])
    assert "adp:core_manual:Section 305.01" in [c["loc"] for c in hearing["citations"]]
    assert hearing["funding"]["general_rule"] is True and walker["funding"]["general_rule"] is False
    assert hearing["confidence_basis"]["features"]["default_rule"] == 1.0
    assert walker["confidence_basis"]["features"]["default_rule"] == 0.0
    assert hearing["confidence"] < 0.9 <= walker["confidence"]


@pytest.mark.asyncio
async def test_adp_manual_terms_other_than_a_split_are_stated(client: Client[Any]) -> None:
    out = await call(client, "adp.get", {"query": "ADP funding for a continuous glucose monitor?"})
    assert re.search(r"(?i)receiver .*no cost", out["summary"])
    assert "adp:glucose_monitoring:Section 200.04" in [c["loc"] for c in out["citations"]]


@pytest.mark.asyncio
async def test_the_spec_score_stays_visible_with_its_inputs(client: Client[Any]) -> None:
    out = await call(client, "odb.get", {"drug": "metformin", "strength": "500mg"})
    basis = out["confidence_basis"]
    inputs = basis["spec_inputs"]
    expected = calculate_confidence(
        inputs["sql_records"],
        inputs["vector_passages"],
        inputs["conflicts"],
        PROFILES[inputs["profile"]],
        num_corroborated=inputs["corroborated"],
    )
    assert basis["spec_score"] == expected
    assert basis["model"] == "calibrated" and out["confidence"] == basis["calibrated"]


@pytest.mark.asyncio
async def test_confidence_model_spec_states_the_spec_score(server: FastMCP) -> None:
    args = {"query": "ADP funding for a hearing aid?"}
    result = await run_fresh("adp.get", args, confidence_model="spec")
    out = result.structured_content
    assert out["confidence_basis"]["model"] == "spec"
    assert out["confidence"] == out["confidence_basis"]["spec_score"]
    assert out["confidence_basis"]["calibrated"] is not None
