"""Fixtures for harness tests: the fake backend's golden set and synthetic run logs."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

os.environ["RAGAS_DO_NOT_TRACK"] = "true"
sys.path.insert(0, str(Path(__file__).parent))

from evals_testkit import GOLDEN_FAKE, write_log

from evals.run.runlog import ScenarioRecord
from examples.alt_opa.corpus import Corpus, load_corpus
from examples.alt_opa.search import SectionSearch
from examples.alt_opa.server import Backend


@pytest.fixture
def golden_fake() -> Path:
    return GOLDEN_FAKE


@pytest.fixture
def make_log(tmp_path: Path) -> Callable[..., Path]:
    counter = {"n": 0}

    def make(records: list[ScenarioRecord], **kwargs: Any) -> Path:
        counter["n"] += 1
        return write_log(tmp_path / f"run{counter['n']}", records, **kwargs)

    return make


# The second OPA backend (examples/alt_opa), parsed from the publishers' extracts once per
# module; its test modules skip without them (alt_opa_kit.skip_without_extracts).
@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def backend(corpus: Corpus) -> Backend:
    return Backend(corpus, SectionSearch(corpus))
