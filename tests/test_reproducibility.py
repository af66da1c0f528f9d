"""Answers that do not depend on the CPU: this machine computes what the fixture recorded.

`tests/fixtures/reproducibility.json` holds query vectors and top-10 ids recorded on another
machine (its CPU is in the file). A difference here means the CPU changed an answer: the test
names the texts and calls that moved, where a gate would only see metric drops.
To try another instruction set on one machine, run this file under Debian's qemu-user:
`qemu-x86_64 -cpu Nehalem .venv/bin/python -m pytest --timeout=0 tests/test_reproducibility.py`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from fastmcp import FastMCP

from evals.run import reproducibility as repro
from evals.run.environment import index_fingerprint
from evals.run.scenario import load_scenarios
from evals.run.targets import server_target
from ocm_common.machine import one_line
from reference_server.config import Settings
from reference_server.embedding import family_embedder_name
from reference_server.server import build_server
from reference_server.static_embedding import STATIC_NAME
from tests.conftest import make_settings, share_stores

REWRITE = "re-record it deliberately: .venv/bin/ocm fixture --write"


@pytest.fixture(scope="module")
def fixture() -> repro.Fixture:
    data: repro.Fixture = json.loads(repro.FIXTURE.read_text(encoding="utf-8"))
    return data


def test_the_fixture_covers_enough_golden_texts_and_calls(fixture: repro.Fixture) -> None:
    scenarios = load_scenarios(repro.GOLDEN)
    assert len(fixture["vectors"]) >= 50
    assert len(fixture["calls"]) >= 30
    assert sum(len(c["top_ids"]) == repro.DEPTH for c in fixture["calls"]) >= 30
    # Every golden text and retrieval call is pinned, not a convenient subset.
    assert [v["text"] for v in fixture["vectors"]] == repro.query_texts(scenarios)
    assert [c["scenario"] for c in fixture["calls"]] == [
        s.id for s in repro.retrieval_scenarios(scenarios)
    ]


def test_the_fixture_was_recorded_with_this_model_and_index(fixture: repro.Fixture) -> None:
    settings = Settings.from_env()
    model = family_embedder_name(settings, "opa")
    assert fixture["model"] == model, (
        f"fixture made with {fixture['model']}, not {model}: {REWRITE}"
    )
    static = STATIC_NAME if settings.static_embedding else None
    assert fixture.get("static_model") == static, (
        f"fixture made with static model {fixture.get('static_model')}, not {static}: {REWRITE}"
    )
    fingerprint = index_fingerprint()
    assert fixture["index_fingerprint"] == fingerprint, (
        f"the index ({str(fingerprint)[:12]}) is not the one the fixture was recorded on "
        f"({str(fixture['index_fingerprint'])[:12]}): the corpus, builder or model changed; {REWRITE}"
    )


def test_query_vectors_equal_the_fixture_within_the_tolerance(fixture: repro.Fixture) -> None:
    texts = [v["text"] for v in fixture["vectors"]]
    model, vectors = repro.embed(texts)
    static_model, static = repro.embed(texts, static=True) if repro.uses_static() else (None, None)
    observed = repro.Observed(
        model,
        dict(zip(texts, vectors, strict=True)),
        {},
        static_model,
        None if static is None else dict(zip(texts, static, strict=True)),
    )
    fixture_vectors_only: repro.Fixture = {**fixture, "calls": []}
    problems = repro.differences(fixture_vectors_only, observed)
    assert not problems, (
        f"on {one_line()} (fixture recorded on {one_line(fixture['recorded_on'])}):\n"
        + "\n".join(problems)
    )


def test_the_tolerance_would_catch_a_saturating_kernel(fixture: repro.Fixture) -> None:
    """An integer kernel that saturates moved components by ~1e-2; the check must see that."""
    entry = fixture["vectors"][0]
    moved = repro.decode(entry["float32_le_base64"]).copy()
    moved[7] += 5e-3
    observed = repro.Observed(
        fixture["model"], {entry["text"]: moved}, {}, fixture.get("static_model"), {}
    )
    only: repro.Fixture = {**fixture, "vectors": [entry], "static_vectors": [], "calls": []}
    problems = repro.differences(only, observed)
    assert problems and "differs by 5.00e-03" in problems[0]


# Under emulation (qemu-user) a call is 20-50x slower: paths get minutes, so a ranking is only
# ever compared whole, and a cut path is reported as such, never as a CPU difference.
EMULATION_PROOF = {
    "sql_timeout_ms": 120_000,
    "vector_timeout_ms": 120_000,
    "tool_timeout_ms": 300_000,
}


async def test_top_ids_of_golden_retrieval_calls_equal_the_fixture(
    fixture: repro.Fixture, server: FastMCP
) -> None:
    scenarios = repro.retrieval_scenarios(load_scenarios(repro.GOLDEN))
    patient = build_server(make_settings(**EMULATION_PROOF))
    share_stores(patient)
    path_errors: dict[str, dict[str, str]] = {}
    ids = await repro.top_ids(scenarios, server_target(patient, timeout_s=600), path_errors)
    assert not path_errors, f"paths failed or were cut, so rankings are partial: {path_errors}"
    observed = repro.Observed(fixture["model"], {}, ids, fixture.get("static_model"), {})
    problems = repro.differences({**fixture, "vectors": [], "static_vectors": []}, observed)
    assert not problems, (
        f"on {one_line()} (fixture recorded on {one_line(fixture['recorded_on'])}):\n"
        + "\n".join(problems)
    )
    assert sum(len(v) for v in ids.values()) >= 10 * 20  # real rankings, not empty lists


def test_vectors_round_trip_through_the_fixture_encoding() -> None:
    vector = np.linspace(-1, 1, 384, dtype=np.float32)
    assert np.array_equal(repro.decode(repro.encode(vector)), vector)
