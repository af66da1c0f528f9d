"""Latency targets that plots draw against: the specs' ceilings per tool family.

The specs set p50/p95 ceilings for the ``opa.*`` tools (500 / 1000 ms) and for the Dr. OFF
tools (800 / 1500 ms) (DESIGN.md, "Targets from the specs").
"""

from __future__ import annotations

SPEC_TARGETS: dict[str, tuple[float, float]] = {"opa.": (500.0, 1000.0), "": (800.0, 1500.0)}


def targets_for(tool: str) -> tuple[float | None, float | None]:
    """(p50, p95) ceiling in ms for ``tool``."""
    for prefix, target in SPEC_TARGETS.items():
        if tool.startswith(prefix):
            return target
    return (None, None)


def source() -> str:
    return "spec ceilings: opa.* p50 500 / p95 1000 ms, Dr. OFF p50 800 / p95 1500 ms"
