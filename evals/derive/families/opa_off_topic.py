"""Questions on subjects no OPA document covers: the retrieval tools must say so (the
`no_relevant_document` flag), never answer with unrelated guidance as if it answered.

The confidence of such an answer is not bounded here: it is the probability that the answer
("no document addresses this") is right, which calibration measures (evals/read/calibration.py);
the spec's evidence score, lowered to at most 0.5 for a flagged answer, is the reference
server's `confidence_basis.spec_score`, not a published field every backend has.

The subjects are written here (they are what the corpus lacks, so no corpus row can give them);
the corpus decides whether each may be asked: a question any of whose subject words a document
uses in its title, topics or headings is skipped (counted), so documents added later never turn
a covered subject into an 'off-topic' case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.registry import family, skip
from evals.run.scenario import Scenario

# (key, question, the words that carry its subject)
QUESTIONS = (
    ("veterinary-dosing", "What is the amoxicillin dose for a 20 kg dog?", ("dog", "veterinary")),
    ("cat-vaccines", "Which vaccines does an indoor cat need each year?", ("cat", "feline")),
    ("tax-filing", "How do I file my corporate income tax return?", ("tax", "corporate")),
    ("hst-remittance", "When is the quarterly HST remittance due?", ("hst", "remittance")),
    ("car-repair", "How do I replace the timing belt on a Honda Civic?", ("timing belt", "honda")),
    ("brake-pads", "How often should car brake pads be changed?", ("brake", "car")),
    ("mortgage", "What are current mortgage refinancing rates?", ("mortgage", "refinancing")),
    ("sourdough", "What is a good sourdough bread recipe?", ("sourdough", "bread", "recipe")),
    ("faucet", "How do I fix a leaking kitchen faucet?", ("faucet", "plumbing")),
    (
        "fictitious-drone-policy",
        "What does the CPSO policy on physicians flying drones require?",
        ("drone", "drones", "flying"),
    ),
    (
        "fictitious-interplanetary",
        "What is the CPSO policy on interplanetary telemedicine licences?",
        ("interplanetary", "planet"),
    ),
    (
        "fictitious-tattoo-policy",
        "What are the CPSO expectations for physicians running tattoo parlours?",
        ("tattoo", "parlour"),
    ),
)


def _corpus_words(corpus: Corpus) -> str:
    """Every document's title, topics and headings, lower case: what a document is about."""
    parts = []
    for doc in corpus.opa_documents():
        parts.append(str(doc.data.get("title") or ""))
        parts += [str(t) for t in doc.data.get("topics") or []]
        parts += [s.heading for s in doc.sections]
    return " " + " ".join(re.findall(r"[a-z0-9]+", " ".join(parts).casefold())) + " "


def _off_topic(corpus: Corpus, name: str, tool: str) -> Iterator[Scenario]:
    about = _corpus_words(corpus)
    for key, question, subject in QUESTIONS:
        if any(f" {word} " in about for word in subject):
            skip(name, "a document names this subject")
            continue
        yield derived_case(
            name,
            key,
            tool=tool,
            args={"query": question},
            expect=[
                {"check": "equals", "path": "no_relevant_document", "value": True},
            ],
            title=f"{tool}: '{question}' is flagged as addressed by no document",
            cites=False,  # no document covers it: nothing to cite
            source=(
                f"subject words {list(subject)} appear in no title, topic or heading of "
                "corpus/opa/*/*.yaml (checked at derivation)"
            ),
        )


@family("opa.off_topic", tool="opa.search_sections")
def off_topic(corpus: Corpus) -> Iterator[Scenario]:
    """Questions on subjects no document's title, topics or headings name, searched: flagged as
    addressed by no document."""
    return _off_topic(corpus, "opa.off_topic", "opa.search_sections")


@family("opa.off_topic_policy", tool="opa.policy_check")
def off_topic_policy(corpus: Corpus) -> Iterator[Scenario]:
    """The same questions asked of opa.policy_check: flagged."""
    return _off_topic(corpus, "opa.off_topic_policy", "opa.policy_check")
