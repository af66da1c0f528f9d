"""The committed baseline: per-scenario scores from a reference run, for the gate's drop checks.

Written by ``ocm baseline --run DIR`` from a run log (never by re-running the
backend). A scenario's ``version`` is stored so a scenario whose meaning changed is not
compared with scores it no longer deserves.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals.read import diff
from evals.run.runlog import DEFAULT_MODE, GitInfo, RunLog, ScenarioRecord
from ocm_common.json_types import JsonObject

BASELINE_VERSION = 1


class BaselineScenario(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int
    tool: str
    critical: bool = False
    passed: bool
    scores: dict[str, float] = Field(default_factory=dict)


class Baseline(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: int = BASELINE_VERSION
    created_at: str
    run: str
    target: str
    git: GitInfo = Field(default_factory=lambda: GitInfo())
    # the run's embedding model, index fingerprint and machine: scores are only comparable
    # with a run made with the same model and index (see `mismatch`)
    environment: JsonObject = Field(default_factory=dict)
    scenarios: dict[str, BaselineScenario]


class BaselineError(RuntimeError):
    """A baseline file that cannot be read (a harness error for the gate)."""


def scores_of(record: ScenarioRecord) -> dict[str, float]:
    """The scores a baseline keeps for one record: retrieval and ragas (pass/fail is kept
    separately as ``passed``; latency belongs to benchmarks, not to the baseline)."""
    return {k: v for k, v in diff.record_scores(record).items() if k != diff.PASS}


def table(baseline: Baseline) -> diff.ScoreTable:
    """The baseline as one side of a :func:`evals.read.diff.pair`."""
    return {
        sid: diff.ScenarioScores(
            tool=base.tool,
            version=base.version,
            passed=base.passed,
            scores={**base.scores, diff.PASS: 1.0 if base.passed else 0.0},
            critical=base.critical,
            status="passed" if base.passed else "failed",
        )
        for sid, base in baseline.scenarios.items()
    }


def from_run(log: RunLog, run_dir: Path | str) -> Baseline:
    """A baseline from the main pass of a run log."""
    scenarios = {
        record.id: BaselineScenario(
            version=record.version,
            tool=record.tool,
            critical=record.critical,
            passed=record.passed,
            scores=scores_of(record),
        )
        for record in log.records
        if record.mode == DEFAULT_MODE
    }
    return Baseline(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        run=str(run_dir),
        target=log.summary.target,
        git=log.summary.git.copy(),
        environment=dict(log.summary.environment),
        scenarios=scenarios,
    )


def write(baseline: Baseline, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(baseline.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def load(path: Path) -> Baseline:
    try:
        return Baseline.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except ValidationError as exc:
        raise BaselineError(f"{path}: invalid baseline: {exc}") from None


IDENTITY_KEYS = ("embedding_model", "index_fingerprint")


def mismatch(baseline: Baseline, run_environment: JsonObject) -> str | None:
    """Why this run's scores cannot be compared with the baseline's, or None.

    Scores depend on the embedding model and the index as much as on the backend's code, so a
    pair made with different ones would report the model change as a regression (or hide one).
    A baseline that records neither, or a run against a backend that cannot say (another
    team's server), is compared as before, and the gate notes it; the machine is recorded but never refused: the answers must not depend on it.
    """
    recorded = baseline.environment
    differing = [
        f"{key}: baseline {recorded[key]!r}, run {run_environment.get(key)!r}"
        for key in IDENTITY_KEYS
        if recorded.get(key) and run_environment.get(key) and run_environment[key] != recorded[key]
    ]
    if not differing:
        return None
    return (
        "the baseline was made with another embedding model or index ("
        + "; ".join(differing)
        + "): its scores are not comparable with this run's. Re-baseline deliberately "
        "(`make baseline`, then review and commit evals/baseline.json), or run against the "
        "model and index the baseline records."
    )
