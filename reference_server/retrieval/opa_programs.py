"""Ontario Health screening programs: which program a name means, and both paths to its documents.

SQL reads each current program document's structured block from `opa_documents`; the vector
path searches the Ontario Health collection and rebuilds the same blocks from chunk metadata,
so either path can answer alone. Program names are matched on whole words ("benefits" is not
"fit").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ocm_common.json_types import JsonObject, JsonValue
from reference_server.retrieval.opa_freshness import SeenAt
from reference_server.retrieval.opa_sections import Filters, vector_search
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit

PROGRAM_ALIASES = {
    "cervical": ["cervical", "cervix", "pap", "pap test", "hpv", "ocsp", "colposcopy"],
    "breast": ["breast", "mammogram", "mammography", "obsp", "high risk obsp"],
    "colorectal": [
        "colorectal",
        "colon",
        "bowel",
        "fit",
        "fecal immunochemical",
        "coloncancercheck",
        "colonoscopy",
    ],
    "lung": ["lung", "low-dose ct", "ldct", "olsp"],
}
_ALIAS_PATTERNS = {
    key: re.compile(r"\b(?:" + "|".join(re.escape(a) for a in aliases) + r")s?\b", re.I)
    for key, aliases in PROGRAM_ALIASES.items()
}


def program_key(name: str) -> str | None:
    """The local program a name refers to (whole-word aliases, first match in the text), or None."""
    found = [(m.start(), key) for key, pat in _ALIAS_PATTERNS.items() if (m := pat.search(name))]
    return min(found)[1] if found else None


# ----------------------------------------------------------------------------- the stored block
# A document's `program:` block as the index stores it (corpus/FORMAT.md, with every
# `verified_from` expanded to `[{url, seen}]` by index/provenance.py): the `program` column of
# `opa_documents` and the `program` metadata of a vector chunk, as JSON. Every key is optional.


class StoredEligibility(TypedDict, total=False):
    age_criteria: str | None
    risk_criteria: str | None
    general: list[str] | None
    min_age: int | None
    max_age: int | None  # None: no upper limit


class StoredRecommendation(TypedDict, total=False):
    text: str
    category: str  # screening | diagnostic | referral | surveillance
    age_range: list[int] | None
    frequency: str | None
    conditions: list[str] | None
    risk_factors: list[str] | None
    section: int | None  # 1-based index of the section it is written in
    section_heading: str | None  # that section's heading, added at index build
    verified_from: list[SeenAt] | None
    unverified: bool


class StoredAlgorithm(TypedDict, total=False):
    name: str
    description: str
    steps: list[str] | None
    decision_points: list[JsonObject] | None  # {"if", "then", verified_from | unverified}
    verified_from: list[SeenAt] | None
    unverified: bool


class StoredProgram(TypedDict, total=False):
    key: str | None  # cervical | breast | colorectal | lung
    name: str | None
    overview: str | None
    eligibility: StoredEligibility | None
    intervals: dict[str, str] | None
    recommendations: list[StoredRecommendation] | None
    algorithms: list[StoredAlgorithm] | None
    procedures: list[str] | None
    referral_process: str | None
    self_referral: str | None
    locations: list[str] | None
    resources: list[str] | None
    # fact -> the pages that verify it, or "unverified" (None: the corpus named neither)
    provenance: dict[str, list[SeenAt] | str | None] | None


@dataclass(frozen=True)
class Seen:
    """A public page a fact was verified from, and the date of the copy seen."""

    url: str
    seen: str


def _pages(raw: list[SeenAt] | str | None) -> tuple[Seen, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(Seen(s["url"], str(s["seen"])) for s in raw if isinstance(s, dict))


@dataclass(frozen=True)
class FactCheck:
    """One fact's provenance entry: the pages that verify it, or `unverified` (FORMAT.md)."""

    pages: tuple[Seen, ...] = ()
    unverified: bool = False


UNCHECKED = FactCheck()  # a fact the provenance table does not name


def _fact_check(raw: list[SeenAt] | str | None) -> FactCheck:
    return FactCheck(_pages(raw), raw == "unverified")


@dataclass(frozen=True)
class ProgramEligibility:
    age_criteria: str | None
    risk_criteria: str | None
    general: tuple[str, ...]
    min_age: int | None
    max_age: int | None  # None: no upper limit


@dataclass(frozen=True)
class ProgramRec:
    """One recommendation of a program block, with the document it came from."""

    document_id: str
    source_url: str
    section_heading: str | None
    text: str
    category: str
    age_range: tuple[int, ...] | None
    frequency: str | None
    conditions: tuple[str, ...]
    risk_factors: tuple[str, ...]
    section: int
    verified_from: tuple[Seen, ...]
    unverified: bool


@dataclass(frozen=True)
class ProgramAlgo:
    """One pathway of a program block, with the page of the document it came from."""

    source_url: str
    name: str
    description: str
    steps: tuple[str, ...]
    # Published as stored (their keys vary: `unverified` only where a step could not be checked).
    decision_points: tuple[Mapping[str, JsonValue], ...]
    verified_from: tuple[Seen, ...]
    unverified: bool


@dataclass(frozen=True)
class ProgramBlock:
    """A document's structured program block (corpus/FORMAT.md), decoded."""

    key: str | None
    name: str | None
    overview: str | None
    eligibility: ProgramEligibility | None  # None: absent or empty
    intervals: Mapping[str, str]
    recommendations: tuple[ProgramRec, ...]
    algorithms: tuple[ProgramAlgo, ...]
    procedures: tuple[str, ...]
    referral_process: str | None
    self_referral: str | None
    locations: tuple[str, ...]
    resources: tuple[str, ...]
    provenance: Mapping[str, FactCheck]
    # The block as stored, keys sorted: SQL and vector copies of one block are compared on it.
    canonical: str = field(repr=False)

    def check(self, fact: str) -> FactCheck:
        return self.provenance.get(fact, UNCHECKED)


@dataclass(frozen=True)
class ProgramDoc:
    document_id: str
    title: str
    source_url: str
    effective_date: str | None
    updated_date: str | None
    review_date: str | None
    program: ProgramBlock


def _rec(raw: StoredRecommendation, document_id: str, source_url: str) -> ProgramRec:
    rng = raw.get("age_range")
    return ProgramRec(
        document_id=document_id,
        source_url=source_url,
        section_heading=raw.get("section_heading"),
        text=raw["text"],
        category=raw.get("category", "screening"),
        age_range=tuple(rng) if rng is not None else None,
        frequency=raw.get("frequency"),
        conditions=tuple(raw.get("conditions") or ()),
        risk_factors=tuple(raw.get("risk_factors") or ()),
        section=int(raw.get("section") or 1),
        verified_from=_pages(raw.get("verified_from")),
        unverified=bool(raw.get("unverified")),
    )


def _algo(raw: StoredAlgorithm, source_url: str) -> ProgramAlgo:
    return ProgramAlgo(
        source_url=source_url,
        name=raw["name"],
        description=raw.get("description", ""),
        steps=tuple(raw.get("steps") or ()),
        decision_points=tuple(raw.get("decision_points") or ()),
        verified_from=_pages(raw.get("verified_from")),
        unverified=bool(raw.get("unverified")),
    )


def _eligibility(raw: StoredEligibility | None) -> ProgramEligibility | None:
    if not raw:
        return None
    return ProgramEligibility(
        age_criteria=raw.get("age_criteria"),
        risk_criteria=raw.get("risk_criteria"),
        general=tuple(raw.get("general") or ()),
        min_age=raw.get("min_age"),
        max_age=raw.get("max_age"),
    )


def program_block(raw: StoredProgram, document_id: str, source_url: str) -> ProgramBlock:
    """A decoded program block; its recommendations and pathways name their document."""
    return ProgramBlock(
        key=raw.get("key"),
        name=raw.get("name"),
        overview=raw.get("overview"),
        eligibility=_eligibility(raw.get("eligibility")),
        intervals={str(k): str(v) for k, v in (raw.get("intervals") or {}).items()},
        recommendations=tuple(
            _rec(r, document_id, source_url) for r in raw.get("recommendations") or ()
        ),
        algorithms=tuple(_algo(a, source_url) for a in raw.get("algorithms") or ()),
        procedures=tuple(raw.get("procedures") or ()),
        referral_process=raw.get("referral_process"),
        self_referral=raw.get("self_referral"),
        locations=tuple(raw.get("locations") or ()),
        resources=tuple(raw.get("resources") or ()),
        provenance={f: _fact_check(v) for f, v in (raw.get("provenance") or {}).items()},
        canonical=json.dumps(raw, sort_keys=True),
    )


def _program_doc(row: Mapping[str, Any], raw_program: StoredProgram) -> ProgramDoc:
    document_id, source_url = row["document_id"], row.get("source_url") or ""
    return ProgramDoc(
        document_id=document_id,
        title=row.get("title") or "",
        source_url=source_url,
        effective_date=row.get("effective_date") or None,
        updated_date=row.get("updated_date") or None,
        review_date=row.get("review_date") or None,
        program=program_block(raw_program, document_id, source_url),
    )


def sql_program_docs(sql: SqlClient, key: str | None) -> list[ProgramDoc]:
    """Current Ontario Health documents whose program block is `key` (none when key is None)."""
    if key is None:
        return []
    by_key = sql.derived.get("program_docs_by_key", lambda: _program_docs_by_key(sql))
    return list(by_key.get(key, ()))


def _program_docs_by_key(sql: SqlClient) -> dict[str | None, tuple[ProgramDoc, ...]]:
    """Program documents by program key, read and decoded once per process (the index is
    read-only and the documents are frozen, so calls share them): decoding every program block
    on every call grew with the corpus (10x: most of opa.program_lookup's time)."""
    rows = sql.query(
        "SELECT document_id, title, source_url, effective_date, updated_date, review_date, program "
        "FROM opa_documents WHERE source_org = 'ontario_health' AND is_superseded = 0 "
        "AND program IS NOT NULL ORDER BY document_id"
    )
    by_key: dict[str | None, list[ProgramDoc]] = {}
    for row in rows:
        doc = _program_doc(row, json.loads(row["program"]))
        by_key.setdefault(doc.program.key, []).append(doc)
    return {k: tuple(v) for k, v in by_key.items()}


def vector_program_hits(vectors: VectorClient, query: str, limit: int = 8) -> list[VectorHit]:
    """Ontario Health passages nearest the question (current documents only)."""
    return vector_search(vectors, query, Filters(source_orgs=["ontario_health"]), limit=limit)


def program_docs_from_hits(hits: list[VectorHit], key: str | None) -> list[ProgramDoc]:
    """Program documents rebuilt from vector-chunk metadata, one per document."""
    found: dict[str, ProgramDoc] = {}
    for h in hits:
        m = h.metadata
        if key is None or not m.get("program") or m.get("document_id") in found:
            continue
        program: StoredProgram = json.loads(m["program"])
        if program.get("key") == key:
            found[m["document_id"]] = _program_doc(m, program)
    return sorted(found.values(), key=lambda d: d.document_id)
