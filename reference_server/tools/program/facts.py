"""The patient-specific answer and fact provenance for opa.program_lookup.

Program blocks come from the index with each fact's provenance resolved (`verified_from`
pages or `unverified`, see corpus/FORMAT.md). This module picks the recommendation for one
patient, decides whether the age is outside the program's screening ages, and lists which
answered facts are unverified and which pages verify the rest.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from reference_server.retrieval.opa_programs import (
    PROGRAM_ALIASES,
    ProgramAlgo,
    ProgramBlock,
    ProgramDoc,
    ProgramEligibility,
    ProgramRec,
    Seen,
)
from reference_server.retrieval.vector import VectorHit
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict, compare

# An answer whose leading fact could not be verified is worth less than one checked against a
# page: the tool's `Counts.penalty`, which the formula subtracts only from a nonzero confidence.
UNVERIFIED_PENALTY = 0.1


class Source(BaseModel):
    """A public page a fact was verified from, and the date of the copy seen."""

    url: str
    seen: str

    @classmethod
    def many(cls, pages: Iterable[Seen]) -> list[Source]:
        return [cls(url=s.url, seen=s.seen) for s in pages]


# A `Citation` with the page it was verified on and its publisher (no docstring: it would become
# the published schema's description).
class ProgramCitation(Citation):
    source_org: str = "ontario_health"
    url: str


def _words(text: str) -> str:
    """Lower case, punctuation as spaces: 'HPV-negative' and 'hpv negative' are the same term."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _match_score(wanted: Sequence[str], patient: Sequence[str]) -> int:
    """How specifically the patient's risk factors match a recommendation's terms: 3 exact, 2 the
    recommendation's term inside the patient's, 1 the patient's term inside a longer one, 0 none."""
    best = 0
    for w in filter(None, (_words(x) for x in wanted)):
        for r in filter(None, (_words(x) for x in patient)):
            best = max(best, 3 if w == r else 2 if w in r else 1 if r in w else 0)
    return best


def applicable(
    recs: Sequence[ProgramRec], age: int | None, risks: Sequence[str]
) -> list[ProgramRec]:
    """Recommendations for this patient: in the age range, and risk-specific ones only with a matching
    factor. They are ranked by how specifically they match: first on their risk factors, then on
    the conditions they apply to (a patient's 'self-collected HPV negative' is the condition of
    the self-collected rule, and only contains the general 'HPV negative'); ties keep corpus order.
    """
    ranked: list[tuple[int, int, int, ProgramRec]] = []
    for i, rec in enumerate(recs):
        rng = rec.age_range
        if age is not None and rng and not (rng[0] <= age <= rng[1]):
            continue
        risk = _match_score(rec.risk_factors, risks) if rec.risk_factors else 0
        if rec.risk_factors and not risk:
            continue
        ranked.append((risk, _match_score(rec.conditions, risks), i, rec))
    ranked.sort(key=lambda t: (-t[0], -t[1], t[2]))
    return [rec for *_, rec in ranked]


def outside_ages(
    eligibility: ProgramEligibility | None, chosen: Sequence[ProgramRec], age: int | None
) -> bool | None:
    """Outside the program's screening ages (eligibility min/max; no max = no upper limit), unless a
    risk-specific recommendation that matches the patient covers the age (e.g. family history)."""
    lo = eligibility.min_age if eligibility else None
    if age is None or lo is None or eligibility is None:
        return None
    hi = eligibility.max_age
    inside = lo <= age and (hi is None or age <= hi)
    return not inside and not any(r.risk_factors for r in chosen)


@dataclass(frozen=True)
class PatientAnswer:
    text: str
    outside: bool | None
    chosen: tuple[ProgramRec, ...] = ()
    sources: tuple[Seen, ...] = ()
    unverified: bool = False


def patient_answer(
    program: ProgramBlock, recs: Sequence[ProgramRec], age: int | None, risks: Sequence[str]
) -> PatientAnswer:
    """One sentence for this patient, from the recommendations pooled across the program's documents."""
    elig = program.eligibility
    chosen = tuple(applicable(recs, age, risks))
    outside = outside_ages(elig, chosen, age)
    if outside and elig is not None:
        ages = f"{elig.min_age}-{elig.max_age}" if elig.max_age else f"{elig.min_age} and over"
        lead = f"At age {age} the patient is outside the program's screening ages ({ages})."
        if chosen:  # a fact stated for this very age (e.g. 'do not screen under 25') says more
            best = chosen[0]
            text = f"{lead} {best.text}"
            return PatientAnswer(text, True, chosen, best.verified_from, best.unverified)
        text = f"{lead} {elig.age_criteria or ''}".strip()
        prov = program.check("eligibility")
        return PatientAnswer(text, True, chosen, prov.pages, prov.unverified)
    if not chosen:
        return PatientAnswer(
            "No program recommendation matches this patient's age and risk factors; see the eligibility criteria.",
            outside,
        )
    best = chosen[0]
    who = f"At age {age}" if age is not None else "For this patient"
    risk = f" with {', '.join(risks)}" if risks else ""
    freq = f" ({best.frequency})" if best.frequency else ""
    note = " (unverified: not confirmed on a public page)" if best.unverified else ""
    return PatientAnswer(
        f"{who}{risk}: {best.text}{freq}{note}",
        outside,
        chosen,
        best.verified_from,
        best.unverified,
    )


def unverified_facts(
    program: ProgramBlock | None,
    intervals: dict[str, str],
    recs: Sequence[ProgramRec],
    algos: Sequence[ProgramAlgo],
    patient: PatientAnswer | None,
) -> list[str]:
    """Names of the answered facts that carry `unverified` instead of a verifying page."""
    out = [
        f"intervals.{k}"
        for k in intervals
        if program is not None and program.check(f"intervals.{k}").unverified
    ]
    out += [f"recommendation: {r.text[:80]}" for r in recs if r.unverified]
    for a in algos:
        if a.unverified:
            out.append(f"algorithm: {a.name}")
        out += [f"{a.name}: if {p.get('if')}" for p in a.decision_points if p.get("unverified")]
    if patient and patient.unverified and not any(r.unverified for r in patient.chosen[:1]):
        out.append("patient-specific recommendation")
    return list(dict.fromkeys(out))


def sources_of(
    program: ProgramBlock | None,
    recs: Sequence[ProgramRec],
    algos: Sequence[ProgramAlgo],
    patient: PatientAnswer | None,
) -> Iterable[tuple[str, Seen]]:
    """(fact, page) pairs for the facts in the answer, the patient's recommendation first."""
    if patient:
        for s in patient.sources:
            yield "patient-specific recommendation", s
    for r in recs[:5]:
        for s in r.verified_from:
            yield f"recommendation: {r.text[:60]}", s
    for f, check in (program.provenance if program else {}).items():
        for s in check.pages:
            yield f, s
    for a in algos:
        for s in a.verified_from:
            yield f"algorithm: {a.name}", s


def pages(used: Iterable[tuple[str, Seen]], limit: int = 8) -> list[tuple[str, Seen]]:
    """One citation per verifying page (the first fact that used it), in order of use."""
    seen: dict[str, tuple[str, Seen]] = {}
    for fact, src in used:
        seen.setdefault(src.url, (fact, src))
    return list(seen.values())[:limit]


def program_conflicts(docs: Sequence[ProgramDoc], vdocs: Sequence[ProgramDoc]) -> list[Conflict]:
    """Documents of one program that disagree on an interval, and SQL vs vector copies of a block."""
    out: list[Conflict] = []
    first: dict[str, tuple[str, str]] = {}
    for d in docs:
        for k, v in d.program.intervals.items():
            if k in first and (c := compare(f"intervals.{k}", first[k][1], v, "")):
                c.resolution = f"Both documents shown; {first[k][0]} is primary."
                out.append(c)
            first.setdefault(k, (d.document_id, v))
    vblocks = {d.document_id: d.program for d in vdocs}
    for d in docs:
        if d.document_id in vblocks:
            c = compare(
                f"{d.document_id}.program",
                d.program.canonical,
                vblocks[d.document_id].canonical,
                "SQL block used; rebuild the vector index.",
            )
            out += [c] if c else []
    return out


@dataclass(frozen=True)
class Pooled:
    """A program's documents, primary first, and the recommendations and pathways of all."""

    docs: list[ProgramDoc]
    recs: list[ProgramRec]
    algos: list[ProgramAlgo]


def pool(docs: Sequence[ProgramDoc]) -> Pooled:
    """Several current documents may cover one program (guideline + HPV hub): the one with the most
    recommendations is primary; recommendations and algorithms are pooled from all of them."""
    ranked = sorted(docs, key=lambda d: (-len(d.program.recommendations), d.document_id))
    return Pooled(
        ranked,
        [r for d in ranked for r in d.program.recommendations],
        [a for d in ranked for a in d.program.algorithms],
    )


def merged_program(docs: Sequence[ProgramDoc]) -> ProgramBlock | None:
    """The primary document's block, with the intervals (and their provenance) of the others added
    under keys the primary does not have (a clash is a conflict, reported separately)."""
    if not docs:
        return None
    prog = docs[0].program
    intervals = dict(prog.intervals)
    table = dict(prog.provenance)
    for d in docs[1:]:
        for k, v in d.program.intervals.items():
            if k not in intervals:
                intervals[k] = v
                table[f"intervals.{k}"] = d.program.check(f"intervals.{k}")
    return dataclasses.replace(prog, intervals=intervals, provenance=table)


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


def program_citations(
    docs: Sequence[ProgramDoc], verifying: list[tuple[str, Seen]], passages: Sequence[VectorHit]
) -> list[ProgramCitation]:
    """The program documents, then the pages that verify the answer's facts, then supporting passages."""
    rows = [
        ProgramCitation(
            source=d.title,
            loc=d.program.name if d.program.name is not None else d.title,
            url=d.source_url,
            chunk_id=d.document_id,
        )
        for d in docs
    ]
    # A verifying page is cited for a fact of the primary document, which source.passages resolves.
    primary = docs[0].document_id if docs else ""
    rows += [
        ProgramCitation(source=f"verified from ({s.seen})", loc=f, url=s.url, chunk_id=primary)
        for f, s in verifying
    ]
    rows += [
        ProgramCitation(
            source=h.metadata.get("title", ""),
            loc=h.metadata.get("section_heading", ""),
            url=h.metadata.get("source_url", ""),
            chunk_id=h.id,
        )
        for h in passages[:3]
    ]
    return rows
