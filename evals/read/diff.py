"""The difference between two runs, scenario by scenario: what the gate's baseline check and
``compare`` both stand on.

Each side is reduced to a :data:`ScoreTable` (scenario id -> tool, version, passed, scores),
from a run log or from the committed baseline. :func:`pair` matches scenarios by id, keeps
only those whose ``version`` agrees (a scenario whose meaning changed is not compared), and
answers per-scenario and mean changes with the direction taken from the metric registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evals import registry
from evals.run.runlog import DEFAULT_MODE, ScenarioRecord

PASS = "pass_rate"
LATENCY = "latency_ms"


@dataclass(frozen=True)
class ScenarioScores:
    """What one side knows about one scenario: enough to pair and compare it."""

    tool: str
    version: int
    passed: bool
    scores: Mapping[str, float] = field(default_factory=dict)
    critical: bool = False
    status: str = "passed"


ScoreTable = dict[str, ScenarioScores]


def record_scores(record: ScenarioRecord, *, with_latency: bool = False) -> dict[str, float]:
    """The comparable scores of one record: retrieval metrics, present ragas values, pass as
    1/0 and (optionally) the client-measured latency."""
    out = {name: float(value) for name, value in record.metrics.items()}
    out.update({name: float(value) for name, value in record.ragas.items() if value is not None})
    out[PASS] = 1.0 if record.passed else 0.0
    if with_latency and record.latency_ms is not None:
        out[LATENCY] = float(record.latency_ms)
    return out


def table_from_records(
    records: Iterable[ScenarioRecord], *, mode: str = DEFAULT_MODE, with_latency: bool = True
) -> ScoreTable:
    return {
        r.id: ScenarioScores(
            tool=r.tool,
            version=r.version,
            passed=r.passed,
            scores=record_scores(r, with_latency=with_latency),
            critical=r.critical,
            status=r.status,
        )
        for r in records
        if r.mode == mode
    }


@dataclass(frozen=True)
class ScenarioDelta:
    """One metric on one scenario in both runs; ``improvement`` > 0 means B is better."""

    scenario: str
    tool: str
    metric: str
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.b - self.a

    @property
    def improvement(self) -> float:
        return registry.improvement(self.metric, self.a, self.b)


@dataclass(frozen=True)
class Paired:
    """The per-scenario values of one metric over the scenarios both runs scored."""

    metric: str
    ids: tuple[str, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def mean_a(self) -> float | None:
        return sum(self.a) / len(self.a) if self.a else None

    @property
    def mean_b(self) -> float | None:
        return sum(self.b) / len(self.b) if self.b else None


@dataclass(frozen=True)
class RunDiff:
    """Two score tables matched by scenario id."""

    a: ScoreTable
    b: ScoreTable
    shared: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    version_changed: tuple[str, ...]

    def tools(self) -> list[str]:
        return sorted({self.a[sid].tool for sid in self.shared})

    def metrics(self) -> list[str]:
        """Registered metrics that both sides scored on at least one shared scenario."""
        seen = {m for sid in self.shared for m in self.a[sid].scores if m in self.b[sid].scores}
        return [m for m in registry.METRICS if m in seen]

    def ids(self, tool: str | None = None) -> list[str]:
        return [sid for sid in self.shared if tool is None or self.a[sid].tool == tool]

    def paired(self, metric: str, tool: str | None = None) -> Paired:
        ids = [
            sid
            for sid in self.ids(tool)
            if metric in self.a[sid].scores and metric in self.b[sid].scores
        ]
        return Paired(
            metric,
            tuple(ids),
            tuple(self.a[sid].scores[metric] for sid in ids),
            tuple(self.b[sid].scores[metric] for sid in ids),
        )

    def deltas(self, metric: str, tool: str | None = None) -> list[ScenarioDelta]:
        pairs = self.paired(metric, tool)
        return [
            ScenarioDelta(sid, self.a[sid].tool, metric, x, y)
            for sid, x, y in zip(pairs.ids, pairs.a, pairs.b, strict=True)
        ]

    def new_failures(self) -> list[str]:
        """Scenarios that passed in A and do not pass in B."""
        return [sid for sid in self.shared if self.a[sid].passed and not self.b[sid].passed]

    def fixed(self) -> list[str]:
        return [sid for sid in self.shared if not self.a[sid].passed and self.b[sid].passed]


def pair(a: ScoreTable, b: ScoreTable) -> RunDiff:
    """Match two score tables; a scenario is compared only when both sides ran the same version."""
    common = [sid for sid in a if sid in b]
    changed = tuple(sid for sid in common if a[sid].version != b[sid].version)
    return RunDiff(
        a=a,
        b=b,
        shared=tuple(sid for sid in common if a[sid].version == b[sid].version),
        only_a=tuple(sid for sid in a if sid not in b),
        only_b=tuple(sid for sid in b if sid not in a),
        version_changed=changed,
    )


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
