"""The metric registry: one place says what a metric is called and whether higher is better."""

from __future__ import annotations

import pytest

from evals import registry
from evals.run import metrics, ragas_metrics


def test_metric_aliases() -> None:
    assert registry.canonical("MRR@10") == "RR@10"
    assert registry.canonical("MAP") == "AP"
    assert registry.canonical("Recall@5") == "R@5"
    assert registry.canonical("nDCG@10") == "nDCG@10"


def test_directions() -> None:
    assert registry.higher_is_better("nDCG@10") and registry.higher_is_better("pass_rate")
    assert not registry.higher_is_better("p95_ms")
    # improvement is signed so that positive always means better
    assert registry.improvement("nDCG@10", 0.5, 0.7) == pytest.approx(0.2)
    assert registry.improvement("p95_ms", 100.0, 80.0) == pytest.approx(20.0)


def test_unknown_metric_is_an_error_naming_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"Unknown metric .bogus.. Available: .*pass_rate"):
        registry.higher_is_better("bogus")


def test_every_computed_metric_is_registered() -> None:
    for name in metrics.METRIC_NAMES:
        assert registry.get(name).family == "retrieval"
    for name in ragas_metrics.RAGAS_METRICS:
        assert registry.get(name).family == "ragas"
