"""The topic boost: a document whose topics the question names whole ranks ahead of one that
shares a single word of them, without changing hits whose topics the question does not name."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from reference_server.retrieval.opa_section_rows import SectionRow
from reference_server.tools.section_merge import TOPIC_BOOST, SectionHit, boost, topic_coverage
from tests.opa_rows import section_row

TODAY = date(2026, 11, 25)
QUESTION = "What should I know about benzodiazepines, tapering and z-drugs in practice?"
# subject words, stopwords ('what', 'should', 'i', 'about', 'and', 'in') dropped:
# know, benzodiazepines, tapering, z, drugs, practice
SUBJECT_WORDS = 6


def _row(topics: tuple[str, ...], document_id: str = "doc") -> SectionRow:
    return section_row(
        f"{document_id}:s01",
        section_idx=1,
        section_heading="Overview",
        text="Guidance text.",
        source_org="cep",
        document_type="clinical_tool",
        document_title="A tool",
        source_url="https://example.org",
        topics=topics,
    )


def test_topics_said_whole_cover_their_words_plurals_meeting_singulars() -> None:
    topics = ("benzodiazepine", "tapering", "z-drugs", "older adults")
    # benzodiazepine(s), tapering, z, drugs: 4 of the 6 subject words
    assert topic_coverage(QUESTION, topics) == pytest.approx(4 / SUBJECT_WORDS)


def test_a_topic_only_partly_in_the_question_covers_nothing() -> None:
    assert topic_coverage(QUESTION, ("benzodiazepine receptor agonists", "sleep")) == 0.0
    assert topic_coverage(QUESTION, ()) == 0.0


def test_a_question_of_stopwords_only_has_no_coverage() -> None:
    assert topic_coverage("what is the", ("the",)) == 0.0


def test_the_document_naming_more_of_the_question_is_boosted_more() -> None:
    own = SectionHit("a:s01", "a:s01", _row(("benzodiazepines", "tapering", "z-drugs"), "a"))
    neighbour = SectionHit("b:s01", "b:s01", _row(("insomnia", "z-drugs"), "b"))
    unrelated = SectionHit("c:s01", "c:s01", _row(("consent",), "c"))
    assert boost(own, QUESTION, TODAY) == pytest.approx(1 + TOPIC_BOOST * 4 / SUBJECT_WORDS)
    assert boost(neighbour, QUESTION, TODAY) == pytest.approx(1 + TOPIC_BOOST * 2 / SUBJECT_WORDS)
    assert boost(unrelated, QUESTION, TODAY) == 1.0


def test_the_topic_boost_composes_with_the_spec_boosts() -> None:
    row = replace(_row(("z-drugs",)), is_superseded=True)
    hit = SectionHit(row.section_id, row.section_id, row)
    assert boost(hit, QUESTION, TODAY) == pytest.approx(0.3 * (1 + TOPIC_BOOST * 2 / SUBJECT_WORDS))
