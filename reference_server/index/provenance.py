"""Provenance of Ontario Health and Ministry facts: where each one was verified, or that it was not.

These documents were written from public pages, with no source file behind them, so every fact
carries the page it was checked against (`verified_from`, resolved to `{url, seen}`) or says it
is `unverified`. The rules (see corpus/FORMAT.md):

- the document lists its pages once under `sources: {id: {url, seen, note}}`;
- a fact names them: `verified_from: [id, ...]`, or says `unverified: true`;
- fact units: the document itself (title, URL, dates), each section (its text; paragraphs listed
  in `unverified_paragraphs` are unverified units of their own), and in the
  `program:` block each recommendation, algorithm and decision point (inline), and the
  other fields through `program.provenance: {field: [id, ...] | unverified}`
  (`eligibility`, `overview`, `referral_process`, `self_referral`, `procedures`, `locations`,
  `resources`, and `intervals.<key>` for each interval).

`resolve` expands source ids into `{url, seen}` for the index; `missing` lists fact units that
carry neither (the corpus test fails on any).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import date
from typing import Any, NotRequired, TypedDict

from reference_server.retrieval.opa_freshness import Fact, SeenAt

TRACED_ORGS = ("ontario_health", "moh")
UNVERIFIED = "unverified"
PROGRAM_FIELDS = (
    "overview",
    "eligibility",
    "referral_process",
    "self_referral",
    "procedures",
    "locations",
    "resources",
)


class SourcePage(TypedDict):
    """One entry of a document's `sources:` as the YAML holds it (`seen` may load as a date)."""

    url: str
    seen: str | date
    note: NotRequired[str]


def needs_provenance(doc: dict[str, Any]) -> bool:
    return doc.get("source_org") in TRACED_ORGS


def _units(doc: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path, provenance marker) for every fact unit; the marker is the raw `verified_from`
    list, the string 'unverified', or None when the unit carries neither."""

    def marker(node: dict[str, Any]) -> Any:
        if node.get("unverified") is True:
            return UNVERIFIED
        return node.get("verified_from")

    yield "document", marker(doc)
    for i, section in enumerate(doc.get("sections") or [], start=1):
        name = f"sections[{i}] {section.get('heading', '')}"
        yield name, marker(section)
        for j in section.get("unverified_paragraphs") or []:
            yield f"{name}, paragraph {j}", UNVERIFIED
    program = doc.get("program")
    if not program:
        return
    table = program.get("provenance") or {}
    for field in PROGRAM_FIELDS:
        if program.get(field):
            yield f"program.{field}", table.get(field)
    for key in program.get("intervals") or {}:
        yield f"program.intervals.{key}", table.get(f"intervals.{key}")
    for i, rec in enumerate(program.get("recommendations") or [], start=1):
        yield f"program.recommendations[{i}]", marker(rec)
    for i, algo in enumerate(program.get("algorithms") or [], start=1):
        yield f"program.algorithms[{i}]", marker(algo)
        for j, point in enumerate(algo.get("decision_points") or [], start=1):
            yield f"program.algorithms[{i}].decision_points[{j}]", marker(point)


def missing(doc: dict[str, Any]) -> list[str]:
    """Fact units with neither provenance nor an unverified mark, or naming unknown sources."""
    if not needs_provenance(doc):
        return []
    sources = doc.get("sources") or {}
    problems = []
    for path, mark in _units(doc):
        if mark == UNVERIFIED:
            continue
        if not mark or not isinstance(mark, list):
            problems.append(
                f"{doc['document_id']}: {path} has neither verified_from nor unverified"
            )
            continue
        unknown = [m for m in mark if m not in sources]
        if unknown:
            problems.append(f"{doc['document_id']}: {path} names unknown sources {unknown}")
    for i, section in enumerate(doc.get("sections") or [], start=1):
        count = len([p for p in (section.get("text") or "").split("\n\n") if p.strip()])
        bad = [j for j in section.get("unverified_paragraphs") or [] if not 1 <= j <= count]
        if bad:
            problems.append(f"{doc['document_id']}: sections[{i}] has no paragraph {bad}")
    for sid, src in sources.items():
        if not (isinstance(src, dict) and src.get("url") and src.get("seen")):
            problems.append(f"{doc['document_id']}: source {sid!r} needs url and seen")
    return problems


def _seen(ids: list[str], sources: dict[str, SourcePage]) -> list[SeenAt]:
    return [{"url": sources[m]["url"], "seen": str(sources[m]["seen"])} for m in ids]


def _expand(mark: Any, sources: dict[str, SourcePage]) -> list[SeenAt] | str | None:
    if mark == UNVERIFIED or mark is None:
        return mark
    return _seen(mark, sources)


def resolve(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of the document with every `verified_from` expanded to `[{url, seen}]`, and the
    flat fact list under `facts`."""
    if not needs_provenance(doc):
        return doc
    sources = doc.get("sources") or {}
    out = copy.deepcopy(doc)
    out["facts"] = facts(doc)

    def fix(node: dict[str, Any]) -> None:
        node["verified_from"] = _expand(
            UNVERIFIED if node.get("unverified") is True else node.get("verified_from"), sources
        )
        if node["verified_from"] == UNVERIFIED:
            node["verified_from"] = []
            node["unverified"] = True

    fix(out)
    for section in out.get("sections") or []:
        fix(section)
    program = out.get("program")
    if program:
        program["provenance"] = {
            k: _expand(v, sources) for k, v in (program.get("provenance") or {}).items()
        }
        for rec in program.get("recommendations") or []:
            fix(rec)
        for algo in program.get("algorithms") or []:
            fix(algo)
            for point in algo.get("decision_points") or []:
                fix(point)
    return out


def facts(doc: dict[str, Any]) -> list[Fact]:
    """Flat list of fact units with their resolved provenance, for freshness reporting."""
    if not needs_provenance(doc):
        return []
    sources = doc.get("sources") or {}
    out: list[Fact] = []
    for path, mark in _units(doc):
        if mark == UNVERIFIED or not mark:
            out.append({"fact": path, "unverified": True, "verified_from": []})
        else:
            out.append({"fact": path, "unverified": False, "verified_from": _seen(mark, sources)})
    return out
