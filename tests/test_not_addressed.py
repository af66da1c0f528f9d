"""`not_addressed`: a question no found section is about is flagged from the best similarity and
the question's subject words, and its confidence is lowered; an on-topic one is left alone."""

from __future__ import annotations

from dataclasses import replace

from reference_server.scoring.confidence import confidence_from
from reference_server.tools.section_merge import (
    ADDRESSED_SIMILARITY,
    CLEARLY_ADDRESSED_SIMILARITY,
    NOT_ADDRESSED_PENALTY,
    SectionHit,
    not_addressed,
    section_counts,
    unmatched_words,
)
from tests.opa_rows import section_row

CONSENT_TEXT = "Physicians must obtain valid consent before any treatment."


def _hit(similarity: float | None, *, sql: bool = True) -> SectionHit:
    row = section_row(
        "cpso-consent:s01",
        section_idx=1,
        section_heading="Obtaining Consent",
        text=CONSENT_TEXT,
        policy_level="expectation",
        document_title="Consent to Treatment",
        source_url="https://example.org",
        topics=("consent", "capacity"),
    )
    return SectionHit(
        row.section_id,
        row.section_id,
        row,
        sql_rank=1 if sql else None,
        vector_rank=1 if similarity is not None else None,
        vector_similarity=similarity,
    )


BETWEEN = (ADDRESSED_SIMILARITY + CLEARLY_ADDRESSED_SIMILARITY) / 2


def test_nothing_found_or_far_passages_are_not_addressed() -> None:
    assert not_addressed("consent for treatment", [])
    assert not_addressed("consent for treatment", [_hit(ADDRESSED_SIMILARITY - 0.01)])


def test_a_close_passage_addresses_the_question_whatever_its_words() -> None:
    assert not not_addressed("flying drones", [_hit(CLEARLY_ADDRESSED_SIMILARITY)])


def test_between_the_bars_a_subject_word_no_section_uses_decides() -> None:
    assert not not_addressed("obtaining consent for treatment", [_hit(BETWEEN)])
    assert not_addressed("consent for flying drones", [_hit(BETWEEN)])


def test_without_the_vector_path_most_subject_words_must_be_matched() -> None:
    assert not not_addressed("valid consent treatment", [_hit(None)])
    assert not_addressed("sourdough bread consent", [_hit(None)])


def test_an_unaddressed_answer_carries_the_penalty() -> None:
    hits = [_hit(0.8)]
    addressed = confidence_from(section_counts(hits), 0)
    flagged = confidence_from(section_counts(hits, addressed=False), 0)
    assert addressed == 0.9  # one SQL hit corroborated by the vector path: the base
    assert flagged == round(0.9 - NOT_ADDRESSED_PENALTY, 4)


def test_a_short_subject_word_must_be_found_as_a_whole_word() -> None:
    # the section names consent and treatment, but no cat or dog: the subject is unmatched
    assert not_addressed("consent for my cat", [_hit(BETWEEN)])
    assert not_addressed("treatment of a dog", [_hit(BETWEEN)])


def test_a_short_word_inside_a_longer_one_is_not_a_match() -> None:
    row = replace(_hit(BETWEEN).row, text="Indicate the consent given before treatment.")
    hit = SectionHit(row.section_id, row.section_id, row, vector_rank=1, vector_similarity=BETWEEN)
    assert unmatched_words("consent for a cat", [hit]) == ["cat"]
    cat = replace(row, text="Consent for the cat was given.")
    hit = SectionHit(cat.section_id, cat.section_id, cat, vector_rank=1, vector_similarity=BETWEEN)
    assert unmatched_words("consent for a cat", [hit]) == []
    assert not not_addressed("consent for a cat", [hit])


def test_a_lower_case_short_word_is_not_the_acronym_spelt_in_capitals() -> None:
    row = replace(_hit(BETWEEN).row, text="Vaccines lower the COPD Assessment Test (CAT) score.")
    hit = SectionHit(row.section_id, row.section_id, row, vector_rank=1, vector_similarity=BETWEEN)
    assert unmatched_words("Which vaccines does an indoor cat need?", [hit]) == [
        "indoor",
        "cat",
        "need",
    ]
    assert "cat" not in unmatched_words("Which vaccines change the CAT score?", [hit])
