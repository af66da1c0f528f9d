"""The case families: each turns corpus rows into derived cases for one tool and one question shape."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evals.derive.corpus import Corpus
from evals.run.scenario import Scenario
from ocm_common.registry import Registry

Derive = Callable[[Corpus], Iterable[Scenario]]


@dataclass(frozen=True)
class Family:
    name: str
    tool: str
    derive: Derive
    doc: str


# The family modules register on import; the registry imports them when first read.
FAMILIES: Registry[Family] = Registry(
    "case family", plugins=("evals.derive.families",), entry_point_group="ocm.case_families"
)

# Source rows a family could not turn into a fair case (ambiguous or malformed), counted by
# (family, reason) while it derives; `evals derive` reports them, so a skip is never silent.
SKIPPED: Counter[tuple[str, str]] = Counter()


def skip(family_name: str, reason: str) -> None:
    """Count one source row the family ``family_name`` leaves out, and why."""
    SKIPPED[(family_name, reason)] += 1


def skipped(family_name: str) -> dict[str, int]:
    """Why the family's last derivation left rows out: reason -> count."""
    return {reason: n for (name, reason), n in sorted(SKIPPED.items()) if name == family_name}


def family(name: str, *, tool: str) -> Callable[[Derive], Derive]:
    """Register ``fn(corpus) -> cases`` as the family ``name``; cases come in a stable order."""
    return FAMILIES.decorator(
        name, lambda fn: Family(name, tool, fn, (fn.__doc__ or "").strip().splitlines()[0])
    )


def all_families() -> dict[str, Family]:
    """Every registered family (reading the registry imports the family modules)."""
    return dict(sorted(FAMILIES.items()))
