"""A fitted confidence model judged on the held-out half of run logs, offline from their recorded
features: per family and overall, accuracy, ECE (equal-count bins, as the harness's calibration
report cuts them), AUROC and the answers at or above 0.9."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

import numpy as np
import yaml

from reference_server.scoring.calibrated import parse
from reference_server.scoring.fit_answers import read_answers
from reference_server.scoring.split import SEED, in_fit_half

HIGH = 0.9


class JudgedScope(TypedDict):
    """One scope of `judge`: a run's family, or the run overall."""

    scope: str
    n: int
    accuracy: float
    ece: float
    auroc: float | None
    high_n: int
    high_accuracy: float | None


def _ece(conf: np.ndarray, right: np.ndarray, bins: int = 10) -> float:
    """Equal-count bins (as evals/read/calibration.py cuts them): mean |accuracy - confidence|."""
    from sklearn.calibration import calibration_curve

    k = max(1, min(bins, conf.size // 5))
    acc, mean = calibration_curve(right.astype(int), conf, n_bins=k, strategy="quantile")
    edges = np.percentile(conf, np.linspace(0, 1, k + 1) * 100)
    counts = np.bincount(np.searchsorted(edges[1:-1], conf), minlength=k)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.abs(acc - mean)) / conf.size)


def judge(runs: Sequence[Path], model_file: Path, seed: int = SEED) -> list[JudgedScope]:
    """The model applied to the held-out half's recorded features: per family and overall,
    n, accuracy, ECE, AUROC, answers at >= 0.9 and their accuracy."""
    from sklearn.metrics import roc_auc_score

    model = parse(yaml.safe_load(model_file.read_text(encoding="utf-8")), str(model_file))
    rows: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for run in runs:
        for a in read_answers(run):
            if in_fit_half(a.case_id, seed):
                continue
            m = model.of(a.family)
            if m is None:
                continue
            p = m.probability(a.features)
            rows[f"{run.name} {a.family}"].append((p, a.right))
            rows[f"{run.name} overall"].append((p, a.right))
    out: list[JudgedScope] = []
    for scope in sorted(rows):
        conf = np.array([p for p, _ in rows[scope]])
        right = np.array([r for _, r in rows[scope]])
        high = conf >= HIGH
        out.append(
            {
                "scope": scope,
                "n": int(conf.size),
                "accuracy": float(right.mean()),
                "ece": _ece(conf, right),
                "auroc": float(roc_auc_score(right, conf))
                if 0 < right.sum() < right.size
                else None,
                "high_n": int(high.sum()),
                "high_accuracy": float(right[high].mean()) if high.any() else None,
            }
        )
    return out
