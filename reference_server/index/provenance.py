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

from ocm_common.json_types import JsonObject, JsonValue
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


# A document is read as the YAML mapping it is (a `seen:` date loads as a `date`, which is only
# ever turned into text here); each key is narrowed where it is read. A part of the wrong kind
# (a section that is not a mapping, a `verified_from` that is not a list) raises TypeError.


def _list(value: JsonValue, what: str) -> list[JsonValue]:
    """The items of a list-valued key (absent or empty: none)."""
    if not value:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{what} must be a list, not {value!r}")
    return value


def _objects(value: JsonValue, what: str) -> list[JsonObject]:
    """The mappings of a list-valued key (absent or empty: none)."""
    items = _list(value, what)
    objects = [item for item in items if isinstance(item, dict)]
    if len(objects) != len(items):
        raise TypeError(f"{what} must be a list of mappings")
    return objects


def _mapping(value: JsonValue, what: str) -> JsonObject:
    """A mapping-valued key (absent or empty: {})."""
    if not value:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a mapping, not {value!r}")
    return value


def _source_ids(mark: JsonValue) -> list[str]:
    """A `verified_from` list of source ids."""
    ids = _list(mark, "verified_from")
    names = [m for m in ids if isinstance(m, str)]
    if len(names) != len(ids):
        raise TypeError(f"verified_from must list source ids, not {mark!r}")
    return names


def needs_provenance(doc: JsonObject) -> bool:
    return doc.get("source_org") in TRACED_ORGS


def _units(doc: JsonObject) -> Iterator[tuple[str, JsonValue]]:
    """(path, provenance marker) for every fact unit; the marker is the raw `verified_from`
    list, the string 'unverified', or None when the unit carries neither."""

    def marker(node: JsonObject) -> JsonValue:
        if node.get("unverified") is True:
            return UNVERIFIED
        return node.get("verified_from")

    yield "document", marker(doc)
    for i, section in enumerate(_objects(doc.get("sections"), "sections"), start=1):
        name = f"sections[{i}] {section.get('heading', '')}"
        yield name, marker(section)
        for j in _list(section.get("unverified_paragraphs"), "unverified_paragraphs"):
            yield f"{name}, paragraph {j}", UNVERIFIED
    program = _mapping(doc.get("program"), "program")
    if not program:
        return
    table = _mapping(program.get("provenance"), "program.provenance")
    for field in PROGRAM_FIELDS:
        if program.get(field):
            yield f"program.{field}", table.get(field)
    for key in _mapping(program.get("intervals"), "program.intervals"):
        yield f"program.intervals.{key}", table.get(f"intervals.{key}")
    recommendations = _objects(program.get("recommendations"), "program.recommendations")
    for i, rec in enumerate(recommendations, start=1):
        yield f"program.recommendations[{i}]", marker(rec)
    for i, algo in enumerate(_objects(program.get("algorithms"), "program.algorithms"), start=1):
        yield f"program.algorithms[{i}]", marker(algo)
        points = _objects(algo.get("decision_points"), "decision_points")
        for j, point in enumerate(points, start=1):
            yield f"program.algorithms[{i}].decision_points[{j}]", marker(point)


def missing(doc: JsonObject) -> list[str]:
    """Fact units with neither provenance nor an unverified mark, or naming unknown sources."""
    if not needs_provenance(doc):
        return []
    sources = _mapping(doc.get("sources"), "sources")
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
    for i, section in enumerate(_objects(doc.get("sections"), "sections"), start=1):
        text = section.get("text") or ""
        if not isinstance(text, str):
            raise TypeError(f"sections[{i}] text must be text, not {text!r}")
        count = len([p for p in text.split("\n\n") if p.strip()])
        paragraphs = _list(section.get("unverified_paragraphs"), "unverified_paragraphs")
        if not all(isinstance(j, int) for j in paragraphs):
            raise TypeError(f"sections[{i}] unverified_paragraphs must be numbers")
        bad = [j for j in paragraphs if isinstance(j, int) and not 1 <= j <= count]
        if bad:
            problems.append(f"{doc['document_id']}: sections[{i}] has no paragraph {bad}")
    for sid, src in sources.items():
        if not (isinstance(src, dict) and src.get("url") and src.get("seen")):
            problems.append(f"{doc['document_id']}: source {sid!r} needs url and seen")
    return problems


def _seen(ids: list[str], sources: JsonObject) -> list[SeenAt]:
    pages = [_mapping(sources[m], f"source {m!r}") for m in ids]
    return [{"url": str(page["url"]), "seen": str(page["seen"])} for page in pages]


def _expand(mark: JsonValue, sources: JsonObject) -> JsonValue:
    """A provenance marker with its source ids expanded to `[{url, seen}]`."""
    if mark == UNVERIFIED or mark is None:
        return mark
    return [{"url": s["url"], "seen": s["seen"]} for s in _seen(_source_ids(mark), sources)]


def resolve(doc: JsonObject) -> dict[str, Any]:
    """A copy of the document with every `verified_from` expanded to `[{url, seen}]`, and the
    flat fact list under `facts`."""
    if not needs_provenance(doc):
        return doc
    sources = _mapping(doc.get("sources"), "sources")
    out = copy.deepcopy(doc)
    out["facts"] = [
        {
            "fact": f["fact"],
            "unverified": f["unverified"],
            "verified_from": [{"url": s["url"], "seen": s["seen"]} for s in f["verified_from"]],
        }
        for f in facts(doc)
    ]

    def fix(node: JsonObject) -> None:
        node["verified_from"] = _expand(
            UNVERIFIED if node.get("unverified") is True else node.get("verified_from"), sources
        )
        if node["verified_from"] == UNVERIFIED:
            node["verified_from"] = []
            node["unverified"] = True

    fix(out)
    for section in _objects(out.get("sections"), "sections"):
        fix(section)
    program = _mapping(out.get("program"), "program")
    if program:
        program["provenance"] = {
            k: _expand(v, sources)
            for k, v in _mapping(program.get("provenance"), "program.provenance").items()
        }
        for rec in _objects(program.get("recommendations"), "program.recommendations"):
            fix(rec)
        for algo in _objects(program.get("algorithms"), "program.algorithms"):
            fix(algo)
            for point in _objects(algo.get("decision_points"), "decision_points"):
                fix(point)
    return out


def facts(doc: JsonObject) -> list[Fact]:
    """Flat list of fact units with their resolved provenance, for freshness reporting."""
    if not needs_provenance(doc):
        return []
    sources = _mapping(doc.get("sources"), "sources")
    out: list[Fact] = []
    for path, mark in _units(doc):
        if mark == UNVERIFIED or not mark:
            out.append({"fact": path, "unverified": True, "verified_from": []})
        else:
            out.append(
                {
                    "fact": path,
                    "unverified": False,
                    "verified_from": _seen(_source_ids(mark), sources),
                }
            )
    return out
