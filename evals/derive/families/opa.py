"""OPA guidance cases over whatever documents the OPA corpus holds: every section heading (as
written and paraphrased) found by search, every section read back by id, every CPSO section's
expectation/advice level, each document found by its subject, and document types and dates.

Expected values come from the corpus files (corpus/opa/<org>/*.yaml, their `derived_from`
official file named in each case's source), never from the tools' answers. Rows that cannot make
a fair case (a heading several documents share, a CPSO section the source words neither way) are
skipped with a counted reason (`registry.skip`).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus, OpaDocument, OpaSection
from evals.derive.registry import family, skip
from evals.run.public_keys import SECTION_SIGN
from evals.run.scenario import Scenario

SEARCH = "opa.search_sections"
GET = "opa.get_section"
POLICY = "opa.policy_check"
FRESHNESS = "opa.freshness_probe"
SEARCHED_ORGS = ("cpso", "cep", "pho")  # the publishers whose section headings are searched
TOP = 5
POLICY_RESULTS = 20
TOPIC_WORDS = 3
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "their",
        "to",
        "when",
        "with",
        "who",
        "what",
    ]
)

# Deterministic paraphrase rules: a clinician's everyday word for the heading's word, then a
# question form. Words are matched whole and case-folded; the first rule that applies is used.
SYNONYMS = {
    "physicians": "doctors",
    "physician": "doctor",
    "patients": "people",
    "patient": "person",
    "obtaining": "getting",
    "requirements": "rules",
    "responsibilities": "duties",
    "documentation": "charting",
    "records": "charts",
    "managing": "handling",
    "management": "handling",
    "ending": "terminating",
    "providing": "giving",
    "assessment": "evaluation",
    "treatment": "therapy",
    "communication": "talking",
    "information": "details",
    "prescribing": "writing prescriptions for",
    "medications": "drugs",
    "medication": "drug",
    "reporting": "notifying",
    "disclosure": "telling",
    "virtual": "remote",
    "coverage": "cover",
    "practice": "office",
    "appropriate": "proper",
    "considerations": "points to weigh",
    "overview": "summary",
}
QUESTION_FORMS = (
    "what is the guidance on {h}?",
    "{h} - what is expected?",
    "how should I approach {h}",
    "looking for guidance about {h}",
)


def _choice(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.casefold()))


def documents(corpus: Corpus, orgs: tuple[str, ...] | None = None) -> list[OpaDocument]:
    return [d for d in corpus.opa_documents() if orgs is None or d.org in orgs]


def _any_document(urls: list[str]) -> dict[str, Any]:
    """Some section comes from one of these documents, named by their official URLs."""
    return {
        "check": "any_item",
        "path": "sections",
        "item": {"check": "mentions", "path": "source_url", "value": [sorted(urls)]},
    }


def section_name(doc: OpaDocument, section: OpaSection) -> str:
    """A section by public keys: its document's official URL and its own heading."""
    return f"{doc.data['source_url']} {SECTION_SIGN} {section.heading}"


# ------------------------------------------------------------------------------ headings
def _content(text: str) -> set[str]:
    """A heading's subject words, crudely stemmed (first five letters), stopwords dropped."""
    return {w[:5] for w in re.findall(r"[a-z0-9]+", text.casefold()) if w not in STOPWORDS}


def generic(heading: str, elsewhere: set[str]) -> bool:
    """A heading that names no subject on its own: one or two words, each also a word of other
    documents' headings ('Screening', 'Referrals', 'Treatment options', 'Tapering steps')."""
    words = _content(heading)
    return len(words) <= 2 and words <= elsewhere


def unique_headings(corpus: Corpus, name: str) -> Iterator[tuple[OpaDocument, OpaSection, str]]:
    """(document, section, heading) for every section heading of the searched publishers that
    names one document's subject: a heading several documents share ('Definitions', 'Purpose')
    cannot say which document is meant, nor can a short heading made of words other documents'
    headings use (`generic`); both are skipped (counted)."""
    docs = documents(corpus, SEARCHED_ORGS)
    owners: dict[str, set[str]] = defaultdict(set)
    for doc in corpus.opa_documents():
        for section in doc.sections:
            owners[_norm(section.heading)].add(doc.document_id)
    words_of: dict[str, set[str]] = defaultdict(set)
    for doc in corpus.opa_documents():
        for section in doc.sections:
            words_of[doc.document_id] |= _content(section.heading)
    for doc in docs:
        seen: set[str] = set()
        elsewhere = set().union(*(w for d, w in words_of.items() if d != doc.document_id))
        for section in doc.sections:
            key = _norm(section.heading)
            if not key:
                skip(name, "section without a heading")
            elif len(owners[key]) > 1:
                skip(name, "heading shared by several documents (names no one document)")
            elif generic(section.heading, elsewhere):
                skip(name, "heading of one or two words other documents' headings also use")
            elif key in seen:
                skip(name, "heading repeated within its document (asked once)")
            else:
                seen.add(key)
                yield doc, section, section.heading


def paraphrase(key: str, heading: str) -> str:
    """The heading as a clinician might ask about it: lower case, punctuation dropped, an
    everyday word for the first word the synonym table knows, 'X and Y' turned round, and one of
    QUESTION_FORMS (chosen by the section id, not by what the tool answers)."""
    words = re.findall(r"[A-Za-z0-9']+", heading.casefold())
    for i, word in enumerate(words):
        if word in SYNONYMS:
            words[i] = SYNONYMS[word]
            break
    text = " ".join(words)
    if " and " in text and text.count(" and ") == 1:
        left, right = text.split(" and ")
        text = f"{right} and {left}"
    return QUESTION_FORMS[_choice(key, len(QUESTION_FORMS))].format(h=text)


def _heading_cases(corpus: Corpus, name: str, phrase: bool) -> Iterator[Scenario]:
    for doc, section, heading in unique_headings(corpus, name):
        query = paraphrase(section.section_id, heading) if phrase else heading
        args: dict[str, Any] = {"query": query, "n_results": TOP}
        if doc.data.get("is_superseded"):
            args["include_superseded"] = True
        yield derived_case(
            name,
            section.section_id,
            tool=SEARCH,
            args=args,
            expect=[_any_document([doc.data["source_url"]])],
            title=f"'{query}' finds {doc.document_id} in the first {TOP}",
            source=doc.source(f"source_url, sections[{section.position}].heading"),
            relevant={section_name(doc, section): 3},
        )


@family("opa.section_heading", tool=SEARCH)
def section_heading(corpus: Corpus) -> Iterator[Scenario]:
    """Every CPSO, CEP and PHO section heading naming one document, searched as written: that
    document in the first five."""
    return _heading_cases(corpus, "opa.section_heading", phrase=False)


@family("opa.section_paraphrase", tool=SEARCH)
def section_paraphrase(corpus: Corpus) -> Iterator[Scenario]:
    """The same headings paraphrased by fixed rules (synonyms, word order, question form): that
    document in the first five."""
    return _heading_cases(corpus, "opa.section_paraphrase", phrase=True)


# ------------------------------------------------------------------------------ by id
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
            expect: list[dict[str, Any]] = [
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
            lookup = {
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


# ------------------------------------------------------------------------------ policy level
def expected_level(doc: OpaDocument, section: OpaSection) -> str | None:
    """The level the source gives a CPSO section: every section of an Advice to the Profession
    document is advice; a policy section carries the level its source wording gave it
    (`policy_level`, from 'must'/'shall' -> expectation, 'should'/'advised' -> advice); None when
    the source words it neither way."""
    if doc.data["document_type"] == "advice":
        return "advice"
    level = section.data.get("policy_level")
    return str(level) if level in ("expectation", "advice") else None


@family("opa.policy_level", tool=POLICY)
def policy_level(corpus: Corpus) -> Iterator[Scenario]:
    """Every CPSO section asked by its heading and document: listed with the level its source
    wording gives it (expectation or advice)."""
    name = "opa.policy_level"
    for doc in documents(corpus, ("cpso",)):
        if doc.data.get("is_superseded"):
            skip(name, "superseded document (policy_check answers current policy)")
            continue
        levels: dict[str, set[str | None]] = defaultdict(set)
        for section in doc.sections:
            levels[_norm(section.heading)].add(expected_level(doc, section))
        for section in doc.sections:
            level = expected_level(doc, section)
            if level is None:
                skip(name, "policy section worded neither as expectation nor as advice")
                continue
            if len(levels[_norm(section.heading)]) > 1:
                skip(name, "heading repeated in its document with another level")
                continue
            title = str(doc.data["title"])
            query = f"{section.heading} ({title})"
            yield derived_case(
                name,
                section.section_id,
                tool=POLICY,
                args={"query": query, "n_results": POLICY_RESULTS},
                expect=[
                    {
                        "check": "contains_record",
                        "path": "policies",
                        "value": {
                            "policy_title": title,
                            "section_heading": section.heading,
                            "policy_level": level,
                        },
                    }
                ],
                title=f"{section.section_id} '{section.heading}' is {level}",
                source=doc.source(f"document_type, sections[{section.position}].policy_level"),
            )


# ------------------------------------------------------------------------------ subject
def _companions(docs: list[OpaDocument]) -> dict[str, set[str]]:
    """Each document with its companions (a policy and its Advice to the Profession share a
    subject, so either answers a question on it)."""
    out: dict[str, set[str]] = {d.document_id: {d.document_id} for d in docs}
    for d in docs:
        other = d.data.get("companion_of")
        if other in out:
            out[d.document_id].add(str(other))
            out[str(other)].add(d.document_id)
    return out


def subject_topics(doc: OpaDocument, frequency: Counter[str]) -> list[str]:
    """The document's TOPIC_WORDS most distinctive topics (fewest documents carry them), in the
    order the file lists them."""
    topics = [str(t) for t in doc.data.get("topics") or []]
    rarest = sorted(range(len(topics)), key=lambda i: (frequency[topics[i].casefold()], i))
    return [topics[i] for i in sorted(rarest[:TOPIC_WORDS])]


@family("opa.document_topic", tool=SEARCH)
def document_topic(corpus: Corpus) -> Iterator[Scenario]:
    """Each current document's subject asked from its topics (not its title): that document (or
    its policy/advice companion) first."""
    name = "opa.document_topic"
    docs = [d for d in corpus.opa_documents()]
    frequency: Counter[str] = Counter(
        str(t).casefold() for d in docs for t in set(d.data.get("topics") or [])
    )
    companions = _companions(docs)
    url_of = {d.document_id: str(d.data["source_url"]) for d in docs}
    asked: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for doc in docs:
        asked[tuple(t.casefold() for t in subject_topics(doc, frequency))].append(doc.document_id)
    for doc in docs:
        topics = subject_topics(doc, frequency)
        if doc.data.get("is_superseded"):
            skip(name, "superseded document (its successor answers first by design)")
            continue
        if len(topics) < 2:
            skip(name, "fewer than two topics")
            continue
        if set(asked[tuple(t.casefold() for t in topics)]) - companions[doc.document_id]:
            skip(name, "another document has the same distinctive topics")
            continue
        query = f"What should I know about {', '.join(topics[:-1])} and {topics[-1]} in practice?"
        ids = sorted(companions[doc.document_id])
        urls = sorted(url_of[i] for i in ids if i in url_of)
        yield derived_case(
            name,
            doc.document_id,
            tool=SEARCH,
            args={"query": query},
            expect=[{"check": "mentions", "path": "sections[0].source_url", "value": [urls]}],
            title=f"'{query}' answers {doc.document_id} first",
            source=doc.source("topics") + (f"; companions {ids}" if len(ids) > 1 else ""),
        )


# ------------------------------------------------------------------------------ freshness
@family("opa.document_freshness", tool=FRESHNESS)
def document_freshness(corpus: Corpus) -> Iterator[Scenario]:
    """Each document checked by id: one document checked; when listed as stale, the last-updated
    date the corpus states; a superseded document always listed as superseded, with its
    successor."""
    for doc in corpus.opa_documents():
        updated = _date(doc.data.get("updated_date"))
        expect: list[dict[str, Any]] = [
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
