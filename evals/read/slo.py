"""Latency targets that plots and reports draw against, read from the one SLO file.

``load/slo.yaml`` (when the project has it) holds the specs' ceilings per tool pattern
(``spec_ceilings``) and our tighter bars per load profile (``profiles``); a tool's target for a
profile is the tighter of the two. Without the file, the specs' ceilings apply: ``opa.*``
p50 500 / p95 1000 ms, Dr. OFF tools p50 800 / p95 1500 ms (DESIGN.md, "Targets from the specs").
"""

from __future__ import annotations

from fnmatch import fnmatch
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

SLO_FILE = Path(__file__).resolve().parents[2] / "load" / "slo.yaml"
SPEC_CEILINGS: list[dict[str, Any]] = [
    {"tools": "opa.*", "p50_ms": 500.0, "p95_ms": 1000.0},
    {"tools": "*", "p50_ms": 800.0, "p95_ms": 1500.0},
]
Target = tuple[float | None, float | None]


@lru_cache(maxsize=4)
def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return data if isinstance(data, dict) else {}


def _tighter(a: float | None, b: float | None) -> float | None:
    values = [float(v) for v in (a, b) if isinstance(v, int | float)]
    return min(values) if values else None


def targets_for(tool: str, profile: str | None = None, path: Path = SLO_FILE) -> Target:
    """(p50, p95) in ms for ``tool``: the spec ceiling, tightened by ``profile``'s bar."""
    data = _load(path)
    ceilings = data.get("spec_ceilings") or SPEC_CEILINGS
    p50 = p95 = None
    for rule in ceilings:
        if fnmatch(tool, str(rule.get("tools", "*"))):
            p50, p95 = rule.get("p50_ms"), rule.get("p95_ms")
            break
    if profile:
        bar = (data.get("profiles") or {}).get(profile) or {}
        bar = {**bar, **((data.get("per_tool") or {}).get(tool, {}).get(profile, {}))}
        p50, p95 = _tighter(p50, bar.get("p50_ms")), _tighter(p95, bar.get("p95_ms"))
    return (_tighter(p50, None), _tighter(p95, None))


def source(profile: str | None = None, path: Path = SLO_FILE) -> str:
    where = str(path.relative_to(path.parents[1])) if path.is_file() else "the specs"
    return f"targets from {where}" + (f", profile {profile}" if profile else " (spec ceilings)")
