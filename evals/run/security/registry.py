"""The security check families, registered by name with the checks each may report and the
phase it runs in: ``surface`` reads the first ``tools/list``; ``calls`` calls tools;
``after`` reads what the calls returned and lists the tools again; ``http`` talks to an HTTP
target's endpoint directly. Configuration and reports refer to the names."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from evals.run.security.findings import Finding, Skipped
from evals.run.security.sandbox import Sandbox
from evals.run.security.session import Session
from evals.run.security.surface import ToolSurface
from ocm_common.registry import Registry

Phase = Literal["surface", "calls", "after", "http"]
PHASES: tuple[Phase, ...] = ("surface", "calls", "after", "http")
# Within a phase: the surface is compared before probes change anything (the schema sweep
# comes after the rug pull's listings), crashes seen by the earlier families are reported by
# the unbounded family, secrets, results and effects read every call made.
ORDER = (
    "poisoning",
    "shadowing",
    "rug_pull",
    "reach",
    "paths",
    "path_probes",
    "capabilities",
    "unbounded",
    "secrets",
    "results",
    "effects",
    "http",
)


@dataclass
class Context:
    """What a family sees: the session, the first listing, the tools it may call, the bait."""

    spec: str
    session: Session
    tools: list[ToolSurface]
    callable_tools: list[ToolSurface]
    sandbox: Sandbox
    memory_limit_mb: float = 256.0
    max_result_bytes: int = 1_000_000
    sweep_limit: int = 40
    notes: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


Run = Callable[[Context], Awaitable[list[Finding]]]


@dataclass(frozen=True)
class Family:
    name: str
    checks: tuple[str, ...]
    phase: Phase
    run: Run
    doc: str


# The family modules register on import (``@family``); the registry imports them when first
# read, so this module imports none of them. A new family module is added to this list.
FAMILIES: Registry[Family] = Registry(
    "security family",
    plugins=tuple(
        f"evals.run.security.{m}"
        for m in (
            "poisoning",
            "shadowing",
            "rugpull",
            "reach",
            "paths",
            "path_probes",
            "capabilities",
            "unbounded",
            "secrets_leak",
            "results",
            "effects",
            "http_transport",
        )
    ),
    entry_point_group="ocm.security_families",
)


def family(name: str, *, checks: tuple[str, ...], phase: Phase) -> Callable[[Run], Run]:
    """Register a check family; a duplicate name is a programming error."""
    return FAMILIES.decorator(
        name, lambda fn: Family(name, checks, phase, fn, (fn.__doc__ or "").strip())
    )


def load() -> dict[str, Family]:
    """Every family by name (reading the registry imports the family modules)."""
    return dict(FAMILIES.items())


def select(names: list[str] | None) -> list[Family]:
    families = load()
    if not names:
        return sorted(families.values(), key=lambda f: (PHASES.index(f.phase), _rank(f.name)))
    unknown = FAMILIES.unknown(names)
    if unknown:
        raise ValueError(f"unknown security family {unknown}. Available: {sorted(families)}")
    chosen = [families[n] for n in names]
    return sorted(chosen, key=lambda f: (PHASES.index(f.phase), _rank(f.name)))


def _rank(name: str) -> int:
    return ORDER.index(name) if name in ORDER else len(ORDER)
