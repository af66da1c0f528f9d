"""Public keys: a backend that cites the same ADP section, DIN, LU code, fee code or official page
in its own spelling is judged as one that uses ours; a different fact still fails."""

from __future__ import annotations

from typing import Any

import pytest
from evals_testkit import record

from evals.run.aggregates import counts
from evals.run.check_failures import ContainmentFailure, RankOrderFailure
from evals.run.checks import CheckContext, CheckSpec, run_check
from evals.run.metrics import qrels_and_run, score_records
from evals.run.outcome import CallOutcome
from evals.run.public_keys import only_private_ids, public_key
from evals.run.runlog import CheckOutcome, ScenarioRecord


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("adp:mobility:Section 705", "adp:mobility:705"),
        ("Mobility Devices Manual, section 705", "adp:mobility:705"),
        ("ADP mobility s. 705.01", "adp:mobility:705.01"),
        ("Assistive Devices Program, Grants, s. 305.01", "adp:grants:305.01"),
        ("Communication Aids manual section 410", "adp:comm_aids:410"),
        ("Maxillofacial Prosthetic Devices manual, section 205", "adp:maxillofacial:205"),
        ("02443937", "din:02443937"),
        ("DIN 02443937", "din:02443937"),
        ("LU code 431", "lu:431"),
        ("A007", "fee:A007"),
        ("fee code A007A", "fee:A007"),
        ("https://www.CPSO.on.ca/en/Policy/X/?utm=1#top", "url:cpso.on.ca/en/Policy/X"),
        ("http://cpso.on.ca/en/Policy/X", "url:cpso.on.ca/en/Policy/X"),
    ],
)
def test_each_spelling_names_its_public_key(text: str, key: str) -> None:
    assert public_key(text) == key


@pytest.mark.parametrize(
    "text",
    [
        "adp:cep:thresholds",  # no section number
        "moh-bulletin-20250101",  # a date, not a DIN
        "odb:note:N085",  # another register's id, not a fee code
        "cpso-virtual-care:s02",  # our own slug: no public key, kept as it is
        "section 705",  # which manual?
    ],
)
def test_text_naming_no_public_key_is_left_alone(text: str) -> None:
    assert public_key(text) is None


def _ctx(result: dict[str, Any], ids: tuple[str, ...] = ()) -> CheckContext:
    return CheckContext(result, CallOutcome(structured=result, is_error=False, text=""), None, ids)


def test_contains_matches_a_section_in_another_backends_spelling_and_no_other_section() -> None:
    theirs = {"citations": [{"loc": "Mobility Devices Manual, section 705"}]}
    spec = CheckSpec(check="contains", path="citations[*].loc", value="adp:mobility:Section 705")
    run_check(_ctx(theirs), spec)
    other = {"citations": [{"loc": "Mobility Devices Manual, section 710"}]}
    with pytest.raises(ContainmentFailure):
        run_check(_ctx(other), spec)


def test_ranked_before_reads_public_keys() -> None:
    ids = ("Mobility Devices Manual, section 135", "Mobility Devices Manual, section 070")
    ok = CheckSpec(
        check="ranked_before", before="adp:mobility:Section 135", after="adp:mobility:Section 070"
    )
    run_check(_ctx({}, ids), ok)
    wrong = CheckSpec(
        check="ranked_before", before="adp:mobility:Section 070", after="adp:mobility:Section 135"
    )
    with pytest.raises(RankOrderFailure):
        run_check(_ctx({}, ids), wrong)


def test_retrieval_metrics_are_the_same_in_either_spelling() -> None:
    judged = {"adp:mobility:Section 705": 3, "adp:mobility:Section 410": 2, "adp:cep:thresholds": 3}
    ours = ["adp:mobility:Section 705", "adp:cep:thresholds", "adp:mobility:Section 410"]
    theirs = ["Mobility Devices Manual, section 705", "adp:cep:thresholds", "ADP mobility s. 410"]
    scored = score_records(
        [
            record("ours", tool="adp.get", relevant=judged, retrieved=ours),
            record("theirs", tool="adp.get", relevant=judged, retrieved=theirs),
        ]
    )
    assert scored[0].metrics == scored[1].metrics and scored[0].metrics["nDCG@10"] == 1.0
    qrels, run = qrels_and_run(scored)
    assert set(qrels["theirs"]) == {"adp:mobility:705", "adp:mobility:410", "adp:cep:thresholds"}
    assert list(run["theirs"]) == ["adp:mobility:705", "adp:cep:thresholds", "adp:mobility:410"]


CPSO = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/Consent-to-Treatment"


@pytest.mark.parametrize(
    ("retrieved", "relevant", "private"),
    [
        (["ipac-7", "ipac-9"], {f"{CPSO} § Capacity": 3}, True),  # own ids only: not measured
        ([f"{CPSO} § Capacity", "ipac-9"], {f"{CPSO} § Capacity": 3}, False),  # one public id
        ([], {f"{CPSO} § Capacity": 3}, False),  # nothing retrieved: scored 0, not excused
        (["ipac-7"], {"ipac-7": 3}, False),  # judged on the backend's own ids (an id lookup)
        (["ipac-7"], {f"{CPSO} § Capacity": 3, "ipac-7": 1}, False),
    ],
)
def test_a_ranking_of_own_ids_only_is_not_measured(
    retrieved: list[str], relevant: dict[str, int], private: bool
) -> None:
    assert only_private_ids(retrieved, relevant) is private


def unjudged(scenario_id: str, check: str, path: str, why: str) -> ScenarioRecord:
    """A passed record with one check that found nothing to judge."""
    found = record(scenario_id)
    message = f"{check} at {path}: not checked ({why})"
    found.checks.append(
        CheckOutcome(check=check, path=path, passed=True, checked=False, message=message)
    )
    return found


def test_checks_with_nothing_to_judge_are_counted_apart_from_passes() -> None:
    judged = record("a")
    nothing = unjudged("b", "same_section", "requirements[0]", "it names no official URL")
    assert "checks_not_checked" not in counts([judged])
    assert counts([judged, nothing])["checks_not_checked"] == 1


def test_a_scenario_that_passed_on_form_alone_is_counted() -> None:
    form_only = unjudged("c", "any_item", "provenance_issues", "it reads provenance_issues")
    judged = record("d")
    judged.checks.append(CheckOutcome(check="equals", path="documents_checked", passed=True))
    assert counts([form_only, judged])["passed_judging_no_fact"] == 1
    assert "passed_judging_no_fact" not in counts([judged, record("e")])  # no fact check at all
