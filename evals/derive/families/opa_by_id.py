"""OPA cases that name a section or a document by its id and check what the corpus states about
it: every section read back by id (opa.get_section), every document's freshness
(opa.freshness_probe), with its type and dates as the source states them.

Expected values come from the corpus files (corpus/opa/<org>/*.yaml), never from the tools.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evals.derive.case import ExpectSpec, LookupSpec, derived_case
from evals.derive.corpus import Corpus, OpaSection
from evals.derive.families.opa import SEARCH
from evals.derive.registry import family
from evals.run.scenario import Scenario

GET = "opa.get_section"
FRESHNESS = "opa.freshness_probe"


def _date(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _lookup_query(title: str, section: OpaSection) -> str:
    """What a reader who holds the source would type to find one section: the document's
    title, the section's heading and the opening words of its text (a heading alone is often
    shared by many sections: "Background", "Policy")."""
    opening = " ".join(str(section.data.get("text") or "").split()[:25])
    return f"{title}: {section.heading}. {opening}"[:900]


@family("opa.section_by_id", tool=GET)
def section_by_id(corpus: Corpus) -> Iterator[Scenario]:
    """Every section of every document read back by its id: the id is the backend's own, found
    by asking its search for the document's title and the heading (the section whose document
    has the official URL and whose heading is the source's); then its heading, its document's
    URL, type and dates as the source states them."""
    for doc in corpus.opa_documents():
        url = doc.data["source_url"]
        for section in doc.sections:
            expect: list[ExpectSpec] = [
                {
                    "check": "equals",
                    "path": "section.section_heading",
                    "value": section.heading,
                    "ignore_case": True,
                },
                {"check": "equals", "path": "document.source_url", "value": url},
                {
                    "check": "equals",
                    "path": "document.document_type",
                    "value": doc.data["document_type"],
                },
            ]
            for field in ("updated_date", "effective_date", "published_date"):
                expect.append(
                    {
                        "check": "equals",
                        "path": f"document.{field}",
                        "value": _date(doc.data[field]),
                    }
                )
            lookup: LookupSpec = {
                "tool": SEARCH,
                "args": {
                    "query": _lookup_query(doc.data["title"], section),
                    "source_org": doc.data["source_org"],
                    "include_superseded": True,
                    "n_results": 20,
                },
                "path": "sections[*]",
                "key": [url, section.heading],
                "id": "section_id",
                "into": "section_id",
            }
            yield derived_case(
                "opa.section_by_id",
                section.section_id,
                tool=GET,
                args={},
                ids_from=lookup,
                expect=expect,
                title=f"The section '{section.heading}' of {doc.data['title']} reads back by id",
                source=doc.source(
                    f"source_url, sections[{section.position}].heading, document_type, "
                    "updated_date, effective_date, published_date"
                ),
            )


@family("opa.document_freshness", tool=FRESHNESS)
def document_freshness(corpus: Corpus) -> Iterator[Scenario]:
    """Each document checked by id: one document checked; when listed as stale, the last-updated
    date the corpus states; a superseded document always listed as superseded, with its
    successor."""
    for doc in corpus.opa_documents():
        updated = _date(doc.data.get("updated_date"))
        expect: list[ExpectSpec] = [
            {"check": "equals", "path": "documents_checked", "value": 1},
            {
                "check": "every_item",
                "path": "stale_documents",
                "allow_empty": True,
                "item": {"check": "equals", "path": "last_updated", "value": updated},
            },
            {
                "check": "every_item",
                "path": "stale_documents",
                "allow_empty": True,
                "item": {"check": "equals", "path": "document_id", "value": doc.document_id},
            },
        ]
        if doc.data.get("is_superseded"):
            expect.append(
                {
                    "check": "contains_record",
                    "path": "stale_documents",
                    "value": {
                        "document_id": doc.document_id,
                        "staleness": "superseded",
                        "superseded_by": doc.data.get("superseded_by"),
                    },
                }
            )
        yield derived_case(
            "opa.document_freshness",
            doc.document_id,
            tool=FRESHNESS,
            args={"document_ids": [doc.document_id]},
            expect=expect,
            title=f"{doc.document_id} ({doc.data['document_type']}) last updated {updated}",
            source=doc.source("updated_date, is_superseded, superseded_by"),
        )
