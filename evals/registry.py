"""The one metric registry: every metric the harness reports, its label and its direction.

Both wings read it: the run side scores with these names (ir-measures measures are parsed from
the canonical name, ragas functions are looked up by it) and the read side (gate, compare,
reports, plots) asks it whether higher is better instead of guessing from a name. A metric
that is not registered has no direction, and asking for one is a programming error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ocm_common.registry import Registry

Family = Literal["scenario", "retrieval", "ragas", "latency", "calibration"]


@dataclass(frozen=True)
class MetricDef:
    """A metric: canonical name, display label, family, direction and the range it lives in."""

    name: str
    label: str
    family: Family
    higher_is_better: bool = True
    unit: str = ""
    bounded: bool = True  # values in [0, 1] (plots share an axis; bootstrap stays in range)


METRICS: Registry[MetricDef] = Registry("metric", entry_point_group="ocm.metrics")


def register(
    name: str,
    label: str | None = None,
    *,
    family: Family,
    higher_is_better: bool = True,
    unit: str = "",
    bounded: bool = True,
) -> MetricDef:
    return METRICS.add(
        name, MetricDef(name, label or name, family, higher_is_better, unit, bounded)
    )


# Scenario outcome (share of scenarios whose checks all pass).
register("pass_rate", family="scenario")
# Retrieval: canonical names are ir-measures' own (``str(measure)``), labels the usual ones.
register("nDCG@10", family="retrieval")
register("R@5", "Recall@5", family="retrieval")
register("R@10", "Recall@10", family="retrieval")
register("P@5", family="retrieval")
register("RR@10", "MRR@10", family="retrieval")
register("AP", "MAP", family="retrieval")
# ragas: offline ones, then the LLM-judged ones (only computed when a key is set).
for _name in ("id_context_precision", "id_context_recall", "string_similarity"):
    register(_name, family="ragas")
register("nonllm_context_recall", family="ragas")
for _name in ("faithfulness", "llm_context_precision", "llm_context_recall"):
    register(_name, family="ragas")
register("semantic_similarity", family="ragas")
# Latency, measured by the client per call.
for _name in ("p50_ms", "p95_ms", "p99_ms", "max_ms", "latency_ms"):
    register(
        _name,
        _name.replace("_ms", " ms"),
        family="latency",
        higher_is_better=False,
        unit="ms",
        bounded=False,
    )

# Calibration of the backend's published confidence (evals/read/calibration.py): read from the
# run log per scope, never per scenario.
register("ece", "ECE", family="calibration", higher_is_better=False)
register("brier", "Brier", family="calibration", higher_is_better=False)
register("auroc", "AUROC", family="calibration")
register("accuracy_at_0.9", "accuracy at confidence >= 0.9", family="calibration")
register("accuracy_at_0.8", "accuracy at confidence >= 0.8", family="calibration")
register("aurc", "AURC", family="calibration", higher_is_better=False)

RETRIEVAL_METRICS: tuple[str, ...] = tuple(n for n, d in METRICS.items() if d.family == "retrieval")
RAGAS_METRICS: tuple[str, ...] = tuple(n for n, d in METRICS.items() if d.family == "ragas")
ALIASES: dict[str, str] = {d.label: d.name for d in METRICS.values() if d.label != d.name}


def canonical(name: str) -> str:
    """Accept labels (``MRR@10``, ``MAP``, ``Recall@5``) wherever a metric name is configured."""
    return ALIASES.get(name, name)


def get(name: str) -> MetricDef:
    """The definition of a metric by name or label; KeyError names the known metrics."""
    return METRICS[canonical(name)]


def label(name: str) -> str:
    definition = METRICS.get(canonical(name))
    return definition.label if definition else name


def higher_is_better(name: str) -> bool:
    return get(name).higher_is_better


def improvement(name: str, before: float, after: float) -> float:
    """``after - before`` signed so that positive always means better."""
    delta = after - before
    return delta if higher_is_better(name) else -delta
