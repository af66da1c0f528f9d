"""Build one derived case: a scenario whose every expectation cites the corpus row it is from."""

from __future__ import annotations

import re
import zlib
from typing import Any

from evals.run.checks import CheckSpec
from evals.run.id_lookup import IdLookup
from evals.run.scenario import CRITICAL, Scenario

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


# the runner's tag for a scenario whose right answer cites nothing (evals/run/runner.py)
NO_CITATIONS = "no-citations"


def derived_case(
    family: str,
    key: str,
    *,
    tool: str,
    args: dict[str, Any],
    expect: list[dict[str, Any]],
    title: str,
    source: str,
    critical: bool = False,
    relevant: dict[str, int] | None = None,
    cites: bool = True,
    ids_from: dict[str, Any] | None = None,
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
