"""The patient-specific answer and fact provenance for opa.program_lookup.

Program blocks come from the index with each fact's provenance resolved (`verified_from:
[{url, seen}]` or `unverified: true`, see corpus/FORMAT.md). This module picks the
recommendation for one patient, decides whether the age is outside the program's screening
ages, and lists which answered facts are unverified and which pages verify the rest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from reference_server.retrieval.opa_programs import PROGRAM_ALIASES
from reference_server.scoring.conflicts import Conflict, compare

# An answer whose leading fact could not be verified is worth less than one checked against a page.
UNVERIFIED_PENALTY = 0.1


def penalised(confidence: float, leading_unverified: bool) -> float:
    """The spec's confidence, less UNVERIFIED_PENALTY when the answer leads with an unverified fact."""
    if not leading_unverified or not confidence:
        return confidence
    return round(max(0.0, confidence - UNVERIFIED_PENALTY), 4)


class Source(BaseModel):
    """A public page a fact was verified from, and the date of the copy seen."""

    url: str
    seen: str

    @classmethod
    def many(cls, raw: Any) -> list[Source]:
        if not isinstance(raw, list):
            return []
        return [cls(url=s["url"], seen=str(s["seen"])) for s in raw if isinstance(s, dict)]


def _words(text: str) -> str:
    """Lower case, punctuation as spaces: 'HPV-negative' and 'hpv negative' are the same term."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _match_score(wanted: list[str], patient: list[str]) -> int:
    """How specifically the patient's risk factors match a recommendation's terms: 3 exact, 2 the
    recommendation's term inside the patient's, 1 the patient's term inside a longer one, 0 none."""
    best = 0
    for w in filter(None, (_words(x) for x in wanted)):
        for r in filter(None, (_words(x) for x in patient)):
            best = max(best, 3 if w == r else 2 if w in r else 1 if r in w else 0)
    return best


def applicable(
    recs: list[dict[str, Any]], age: int | None, risks: list[str]
) -> list[dict[str, Any]]:
    """Recommendations for this patient: in the age range, and risk-specific ones only with a matching
    factor. They are ranked by how specifically they match: first on their risk factors, then on
    the conditions they apply to (a patient's 'self-collected HPV negative' is the condition of
    the self-collected rule, and only contains the general 'HPV negative'); ties keep corpus order.
    """
    ranked: list[tuple[int, int, int, dict[str, Any]]] = []
    for i, rec in enumerate(recs):
        rng = rec.get("age_range")
        if age is not None and rng and not (rng[0] <= age <= rng[1]):
            continue
        risk = _match_score(rec["risk_factors"], risks) if rec.get("risk_factors") else 0
        if rec.get("risk_factors") and not risk:
            continue
        ranked.append((risk, _match_score(rec.get("conditions") or [], risks), i, rec))
    ranked.sort(key=lambda t: (-t[0], -t[1], t[2]))
    return [rec for *_, rec in ranked]


def outside_ages(
    eligibility: dict[str, Any], chosen: list[dict[str, Any]], age: int | None
) -> bool | None:
    """Outside the program's screening ages (eligibility min/max; no max = no upper limit), unless a
    risk-specific recommendation that matches the patient covers the age (e.g. family history)."""
    lo, hi = eligibility.get("min_age"), eligibility.get("max_age")
    if age is None or lo is None:
        return None
    inside = lo <= age and (hi is None or age <= hi)
    return not inside and not any(r.get("risk_factors") for r in chosen)


@dataclass
class PatientAnswer:
    text: str
    outside: bool | None
    chosen: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    unverified: bool = False


def patient_answer(
    program: dict[str, Any], recs: list[dict[str, Any]], age: int | None, risks: list[str]
) -> PatientAnswer:
    """One sentence for this patient, from the recommendations pooled across the program's documents."""
    elig = program.get("eligibility") or {}
    chosen = applicable(recs, age, risks)
    outside = outside_ages(elig, chosen, age)
    criteria = elig.get("age_criteria") or ""
    if outside:
        ages = (
            f"{elig.get('min_age')}-{elig['max_age']}"
            if elig.get("max_age")
            else f"{elig.get('min_age')} and over"
        )
        text = f"At age {age} the patient is outside the program's screening ages ({ages}). {criteria}".strip()
        prov = (program.get("provenance") or {}).get("eligibility")
        return PatientAnswer(
            text, True, chosen, prov if isinstance(prov, list) else [], prov == "unverified"
        )
    if not chosen:
        return PatientAnswer(
            "No program recommendation matches this patient's age and risk factors; see the eligibility criteria.",
            outside,
        )
    best = chosen[0]
    who = f"At age {age}" if age is not None else "For this patient"
    risk = f" with {', '.join(risks)}" if risks else ""
    freq = f" ({best['frequency']})" if best.get("frequency") else ""
    note = " (unverified: not confirmed on a public page)" if best.get("unverified") else ""
    return PatientAnswer(
        f"{who}{risk}: {best['text']}{freq}{note}",
        outside,
        chosen,
        best.get("verified_from") or [],
        bool(best.get("unverified")),
    )


def unverified_facts(
    program: dict[str, Any],
    intervals: dict[str, str],
    recs: list[dict[str, Any]],
    algos: list[dict[str, Any]],
    patient: PatientAnswer | None,
) -> list[str]:
    """Names of the answered facts that carry `unverified` instead of a verifying page."""
    table = program.get("provenance") or {}
    out = [f"intervals.{k}" for k in intervals if table.get(f"intervals.{k}") == "unverified"]
    out += [f"recommendation: {r['text'][:80]}" for r in recs if r.get("unverified")]
    for a in algos:
        if a.get("unverified"):
            out.append(f"algorithm: {a['name']}")
        out += [
            f"{a['name']}: if {p.get('if')}"
            for p in a.get("decision_points") or []
            if p.get("unverified")
        ]
    if patient and patient.unverified and not any(r.get("unverified") for r in patient.chosen[:1]):
        out.append("patient-specific recommendation")
    return list(dict.fromkeys(out))


def sources_of(
    program: dict[str, Any],
    recs: list[dict[str, Any]],
    algos: list[dict[str, Any]],
    patient: PatientAnswer | None,
) -> Iterable[tuple[str, Source]]:
    """(fact, page) pairs for the facts in the answer, the patient's recommendation first."""
    if patient:
        for s in Source.many(patient.sources):
            yield "patient-specific recommendation", s
    for r in recs[:5]:
        for s in Source.many(r.get("verified_from")):
            yield f"recommendation: {r['text'][:60]}", s
    for f, raw in (program.get("provenance") or {}).items():
        for s in Source.many(raw):
            yield f, s
    for a in algos:
        for s in Source.many(a.get("verified_from")):
            yield f"algorithm: {a['name']}", s


def pages(used: Iterable[tuple[str, Source]], limit: int = 8) -> list[tuple[str, Source]]:
    """One citation per verifying page (the first fact that used it), in order of use."""
    seen: dict[str, tuple[str, Source]] = {}
    for fact, src in used:
        seen.setdefault(src.url, (fact, src))
    return list(seen.values())[:limit]


def program_conflicts(docs: list[dict[str, Any]], vdocs: list[dict[str, Any]]) -> list[Conflict]:
    """Documents of one program that disagree on an interval, and SQL vs vector copies of a block."""
    out: list[Conflict] = []
    first: dict[str, tuple[str, str]] = {}
    for d in docs:
        for k, v in (d["program"].get("intervals") or {}).items():
            if k in first and (c := compare(f"intervals.{k}", first[k][1], str(v), "")):
                c.resolution = f"Both documents shown; {first[k][0]} is primary."
                out.append(c)
            first.setdefault(k, (d["document_id"], str(v)))
    vblocks = {d["document_id"]: d["program"] for d in vdocs}
    for d in docs:
        if d["document_id"] in vblocks:
            a, b = (
                json.dumps(p, sort_keys=True) for p in (d["program"], vblocks[d["document_id"]])
            )
            c = compare(
                f"{d['document_id']}.program", a, b, "SQL block used; rebuild the vector index."
            )
            out += [c] if c else []
    return out


def pool(
    docs: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Several current documents may cover one program (guideline + HPV hub): the one with the most
    recommendations is primary; recommendations and algorithms are pooled from all of them."""
    docs = sorted(
        docs, key=lambda d: (-len(d["program"].get("recommendations") or []), d["document_id"])
    )
    recs = [
        r | {"_doc": d["document_id"]}
        for d in docs
        for r in d["program"].get("recommendations") or []
    ]
    algos = [
        a | {"_url": d["source_url"]} for d in docs for a in d["program"].get("algorithms") or []
    ]
    return docs, recs, algos


def merged_program(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The primary document's block, with the intervals (and their provenance) of the others added
    under keys the primary does not have (a clash is a conflict, reported separately)."""
    if not docs:
        return {}
    prog = dict(docs[0]["program"])
    intervals = dict(prog.get("intervals") or {})
    table = dict(prog.get("provenance") or {})
    for d in docs[1:]:
        other = d["program"].get("provenance") or {}
        for k, v in (d["program"].get("intervals") or {}).items():
            if k not in intervals:
                intervals[k] = v
                table[f"intervals.{k}"] = other.get(f"intervals.{k}")
    return prog | {"intervals": intervals, "provenance": table}


def answer_notes(
    asked: str, key: str | None, found: bool, paths: Sequence[str], unverified: list[str]
) -> list[str]:
    """What the client must know about the answer: scope, missing documents, unverified facts."""
    notes = []
    if key is None:
        notes.append(
            f"'{asked}' is not in the local corpus, which covers Ontario Health's "
            f"{', '.join(PROGRAM_ALIASES)} screening programs; no answer is given for other "
            "programs rather than a guessed one."
        )
    elif not found:
        notes.append(
            f"No current {key} program document was reached (paths answered: {paths or 'none'})."
        )
    if unverified:
        notes.append(
            f"{len(unverified)} fact(s) in this answer could not be verified against a public page: "
            + ", ".join(unverified[:5])
            + "."
        )
    return notes


def citation_rows(
    docs: list[dict[str, Any]], verifying: list[tuple[str, Source]], passages: list[Any]
) -> list[dict[str, Any]]:
    """The program documents, then the pages that verify the answer's facts, then supporting passages."""
    rows = [
        {
            "source": d["title"],
            "loc": d["program"].get("name", d["title"]),
            "url": d["source_url"],
            "chunk_id": d["document_id"],
        }
        for d in docs
    ]
    # A verifying page is cited for a fact of the primary document, which source.passages resolves.
    primary = docs[0]["document_id"] if docs else ""
    rows += [
        {"source": f"verified from ({s.seen})", "loc": f, "url": s.url, "chunk_id": primary}
        for f, s in verifying
    ]
    rows += [
        {
            "source": h.metadata.get("title", ""),
            "loc": h.metadata.get("section_heading", ""),
            "url": h.metadata.get("source_url", ""),
            "chunk_id": h.id,
        }
        for h in passages[:3]
    ]
    return rows
