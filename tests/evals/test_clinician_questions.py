"""Clinician-question files as cases (ocm_common/clinician_questions.py, `ocm derive --questions`)
and the verdict on them (evals/questions.gate.yaml): a bad file named by its field, a run that
judged nothing said so, and a wrong answer stated at >= 0.8 named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.read import gate
from evals.run.runlog import CheckOutcome, ScenarioRecord
from ocm_cli.program import main as ocm_main
from ocm_common import clinician_questions as cq
from tests.evals.test_calibration_metrics import log_of

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS_GATE = ROOT / "evals" / "questions.gate.yaml"
POLICY = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/Consent-to-Treatment"
ADVICE = f"{POLICY}/Advice-to-the-Profession-Consent-to-Treatment"
TOOL_PAGE = "https://tools.cep.health/tool/opioid-tapering/"

GOOD = f"""
opa.policy_check:
  - guidance: [{POLICY}, {ADVICE}]
    questions:
      - "Is a 14-year-old able to agree to treatment?"
      - "  How much must I explain before a procedure?  "
opa.search_sections:
  - guidance: [{TOOL_PAGE}]
    questions: ["How fast should I taper opioids?"]
"""


def _file(tmp_path: Path, text: str, name: str = "q.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_questions_become_one_family_per_tool_numbered_in_file_order(tmp_path: Path) -> None:
    found = cq.cases(_file(tmp_path, GOOD))
    assert set(found) == {"opa.clinician_policy", "opa.clinician_search"}
    policy = found["opa.clinician_policy"]
    assert [c["id"] for c in policy] == [
        "clinician.opa.clinician_policy.001",
        "clinician.opa.clinician_policy.002",
    ]
    assert policy[1]["args"] == {"query": "How much must I explain before a procedure?"}
    assert policy[0]["expect"] == [
        {"check": "mentions", "path": "policies[0].source_url", "value": [[POLICY, ADVICE]]}
    ]
    (search,) = found["opa.clinician_search"]
    assert search["tool"] == "opa.search_sections"
    assert search["expect"][0]["path"] == "sections[0].source_url"
    assert search["tags"] == ["clinician", "family:opa.clinician_search"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "expected a mapping of tool to question groups"),
        ("opa.get_section:\n  - guidance: [https://a.b]\n    questions: [x]\n", "allowed: "),
        ("opa.policy_check: []\n", "opa.policy_check: expected a list of question groups"),
        ("opa.policy_check:\n  - guidance: [not-a-url]\n    questions: [x]\n", "guidance.0"),
        ("opa.policy_check:\n  - guidance: [https://a.b]\n", "questions: Field required"),
        ("opa.policy_check:\n  - guidance: []\n    questions: [x]\n", "guidance: List should"),
        ("opa.policy_check:\n  - guidance: [https://a.b]\n    questions: ['  ']\n", "questions.0"),
        (
            "opa.policy_check:\n  - guidance: [https://a.b]\n    questions: [x]\n    q: [y]\n",
            "q: Extra inputs",
        ),
    ],
)
def test_a_bad_file_is_named_with_its_field(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(cq.QuestionFileError) as err:
        cq.read(_file(tmp_path, text))
    assert named in str(err.value) and "q.yaml" in str(err.value)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(cq.QuestionFileError, match="cannot be read"):
        cq.read(tmp_path / "absent.yaml")


def test_derive_asks_only_the_questions_when_only_their_families_are_named(
    tmp_path: Path,
) -> None:
    out = tmp_path / "cases"
    questions = _file(tmp_path, GOOD.split("opa.search_sections:")[0])
    args = ["derive", "--questions", str(questions), "--out", str(out)]
    args += ["--family", "opa.clinician_policy", "--family", "opa.clinician_search"]
    assert ocm_main(args) == 0
    assert sorted(p.name for p in out.glob("*.jsonl")) == ["opa.clinician_policy.jsonl"]
    lines = (out / "opa.clinician_policy.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "clinician.opa.clinician_policy.001",
        "clinician.opa.clinician_policy.002",
    ]


def test_derive_asks_every_question_beside_a_sampled_corpus_family(tmp_path: Path) -> None:
    """--per-family samples the corpus's families only; --family chooses among all of them."""
    questions = str(_file(tmp_path, GOOD))

    def sizes(*families: str) -> dict[str, int]:
        out = tmp_path / "-".join(families)
        args = ["derive", "--questions", questions, "--out", str(out), "--per-family", "1"]
        for family in families:
            args += ["--family", family]
        assert ocm_main(args) == 0
        return {p.stem: len(p.read_text().splitlines()) for p in out.glob("*.jsonl")}

    both = sizes("schedule.code_fee", "opa.clinician_policy", "opa.clinician_search")
    assert both == {"schedule.code_fee": 1, "opa.clinician_policy": 2, "opa.clinician_search": 1}
    assert sizes("schedule.code_fee") == {"schedule.code_fee": 1}


def test_unfitted_questions_take_families_of_their_own_beside_the_fitted(
    tmp_path: Path,
) -> None:
    """The fitted file's cases stay as they were; the unfitted file's are numbered in their own
    families, so neither shifts the other's ids (and the calibration's split never sees them)."""
    questions = str(_file(tmp_path, GOOD))
    unfitted = str(_file(tmp_path, GOOD.split("opa.search_sections:")[0], "u.yaml"))
    out = tmp_path / "cases"
    args = ["derive", "--questions", questions, "--unfitted-questions", unfitted]
    args += ["--out", str(out), "--family", "opa.clinician_policy"]
    args += ["--family", "opa.clinician_policy_unfitted"]
    assert ocm_main(args) == 0
    ids = {
        p.stem: [json.loads(line)["id"] for line in p.read_text().splitlines()]
        for p in out.glob("*.jsonl")
    }
    assert ids == {
        "opa.clinician_policy": [
            "clinician.opa.clinician_policy.001",
            "clinician.opa.clinician_policy.002",
        ],
        "opa.clinician_policy_unfitted": [
            "clinician.opa.clinician_policy_unfitted.001",
            "clinician.opa.clinician_policy_unfitted.002",
        ],
    }
    (first, _) = cq.cases(Path(unfitted), unfitted=True)["opa.clinician_policy_unfitted"]
    assert first["tags"] == ["clinician", "family:opa.clinician_policy_unfitted"]
    assert cq.cases(Path(questions)) == cq.cases(Path(questions), unfitted=False)


def test_derive_refuses_a_bad_question_file(tmp_path: Path) -> None:
    bad = _file(tmp_path, "opa.get_section:\n  - guidance: [https://a.b]\n    questions: [x]\n")
    assert ocm_main(["derive", "--questions", str(bad), "--out", str(tmp_path / "o")]) == 2


# ----------------------------------------------------------------------------- the verdict


def _record(sid: str, confidence: float | None, right: bool) -> ScenarioRecord:
    checks = [CheckOutcome(check="mentions", passed=right, message=None if right else "wrong")]
    result = {"policies": [{"source_url": POLICY}]}
    if confidence is not None:
        result["confidence"] = confidence  # type: ignore[assignment]
    return ScenarioRecord(
        id=sid,
        title=sid,
        tool="opa.policy_check",
        version=1,
        tags=["clinician", "family:opa.clinician_policy"],
        status="passed" if right else "failed",
        checks=checks,
        result=result,
    )


def test_the_questions_gate_names_a_wrong_answer_at_0_8_and_passes_one_below() -> None:
    config = gate.load_config(QUESTIONS_GATE)
    right = [_record(f"clinician.r{i}", 0.9, True) for i in range(12)]
    report = gate.evaluate(log_of([*right, _record("clinician.w", 0.8, False)]), config, None)
    assert report.exit_code == gate.EXIT_FAIL
    assert [f.message.rsplit("; ", 1)[-1] for f in report.failures] == [
        "wrong at >= 0.8: clinician.w"
    ]
    assert any("case families only" in n for n in report.notes)
    report = gate.evaluate(log_of([*right, _record("clinician.w", 0.79, False)]), config, None)
    assert report.exit_code == gate.EXIT_PASS, [f.message for f in report.failures]


@pytest.mark.parametrize(
    ("records", "why"),
    [
        ([_record(f"q{i}", None, True) for i in range(12)], "no confidence published"),
        ([_record(f"q{i}", 0.9, True) for i in range(4)], "fewer than 10 answers"),
    ],
)
def test_the_questions_gate_says_when_it_judged_nothing(
    records: list[ScenarioRecord], why: str
) -> None:
    report = gate.evaluate(log_of(records), gate.load_config(QUESTIONS_GATE), None)
    assert report.exit_code == gate.EXIT_HARNESS
    assert report.error is not None and "judged on nothing" in report.error and why in report.error
