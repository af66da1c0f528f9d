"""Build one derived case: a scenario whose every expectation cites the corpus row it is from."""

from __future__ import annotations

import re
import zlib
from typing import Any, Required, TypedDict

from evals.run.checks import CheckSpec
from evals.run.id_lookup import IdLookup
from evals.run.scenario import CRITICAL, Scenario
from ocm_common.json_types import Arguments

DERIVED_TAG = "derived"
FAMILY_PREFIX = "family:"


def family_of(tags: list[str] | tuple[str, ...]) -> str | None:
    """The case family a scenario belongs to, from its ``family:<name>`` tag."""
    for tag in tags:
        if tag.startswith(FAMILY_PREFIX):
            return tag[len(FAMILY_PREFIX) :]
    return None


def _slug(key: str) -> str:
    """A readable id part; keys that lose characters get a checksum so ids stay distinct."""
    slug = re.sub(r"[^A-Za-z0-9_.:\-]+", "-", key).strip("-") or "x"
    return slug if slug == key else f"{slug}-{zlib.crc32(key.encode()):08x}"


class ExpectSpec(TypedDict, total=False):
    """One ``expect`` entry as a family writes it: the :class:`CheckSpec` fields it sets (only
    those are written to the case file)."""

    check: Required[str]
    path: str
    value: Any  # the expected JSON value, of whatever type the checked field has
    tolerance: float
    min: float
    max: float
    pattern: str
    ignore_case: bool
    item: ExpectSpec
    allow_empty: bool
    field: str
    key: str
    before: str
    after: str


class LookupSpec(TypedDict, total=False):
    """An :class:`IdLookup` as a family writes it (the fields it sets)."""

    tool: Required[str]
    args: Arguments  # arguments of the target's search tool
    path: Required[str]
    key: str | list[str]
    id: Required[str]
    into: Required[str]
    limit: int
    grade: int


# the runner's tag for a scenario whose right answer cites nothing (evals/run/runner.py)
NO_CITATIONS = "no-citations"


def derived_case(
    family: str,
    key: str,
    *,
    tool: str,
    args: Arguments,
    expect: list[ExpectSpec],
    title: str,
    source: str,
    critical: bool = False,
    relevant: dict[str, int] | None = None,
    cites: bool = True,
    ids_from: LookupSpec | None = None,
) -> Scenario:
    """A scenario with id ``derived.<family>.<key>`` and tags ``derived``, ``family:<family>``;
    ``cites=False`` when the right answer has nothing to cite (tag ``no-citations``)."""
    tags = [DERIVED_TAG, f"{FAMILY_PREFIX}{family}"] + ([CRITICAL] if critical else [])
    tags += [] if cites else [NO_CITATIONS]
    return Scenario(
        id=f"derived.{family}.{_slug(key)}",
        title=title,
        tool=tool,
        args=args,
        ids_from=IdLookup.model_validate(ids_from) if ids_from else None,
        expect=[CheckSpec.model_validate(spec) for spec in expect],
        relevant=relevant or {},
        tags=tags,
        version=1,
        source=source,
    )
