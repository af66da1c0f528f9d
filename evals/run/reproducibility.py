"""The reproducibility fixture: what the reference server computes must not depend on the CPU.

A committed file (`tests/fixtures/reproducibility.json`) holds the local model's vectors for
the golden query texts (and the static table's, for the families that embed with it: the
table is distilled on the machine that builds the index), and the top-10 ids of the golden retrieval calls, recorded on one
machine. `tests/test_reproducibility.py` recomputes both on whatever machine runs the suite:
ids must be equal, vectors within `VECTOR_TOLERANCE`. A CPU whose kernels change an answer then
fails `make test` there, with the texts and calls that moved, instead of a gate failing on
metric drops nobody can explain.

The recorded values are this code's own output, not expected answers (golden scenarios hold
those): the fixture pins reproducibility only. It is rewritten deliberately, with the corpus,
model or ranking it records, by `ocm fixture --write`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np

from evals.run.extract import retrieved_ids
from evals.run.id_lookup import answers_of, resolve_args
from evals.run.scenario import Scenario, load_scenarios
from evals.run.scenario_runner import with_depth
from evals.run.targets import Target, make_target
from ocm_common.machine import MachineDescription

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "reproducibility.json"
GOLDEN = ROOT / "golden"

# Largest difference allowed in any vector component between two machines. Float kernels
# differ in the last bits (measured below 1e-7 between AVX2 and SSE-only runs); an integer
# kernel that saturates moves components by about 1e-2. 1e-4 tells the two apart.
VECTOR_TOLERANCE = 1e-4
DEPTH = 10
TEXT_ARGS = ("query", "question", "topic", "service", "device", "drug", "specific_item")
# Pinned so date-dependent boosts and freshness tiers rank the same on any day.
AS_OF = "2026-11-01"
TARGET = (
    f"inprocess:as_of_date={AS_OF},sql_timeout_ms=10000,vector_timeout_ms=10000,"
    "tool_timeout_ms=20000"
)


def query_texts(scenarios: Sequence[Scenario]) -> list[str]:
    """Every distinct free-text argument of the golden scenarios, in scenario order."""
    texts: dict[str, None] = {}
    for scenario in scenarios:
        for name in TEXT_ARGS:
            value = scenario.args.get(name)
            if isinstance(value, str) and len(value.strip()) > 3:
                texts.setdefault(value, None)
    return list(texts)


def retrieval_scenarios(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The golden calls with graded judgments (the ones retrieval metrics rank)."""
    return [s for s in scenarios if s.relevant]


def embed(texts: list[str], static: bool = False) -> tuple[str, np.ndarray]:
    """(model name, vectors) from the configured local model, or the index's static table, as
    the index builder uses it."""
    from reference_server.config import Settings
    from reference_server.embedding import make_embedder

    embedder = make_embedder(Settings.from_env(), for_queries=False, static=static)
    return embedder.name, np.concatenate([embedder.embed([t]) for t in texts])


def uses_static() -> bool:
    from reference_server.config import Settings

    return bool(Settings.from_env().static_embedding)


async def top_ids(
    scenarios: Sequence[Scenario],
    target: Target | None = None,
    path_errors: dict[str, dict[str, str]] | None = None,
) -> dict[str, list[str]]:
    """Each scenario's top-`DEPTH` retrieved ids from `target` (default: the in-process
    reference server, with the date pinned and generous path timeouts). A call whose path
    failed or was cut (a slow or emulated CPU) is recorded in `path_errors`: its ids are a
    partial answer, not what this CPU ranks."""
    found: dict[str, list[str]] = {}
    async with target or make_target(TARGET, timeout_s=60.0) as target:
        tools = {t.name: t for t in await target.list_tools()}
        for scenario in scenarios:
            args = with_depth(tools.get(scenario.tool), dict(scenario.args), DEPTH)
            if scenario.lookups:  # the backend's own ids, found through its search as a run does
                schema = tools[scenario.tool].input_schema if scenario.tool in tools else None
                resolved = await resolve_args(
                    answers_of(target.call_tool), scenario.lookups, args, schema
                )
                if resolved is None:
                    found[scenario.id] = []
                    continue
                args = resolved
            outcome = await target.call_tool(scenario.tool, args)
            found[scenario.id] = retrieved_ids(scenario.tool, outcome.structured)[:DEPTH]
            errors = outcome.meta.get("path_errors") if isinstance(outcome.meta, dict) else None
            if isinstance(errors, dict) and errors and path_errors is not None:
                path_errors[scenario.id] = {path: str(why) for path, why in errors.items()}
    return found


def encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4")


@dataclass(frozen=True)
class Observed:
    model: str
    vectors: dict[str, np.ndarray]
    ids: dict[str, list[str]]
    static_model: str | None = None
    static_vectors: dict[str, np.ndarray] | None = None


def observe(scenarios: Sequence[Scenario]) -> Observed:
    texts = query_texts(scenarios)
    model, vectors = embed(texts)
    static_model, static_vectors = embed(texts, static=True) if uses_static() else (None, None)
    ids = asyncio.run(top_ids(retrieval_scenarios(scenarios)))
    return Observed(
        model,
        dict(zip(texts, vectors, strict=True)),
        ids,
        static_model,
        None if static_vectors is None else dict(zip(texts, static_vectors, strict=True)),
    )


class PinnedVector(TypedDict):
    text: str
    float32_le_base64: str


class PinnedCall(TypedDict):
    scenario: str
    top_ids: list[str]


class Fixture(TypedDict):
    """The reproducibility fixture (tests/fixtures/reproducibility.json), key order as written."""

    about: str
    model: str
    index_fingerprint: str | None
    as_of: str
    vector_tolerance: float
    recorded_on: MachineDescription  # ocm_common.machine.describe()
    vectors: list[PinnedVector]
    static_model: str | None
    static_vectors: list[PinnedVector]
    calls: list[PinnedCall]


def record(observed: Observed, index_fingerprint: str | None) -> Fixture:
    from evals.run.environment import machine

    return {
        "about": "vectors and top-10 ids recorded by evals/run/reproducibility.py; "
        "reproducibility pins, not expected answers",
        "model": observed.model,
        "index_fingerprint": index_fingerprint,
        "as_of": AS_OF,
        "vector_tolerance": VECTOR_TOLERANCE,
        "recorded_on": machine(),
        "vectors": [
            {"text": t, "float32_le_base64": encode(v)} for t, v in observed.vectors.items()
        ],
        "static_model": observed.static_model,
        "static_vectors": [
            {"text": t, "float32_le_base64": encode(v)}
            for t, v in (observed.static_vectors or {}).items()
        ],
        "calls": [{"scenario": sid, "top_ids": ids} for sid, ids in observed.ids.items()],
    }


def differences(fixture: Fixture, observed: Observed) -> list[str]:
    """What this machine computed differently from the fixture, one line each."""
    problems = []
    if observed.model != fixture["model"]:
        return [f"model {observed.model!r} is not the fixture's {fixture['model']!r}"]
    if fixture.get("static_model") != observed.static_model:
        return [
            f"static model {observed.static_model!r} is not the fixture's "
            f"{fixture.get('static_model')!r}"
        ]
    tolerance = float(fixture["vector_tolerance"])
    for pinned, seen, what in (
        (fixture.get("vectors"), observed.vectors, "vector"),
        (fixture.get("static_vectors"), observed.static_vectors or {}, "static vector"),
    ):
        for entry in pinned or []:
            text = entry["text"]
            if text not in seen:
                problems.append(f"query text no longer in the golden set: {text!r}")
                continue
            gap = float(np.max(np.abs(seen[text] - decode(entry["float32_le_base64"]))))
            if gap > tolerance:
                problems.append(
                    f"{what} of {text!r} differs by {gap:.2e} (tolerance {tolerance:g})"
                )
    for call in fixture["calls"]:
        sid, expected = call["scenario"], call["top_ids"]
        got = observed.ids.get(sid)
        if got != expected:
            problems.append(f"{sid}: top ids {got} != fixture {expected}")
    return problems


def build_parser(prog: str = "ocm fixture") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--write", action="store_true", help="record this machine's values")
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.set_defaults(func=run_command)
    return parser


def run_command(args: argparse.Namespace) -> int:
    """Compare this machine's values with the fixture (exit 1 on a difference), or `--write`
    them."""
    from evals.run.environment import index_fingerprint

    scenarios = load_scenarios(GOLDEN)
    observed = observe(scenarios)
    if args.write:
        data = record(observed, index_fingerprint())
        args.fixture.parent.mkdir(parents=True, exist_ok=True)
        args.fixture.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.fixture}: {len(observed.vectors)} vectors, {len(observed.ids)} calls")
        return 0
    problems = differences(json.loads(args.fixture.read_text(encoding="utf-8")), observed)
    for line in problems:
        print(line)
    print(f"{len(problems)} difference(s) from {args.fixture}")
    return 1 if problems else 0
