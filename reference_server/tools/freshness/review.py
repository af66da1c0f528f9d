"""opa.freshness_probe's review: each document's staleness tier as of a day, provenance issues,
the whole corpus's review kept once per process and day, topic filters, and the dates the
vector index holds differently from SQL."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cached_property
from typing import Any, Literal, TypeVar

from reference_server.retrieval.opa_freshness import FreshnessDoc, all_documents
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare

Staleness = Literal["potentially_stale", "likely_stale", "superseded"]
PRIORITY = {"cpso": 0, "ontario_health": 1, "pho": 2, "moh": 3, "cep": 4}
STALE_SOURCE_DAYS = 365  # a verifying page seen over a year ago may have changed since
T = TypeVar("T")


def tier(doc: FreshnessDoc, today: int) -> tuple[Staleness | None, int | None]:
    """A document's staleness as of ``today`` (a day ordinal), from its decoded reference day."""
    ref = doc.reference_day
    days = today - ref if ref is not None else None
    if doc.is_superseded:
        return "superseded", days
    if days is None:
        return None, None
    if days > 730:
        return "likely_stale", days
    if days > 365:
        return "potentially_stale", days
    return None, days


def has_provenance_issue(doc: FreshnessDoc, cutoff: str) -> bool:
    """Unverified facts, or a verifying page seen before ``cutoff`` (an ISO day): cheap enough to
    ask of every document, so only the listed ones become `ProvenanceIssue` models."""
    prov = doc.fact_provenance
    if prov is None:
        return False
    return bool(prov.unverified) or (
        prov.oldest_seen is not None and prov.oldest_seen[:10] < cutoff
    )


URGENCY = {"superseded": 0, "likely_stale": 1, "potentially_stale": 2}


def provenance_cutoff(today: date) -> str:
    """Verifying pages seen before this ISO day may have changed since."""
    return (today - timedelta(days=STALE_SOURCE_DAYS)).isoformat()


@dataclass(frozen=True)
class Review:
    """Documents as of one day: the stale ones, most urgent first, as (staleness, days, doc),
    and those with provenance issues, in document order. `entries` keeps what the report builds
    from one document on that day (its answer entry), shared with the filtered reviews `of`
    makes, so a corpus kept for the day builds each entry once."""

    tiered: list[tuple[Staleness, int | None, FreshnessDoc]]
    with_issues: list[FreshnessDoc]
    entries: dict[tuple[str, str], Any] = field(default_factory=dict, compare=False, repr=False)

    def entry(self, kind: str, doc: FreshnessDoc, build: Callable[[], T]) -> T:
        """The `kind` entry of `doc` as of the review's day, built on first use."""
        key = (kind, doc.document_id)
        found: T | None = self.entries.get(key)
        if found is None:
            found = self.entries[key] = build()
        return found

    @cached_property
    def likely_stale(self) -> list[str]:
        return [t[2].document_id for t in self.tiered if t[0] == "likely_stale"]

    @cached_property
    def potentially_stale(self) -> int:
        return sum(t[0] == "potentially_stale" for t in self.tiered)

    def of(self, docs: Sequence[FreshnessDoc]) -> Review:
        """The entries of these documents alone, in the same order."""
        ids = {d.document_id for d in docs}
        return Review(
            [t for t in self.tiered if t[2].document_id in ids],
            [d for d in self.with_issues if d.document_id in ids],
            self.entries,
        )


def review(docs: Sequence[FreshnessDoc], today: date) -> Review:
    day, cutoff = today.toordinal(), provenance_cutoff(today)
    tiered = [(level, days, d) for d in docs for level, days in [tier(d, day)] if level]
    tiered.sort(key=lambda t: (URGENCY[t[0]], PRIORITY.get(t[2].source_org, 9), -(t[1] or 0)))
    return Review(tiered, [d for d in docs if has_provenance_issue(d, cutoff)])


def reviewed(
    rt: Runtime, docs: Sequence[FreshnessDoc], today: date, filtered: bool, degraded: bool
) -> Review:
    """The whole corpus's review is built once per process and day (the index is read-only; at
    100x tiering and sorting 7,500 documents on every call cost ~20 ms), and a filtered call
    keeps its own documents' entries. A degraded answer (the vector copy) is reviewed as is."""
    if degraded:
        return review(docs, today)
    corpus = rt.opa_sql.derived.get_latest(
        "opa_freshness_probe.review", today, lambda: review(all_documents(rt.opa_sql), today)
    )
    return corpus.of(docs) if filtered else corpus


def on_topics(docs: Sequence[FreshnessDoc], topics: Sequence[str]) -> list[FreshnessDoc]:
    """Documents with a topic containing any asked one (case-insensitive), tested on the topics
    text each document carries from decoding (`opa_freshness.topics_text`)."""
    wanted = re.compile("|".join(re.escape(t.lower()) for t in topics))
    return [d for d in docs if wanted.search(d.topics_text)]


def date_conflicts(
    docs: Sequence[FreshnessDoc], vector_docs: Mapping[str, FreshnessDoc]
) -> list[Conflict]:
    """Documents whose date the vector index holds differently from SQL (a stale vector index)."""
    differing = [  # equal values never conflict; `compare` decides the rest
        (d, v)
        for d in docs
        if (v := vector_docs.get(d.document_id)) is not None and v.updated_date != d.updated_date
    ]
    found = (
        compare(
            f"{d.document_id}.updated_date",
            str(d.updated_date or ""),
            str(v.updated_date or ""),
            "SQL date used; rebuild the vector index",
        )
        for d, v in differing
    )
    return [c for c in found if c]
