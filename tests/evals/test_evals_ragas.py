"""ragas metrics: offline by default; LLM-judged wiring exercised against a loopback fake."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from fake_server import build_server

from evals.run import ragas_metrics as rm
from evals.run.runner import RunOptions, execute
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target

SAMPLE = rm.RagasInput(
    question="Is A007 billable?",
    answer="A007 is billable. The fee is $37.95.",
    contexts=("A007 intermediate assessment is billable by GPs.",),
    retrieved_ids=("a", "b", "c"),
    relevant_ids=("a", "d"),
    reference="A007 is billable; it needs a referral.",
    reference_contexts=("A007 intermediate assessment is billable by GPs.",),
)


def test_tracking_is_off() -> None:
    assert os.environ["RAGAS_DO_NOT_TRACK"] == "true"


async def test_offline_metrics_without_a_key() -> None:
    scores, errors = await rm.score_one(SAMPLE, None)
    assert errors == {}
    assert set(scores) == {
        "id_context_precision",
        "id_context_recall",
        "string_similarity",
        "nonllm_context_recall",
    }
    assert scores["id_context_precision"] == pytest.approx(1 / 3)  # a of {a, b, c}
    assert scores["id_context_recall"] == pytest.approx(1 / 2)  # a of {a, d}
    assert (
        scores["nonllm_context_recall"] == 1.0
    )  # the one reference context was retrieved verbatim
    assert 0.0 < (scores["string_similarity"] or 0.0) < 1.0


async def test_metrics_without_their_inputs_are_absent() -> None:
    bare = rm.RagasInput("q", "", (), (), ("a",))
    scores, _ = await rm.score_one(bare, None)
    assert scores == {"id_context_recall": 0.0}  # nothing retrieved: recall 0, precision undefined


def test_llm_needs_a_key() -> None:
    assert not rm.llm_enabled({})
    assert rm.build_judges({}) is None
    assert rm.llm_enabled({"OPENAI_API_KEY": "sk-x"})


async def test_llm_judged_metrics_through_an_openai_compatible_endpoint() -> None:
    with FakeOpenAI() as api:
        judges = rm.build_judges(
            {
                "OPENAI_API_KEY": "sk-test",
                "OPENAI_BASE_URL": api.base_url,
                "EVALS_LLM_MODEL": "judge-1",
            }
        )
        assert judges is not None and judges.base_url == api.base_url
        scores, errors = await rm.score_one(SAMPLE, judges)
    assert errors == {}
    # Canned verdicts: 1 of 2 statements faithful, 1 of 2 reference statements attributed,
    # the only context judged useful, identical embeddings.
    assert scores["faithfulness"] == pytest.approx(0.5)
    assert scores["llm_context_recall"] == pytest.approx(0.5)
    assert scores["llm_context_precision"] == pytest.approx(1.0, abs=1e-6)
    assert scores["semantic_similarity"] == pytest.approx(1.0)
    paths = [r["path"] for r in api.requests]
    assert paths.count("/v1/chat/completions") == 4 and paths.count("/v1/embeddings") == 2
    assert all(r["auth"] == "Bearer sk-test" for r in api.requests)
    assert {r["body"]["model"] for r in api.requests if r["path"].endswith("completions")} == {
        "judge-1"
    }


async def test_judge_failures_are_recorded_not_raised() -> None:
    with FakeOpenAI(fail_chat=True) as api:
        judges = rm.build_judges({"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": api.base_url})
        scores, errors = await rm.score_one(SAMPLE, judges, names=["faithfulness"])
    assert scores == {"faithfulness": None}
    assert "judge unavailable" in errors["faithfulness"]


async def test_runner_uses_judges_when_a_key_is_set(
    tmp_path: Path, golden_fake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI() as api:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        log = await execute(
            server_target(build_server()),
            load_scenarios(golden_fake, select=["fake-search-virtual-care"]),
            tmp_path / "run",
            options=RunOptions(),
        )
    record = log.records[0]
    assert record.ragas["faithfulness"] == pytest.approx(0.5)
    assert record.ragas["id_context_recall"] == 1.0
    assert log.summary.aggregates["ragas"]["overall"]["faithfulness"] == pytest.approx(0.5)
