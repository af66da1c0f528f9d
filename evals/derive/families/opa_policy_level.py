"""OPA cases on every CPSO section's level: asked by its heading and document, opa.policy_check
lists it as an expectation or as advice, as its source wording gives it. Sections the source words
neither way, or whose heading repeats in its document with another level, are skipped (counted).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus, OpaDocument, OpaSection
from evals.derive.families.opa import POLICY, _norm, documents
from evals.derive.registry import family, skip
from evals.run.scenario import Scenario

POLICY_RESULTS = 20


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
