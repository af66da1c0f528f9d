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

from ocm_common.slo_file import SLO_FILE, Ceiling, Slo, load_slo

SPEC_CEILINGS: list[Ceiling] = [
    Ceiling(tools="opa.*", p50_ms=500.0, p95_ms=1000.0),
    Ceiling(tools="*", p50_ms=800.0, p95_ms=1500.0),
]
Target = tuple[float | None, float | None]


def targets_for(tool: str, profile: str | None = None, path: Path = SLO_FILE) -> Target:
    """(p50, p95) in ms for ``tool``: the spec ceiling, tightened by ``profile``'s bar.

    The arithmetic is the SLO file's own (`Slo.bars`), the one load's verdicts use, so reports
    and verdicts agree."""
    if not path.is_file():
        rule = next(r for r in SPEC_CEILINGS if fnmatch(tool, r.tools))
        return (rule.p50_ms, rule.p95_ms)
    bars = _slo(path).bars(profile or "spec ceilings only", tool)
    return (bars.get("p50_ms"), bars.get("p95_ms"))


@lru_cache(maxsize=4)
def _slo(path: Path) -> Slo:
    return load_slo(path)


def source(profile: str | None = None, path: Path = SLO_FILE) -> str:
    where = str(path.relative_to(path.parents[1])) if path.is_file() else "the specs"
    return f"targets from {where}" + (f", profile {profile}" if profile else " (spec ceilings)")
