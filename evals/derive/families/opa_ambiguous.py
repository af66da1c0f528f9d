"""Questions that name no one document: a section heading several documents share ('Referral (if
required)', 'Definitions'), or a short heading made only of words other documents' headings use
('Treatment options'), asked as written.

opa.section_heading skips these rows (they cannot say which document is meant); here they are the
point. Each (document, heading) pair is one case: is that document among the five sections shown
(search), or listed with that heading (policy_check)? A heading shared by more documents than
the answer shows cannot be right for all of them, so these cases measure whether a backend's
confidence falls when the question is ambiguous (evals/read/calibration.py), not its retrieval.
Expected values come from the corpus files (corpus/opa/<org>/*.yaml), never from the tools.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus, OpaDocument, OpaSection
from evals.derive.families.opa import (
    POLICY,
    SEARCH,
    SEARCHED_ORGS,
    TOP,
    _any_document,
    _content,
    _norm,
    documents,
    generic,
    section_name,
)
from evals.derive.registry import family, skip
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

# Headings shared by more documents than this are boilerplate ('Definitions', 'Purpose'): a few
# of their owners stand for all of them, so the family does not grow with the corpus's boilerplate.
MAX_OWNERS_ASKED = 4
POLICY_SHOWN = 3  # opa.policy_check's default n_results: what a clinician reads first


def ambiguous_headings(
    corpus: Corpus, name: str, orgs: tuple[str, ...]
) -> Iterator[tuple[OpaDocument, OpaSection, int, str]]:
    """(document, section, documents sharing it, why ambiguous) for every heading of `orgs`'s
    current documents that names no one document; a shared heading is asked of at most
    MAX_OWNERS_ASKED of its owners (the first by document id), the others skipped (counted)."""
    owners: dict[str, set[str]] = defaultdict(set)
    words_of: dict[str, set[str]] = defaultdict(set)
    for doc in corpus.opa_documents():
        if doc.data.get("is_superseded"):
            continue
        for section in doc.sections:
            owners[_norm(section.heading)].add(doc.document_id)
            words_of[doc.document_id] |= _content(section.heading)
    for doc in documents(corpus, orgs):
        if doc.data.get("is_superseded"):
            continue
        seen: set[str] = set()
        elsewhere = set().union(*(w for d, w in words_of.items() if d != doc.document_id))
        for section in doc.sections:
            key = _norm(section.heading)
            if not key or key in seen:
                continue
            seen.add(key)
            shared = owners[key]
            if len(shared) > 1:
                if doc.document_id not in sorted(shared)[:MAX_OWNERS_ASKED]:
                    skip(name, f"heading shared by more than {MAX_OWNERS_ASKED} documents")
                    continue
                yield doc, section, len(shared), f"shared by {len(shared)} documents"
            elif generic(section.heading, elsewhere):
                yield doc, section, 1, "short heading made of other documents' heading words"


@family("opa.shared_heading", tool=SEARCH)
def shared_heading(corpus: Corpus) -> Iterator[Scenario]:
    """Every ambiguous heading of the searched publishers, asked as written: is the document
    it came from among the first five? (Right for at most five of the documents sharing it.)"""
    name = "opa.shared_heading"
    for doc, section, _n, why in ambiguous_headings(corpus, name, SEARCHED_ORGS):
        args: Arguments = {"query": section.heading, "n_results": TOP}
        yield derived_case(
            name,
            section.section_id,
            tool=SEARCH,
            args=args,
            expect=[_any_document([doc.data["source_url"]])],
            title=f"'{section.heading}' ({why}): is {doc.document_id} in the first {TOP}?",
            source=doc.source(
                f"source_url, sections[{section.position}].heading ({why} in corpus/opa)"
            ),
            relevant={section_name(doc, section): 3},
        )


@family("opa.shared_heading_policy", tool=POLICY)
def shared_heading_policy(corpus: Corpus) -> Iterator[Scenario]:
    """Every ambiguous CPSO heading asked of opa.policy_check as written: is that document's
    section among the three listed (title and heading)?"""
    name = "opa.shared_heading_policy"
    for doc, section, _n, why in ambiguous_headings(corpus, name, ("cpso",)):
        yield derived_case(
            name,
            section.section_id,
            tool=POLICY,
            args={"query": section.heading, "n_results": POLICY_SHOWN},
            expect=[
                {
                    "check": "contains_record",
                    "path": "policies",
                    "value": {
                        "policy_title": str(doc.data["title"]),
                        "section_heading": section.heading,
                    },
                }
            ],
            title=f"'{section.heading}' ({why}): is {doc.document_id}'s among {POLICY_SHOWN}?",
            source=doc.source(f"title, sections[{section.position}].heading ({why} in corpus/opa)"),
        )
