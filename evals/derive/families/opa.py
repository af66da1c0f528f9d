"""OPA search cases over whatever documents the OPA corpus holds: every section heading (as
written and paraphrased) found by search, and each document found by its subject; the vocabulary
the OPA families share (document lists, heading words, public section names). Sections read by id,
document freshness and CPSO policy levels have their own modules (opa_by_id.py,
opa_policy_level.py).

Expected values come from the corpus files (corpus/opa/<org>/*.yaml, their `derived_from`
official file named in each case's source), never from the tools' answers. Rows that cannot make
a fair case (a heading several documents share, a document whose topics another shares) are
skipped with a counted reason (`registry.skip`).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import Corpus, OpaDocument, OpaSection
from evals.derive.registry import family, skip
from evals.run.public_keys import SECTION_SIGN
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

SEARCH = "opa.search_sections"
POLICY = "opa.policy_check"
SEARCHED_ORGS = ("cpso", "cep", "pho")  # the publishers whose section headings are searched
TOP = 5
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


def _any_document(urls: list[str]) -> ExpectSpec:
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
        args: Arguments = {"query": query, "n_results": TOP}
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
