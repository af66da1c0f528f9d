"""Derive the cases of every family, sample them reproducibly and write them where the runner reads.

Cases are written one JSON record per line (``<family>.jsonl``): tens of thousands of records
load in seconds that way, and the runner reads them like golden YAML files.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from typing_extensions import TypedDict

from evals.derive.corpus import Corpus
from evals.derive.registry import SKIPPED, all_families, skipped
from evals.run.scenario import Scenario
from ocm_common.run_record import record_body


@record_body("derived")
class DerivedBody(TypedDict):
    """The derived record's body: cases written and source rows skipped (reason -> count),
    per family."""

    cases: dict[str, int]
    skipped: dict[str, dict[str, int]]


def record_of(cases: dict[str, list[Scenario]]) -> DerivedBody:
    return {
        "cases": {name: len(c) for name, c in cases.items()},
        "skipped": {name: skipped(name) for name in cases},
    }


def sample(cases: list[Scenario], size: int | None, seed: int, family: str) -> list[Scenario]:
    """``size`` cases drawn with a seed of their own per family (all when ``size`` is None),
    kept in derivation order so a sample is a subset of the next larger one's population."""
    if size is None or size >= len(cases):
        return cases
    rng = random.Random(f"{seed}:{family}")
    keep = set(rng.sample(range(len(cases)), size))
    return [case for i, case in enumerate(cases) if i in keep]


def derive(
    corpus: Corpus,
    *,
    families: Iterable[str] = (),
    per_family: int | None = None,
    seed: int = 0,
) -> dict[str, list[Scenario]]:
    """The cases of each chosen family (all families when none are named)."""
    known = all_families()
    chosen = list(families) or list(known)
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise ValueError(f"unknown case family {unknown}; known: {', '.join(known)}")
    out: dict[str, list[Scenario]] = {}
    for name in chosen:
        for key in [k for k in SKIPPED if k[0] == name]:
            del SKIPPED[key]  # count this derivation's skips only
        cases = list(known[name].derive(corpus))
        ids = [case.id for case in cases]
        if len(set(ids)) != len(ids):
            raise ValueError(f"family {name} derived duplicate case ids")
        out[name] = sample(cases, per_family, seed, name)
    return out


def write(cases: dict[str, list[Scenario]], out: Path) -> list[Path]:
    """One ``<family>.jsonl`` per family under ``out`` (old files there are replaced)."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.jsonl"):
        old.unlink()
    written = []
    for name, scenarios in cases.items():
        path = out / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for case in scenarios:
                fh.write(json.dumps(case.model_dump(mode="json", exclude_unset=True)) + "\n")
        written.append(path)
    return written
