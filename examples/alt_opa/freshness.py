"""`opa.freshness_probe`: which documents are stale, by the spec's rules on the extracts' dates.

A document's age is counted from its last update: its updated date, else its effective date,
else its published date (``last_updated``); ``days_old`` is today minus that date. The spec's
classes, most stale first:

- superseded: definitely stale (no publisher's extract marks a document superseded, so the
  server passes none; the rule is here for a corpus that does);
- ``days_old`` > 730 (more than two years without an update): likely stale;
- ``days_old`` > 365 (more than one year): potentially stale.

A document with no date at all cannot be aged: it counts as checked, is not listed, and the
recommendations say how many there are. ``stale_documents`` holds superseded documents first,
then the rest oldest first (ties by title, then id). ``recommendations`` is the re-ingestion
list: a summary line, one line per stale document naming its title and why it is stale, then
the undated documents and a refresh schedule. This backend is offline: with ``check_web`` it
reports that web checking is disabled and ``potential_updates`` stays empty.

``last_corpus_update`` is the newest ``last_updated`` date among all the corpus's documents
(whatever the filters), not the source files' modification times, which a copy resets.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TypedDict

from fastmcp.exceptions import ToolError

from examples.alt_opa.corpus import ORG_NAMES, Corpus, Document
from examples.alt_opa.search import topic_matches

STALE_DAYS = 365
LIKELY_STALE_DAYS = 730
# the published schema's order of source_orgs
SOURCE_ORGS = ("cpso", "ontario_health", "cep", "pho", "moh")
SUPERSEDED = "superseded"
LIKELY_STALE = "likely stale"
POTENTIALLY_STALE = "potentially stale"
# each class, most stale first, with why a document is in it
REASONS = {
    SUPERSEDED: "superseded, so definitely stale; replace it with its current version",
    LIKELY_STALE: "likely stale (more than two years without an update)",
    POTENTIALLY_STALE: "potentially stale (more than one year without an update)",
}
UNDATED_SHOWN = 5


class StaleDocument(TypedDict):
    document_id: str
    title: str
    last_updated: str | None
    days_old: int | None
    topics: list[str]


class PotentialUpdate(TypedDict):
    source_org: str
    indication: str
    url: str
    detected_date: str


class FreshnessResult(TypedDict):
    documents_checked: int
    stale_documents: list[StaleDocument]
    potential_updates: list[PotentialUpdate]
    last_corpus_update: str | None
    recommendations: list[str]


@dataclass(frozen=True)
class Request:
    document_ids: tuple[str, ...] = ()
    source_orgs: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    check_web: bool = False


@dataclass(frozen=True)
class Aged:
    """A checked document, its last update, its age in days and its staleness (None: current
    or undated)."""

    doc: Document
    last_updated: str | None
    days_old: int | None
    staleness: str | None

    def order(self) -> tuple[bool, bool, int, str, str]:
        return (
            self.staleness != SUPERSEDED,
            self.days_old is None,
            -(self.days_old or 0),
            self.doc.title.casefold(),
            self.doc.doc_id,
        )


def last_updated(doc: Document) -> str | None:
    """The updated date, else the effective date, else the published date (a readable one)."""
    for value in (doc.updated_date, doc.effective_date, doc.published_date):
        if value and _date(value) is not None:
            return value
    return None


def _date(value: str) -> date | None:
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def staleness(days_old: int | None, superseded: bool) -> str | None:
    if superseded:
        return SUPERSEDED
    if days_old is None:
        return None
    if days_old > LIKELY_STALE_DAYS:
        return LIKELY_STALE
    if days_old > STALE_DAYS:
        return POTENTIALLY_STALE
    return None


def age(doc: Document, today: date, superseded: Collection[str] = ()) -> Aged:
    updated = last_updated(doc)
    when = _date(updated) if updated else None
    days = (today - when).days if when else None
    return Aged(doc, updated, days, staleness(days, doc.doc_id in superseded))


def select(corpus: Corpus, request: Request) -> list[Document]:
    """The documents every given filter keeps (ids, organisations, any topic)."""
    unknown = [i for i in dict.fromkeys(request.document_ids) if i not in corpus.documents]
    if unknown:
        raise ToolError(
            f"document_ids: {', '.join(repr(i) for i in unknown)} not found. This backend's "
            "document ids look like 'doc0001'; opa.search_sections returns them."
        )
    bad = [o for o in request.source_orgs if o not in SOURCE_ORGS]
    if bad:
        raise ToolError(
            f"invalid source_orgs: {', '.join(repr(o) for o in bad)}; allowed: "
            f"{', '.join(SOURCE_ORGS)}"
        )
    docs = (
        [corpus.documents[i] for i in dict.fromkeys(request.document_ids)]
        if request.document_ids
        else list(corpus.documents.values())
    )
    if request.source_orgs:
        docs = [d for d in docs if d.org in request.source_orgs]
    if request.topics:
        docs = [d for d in docs if topic_matches(request.topics, d.topics)]
    return docs


def newest_date(docs: Iterable[Document]) -> str | None:
    dated = [(_date(u), u) for u in (last_updated(d) for d in docs) if u]
    return max((when, u) for when, u in dated if when)[1] if dated else None


def probe(
    corpus: Corpus, request: Request, today: date, superseded: Collection[str] = ()
) -> FreshnessResult:
    checked = [age(d, today, superseded) for d in select(corpus, request)]
    stale = sorted((a for a in checked if a.staleness), key=Aged.order)
    return {
        "documents_checked": len(checked),
        "stale_documents": [
            {
                "document_id": a.doc.doc_id,
                "title": a.doc.title,
                "last_updated": a.last_updated,
                "days_old": a.days_old,
                "topics": list(a.doc.topics),
            }
            for a in stale
        ],
        "potential_updates": [],
        "last_corpus_update": newest_date(corpus.documents.values()),
        "recommendations": recommendations(corpus, request, checked, stale),
    }


def recommendations(
    corpus: Corpus, request: Request, checked: Sequence[Aged], stale: Sequence[Aged]
) -> list[str]:
    out: list[str] = []
    held = {d.org for d in corpus.documents.values()}
    for org in dict.fromkeys(request.source_orgs):
        if org not in held:
            out.append(
                f"This corpus holds no {ORG_NAMES.get(org, org)} ({org}) documents: it is built "
                "from the publishers' extracts it was given, and none come from that organisation."
            )
    if not checked:
        given = [
            f"{name}: {', '.join(values)}"
            for name, values in (
                ("document_ids", request.document_ids),
                ("source_orgs", request.source_orgs),
                ("topics", request.topics),
            )
            if values
        ]
        out.append(f"No document matches these filters ({'; '.join(given)}), so none was checked.")
    elif stale:
        counts = [(sum(1 for a in stale if a.staleness == label), label) for label in REASONS]
        shown = ", ".join(f"{n} {label}" for n, label in counts if n)
        out.append(
            f"{len(stale)} of {len(checked)} documents checked {'is' if len(stale) == 1 else 'are'} "
            f"stale ({shown}); "
            "re-ingest them from their source pages, most stale first:"
        )
        for a in stale:
            when = (
                f"last updated {a.last_updated}, {a.days_old} days ago"
                if a.last_updated is not None
                else "no date"
            )
            out.append(
                f"Re-ingest “{a.doc.title}” ({ORG_NAMES.get(a.doc.org, a.doc.org)}; {when}): "
                f"{REASONS[a.staleness] if a.staleness else POTENTIALLY_STALE}."
            )
    else:
        out.append(f"None of the {len(checked)} documents checked is stale.")
    undated = [a.doc.title for a in checked if a.last_updated is None]
    if undated:
        named = ", ".join(f"“{t}”" for t in undated[:UNDATED_SHOWN])
        more = f" and {len(undated) - UNDATED_SHOWN} more" if len(undated) > UNDATED_SHOWN else ""
        out.append(
            f"{len(undated)} documents checked carry no updated, effective or published date, so "
            f"their age cannot be judged; re-check them against their source pages: {named}{more}."
        )
    if request.check_web:
        out.append(
            "Web checking is disabled: this backend works offline from the publishers' extracts, "
            "so no source page was fetched and potential_updates is empty."
        )
    if checked:
        out.append(
            f"Refresh schedule: re-extract the sources at least every {STALE_DAYS} days, the age "
            "after which a document counts as potentially stale."
        )
    return out
