"""Work done once per call or per process instead of per hit: the remembered helpers answer as
the plain computation does, and one question's values never reach another's."""

from __future__ import annotations

from datetime import date

import pytest

from reference_server import catalog
from reference_server.retrieval import odb_names, word_spans
from reference_server.retrieval.ohip_schedule import (
    LINE_RE,
    described_overlaps,
    overlap,
    passage_fees,
    query_terms,
    schedule_lines,
    stems,
)
from reference_server.retrieval.vector import VectorHit
from reference_server.tools.schedule.merge import LIMIT_WORDS, _sentences, _split_sentences
from reference_server.tools.section_merge import (
    Question,
    SectionHit,
    _topic_phrase,
    boost,
    topic_coverage,
)
from tests.opa_rows import section_row

TODAY = date(2026, 11, 25)
# words: tapering, benzodiazepines, and, z, drugs; 'and' is a stopword: four subject words
TAPERING = "Tapering benzodiazepines and z-drugs"
SLEEP = "sleep hygiene for older adults"  # subject words: sleep, hygiene, older, adults


def test_topic_phrase_is_the_topics_words_singular() -> None:
    assert _topic_phrase("Z-Drugs") == ("z", "drug")
    assert _topic_phrase("Benzodiazepines") == ("benzodiazepine",)
    assert _topic_phrase("glass") == ("glass",)  # 'ss' is no plural
    assert _topic_phrase("Z-Drugs") == _topic_phrase("z drug")


def test_topic_coverage_is_each_questions_own_with_topics_remembered() -> None:
    topics = ("z-drugs", "benzodiazepine")
    assert topic_coverage(TAPERING, topics) == pytest.approx(3 / 4)  # benzodiazepine, z, drug
    assert topic_coverage(SLEEP, topics) == 0.0
    assert topic_coverage(SLEEP, ("sleep hygiene",)) == pytest.approx(2 / 4)
    # the same topics again, after another question: the first question's value, unchanged
    assert topic_coverage(TAPERING, topics) == pytest.approx(3 / 4)
    assert topic_coverage(TAPERING, ("sleep hygiene",)) == 0.0


def test_question_read_once_boosts_as_the_question_text() -> None:
    row = section_row(
        "doc:s01",
        section_idx=1,
        section_heading="Overview",
        text="Guidance on tapering benzodiazepines and z-drugs in older adults.",
        source_org="cpso",
        document_type="policy",
        document_title="Benzodiazepines and z-drugs",
        source_url="https://example.org",
        topics=("z-drugs",),
        policy_level="expectation",
    )
    hit = SectionHit(row.section_id, row.section_id, row)
    for text in (TAPERING, SLEEP):
        assert boost(hit, Question.of(text), TODAY) == boost(hit, text, TODAY)
    # TAPERING: topics 2 of 4 words, exact phrase in the text, title holds 2 of its 3 terms (tapering, benzodiazepines, drugs),
    # a CPSO expectation; no dates, not superseded
    assert boost(hit, TAPERING, TODAY) == pytest.approx((1 + 0.8 * 2 / 4) * 1.5 * 1.3 * 1.2)
    assert boost(hit, SLEEP, TODAY) == pytest.approx(1.2)  # only the expectation


PASSAGE = (
    "Consultations and visits - General practice\n"
    "A001 Minor assessment: $23.75 (per patient per day)\n"
    "not a fee line\n"
    "A007 Intermediate assessment: $37.95\n"
    "A001 Minor assessment: $24.10 [fee differs between tables]"
)


def _hit(doc_type: str, text: str = PASSAGE) -> VectorHit:
    return VectorHit("ohip:x", text, {"doc_type": doc_type}, 0.5)


def test_schedule_lines_parse_once_as_the_line_pattern_does() -> None:
    lines = schedule_lines(_hit("subsection"))
    plain = [LINE_RE.match(line) for line in PASSAGE.splitlines()[1:]]
    assert list(lines) == ["A001", "A007"]
    assert [m["fee"] for m in lines["A001"]] == ["$23.75", "$24.10"]
    assert lines["A001"][0]["extra"] == "per patient per day"
    by_code: dict[str, list[str]] = {}
    for m in plain:
        if m:
            by_code.setdefault(m["code"], []).append(m.group(0))
    assert {code: [m.group(0) for m in found] for code, found in lines.items()} == by_code
    assert schedule_lines(_hit("subsection")) is lines  # parsed once
    assert schedule_lines(_hit("commentary")) == {}
    with pytest.raises(TypeError):
        lines["A999"] = ()  # type: ignore[index]  # shared between calls: read-only


def test_schedule_lines_of_another_passage_are_its_own() -> None:
    other = "Title\nC124 Day of discharge: $61.15"
    assert list(schedule_lines(_hit("subsection", other))) == ["C124"]
    assert list(schedule_lines(_hit("subsection"))) == ["A001", "A007"]


@pytest.mark.parametrize(
    "q", ["minor assessment", "intermediate assessments per patient", "discharge day", ""]
)
def test_described_overlaps_are_each_lines_overlap(q: str) -> None:
    terms = query_terms(q)
    lines = schedule_lines(_hit("subsection"))
    plain = {code: overlap(terms, stems(found[0]["desc"])) for code, found in lines.items()}
    assert described_overlaps(_hit("subsection"), terms) == {c: v for c, v in plain.items() if v}
    assert described_overlaps(_hit("commentary"), terms) == {}


def test_described_overlaps_weigh_the_questions_words() -> None:
    # 'minor' and 'assessment' are both in A001's description, only 'assessment' in A007's
    assert described_overlaps(_hit("subsection"), {"minor": 1.0, "assessment": 0.5}) == {
        "A001": 1.5,
        "A007": 0.5,
    }
    assert described_overlaps(_hit("subsection"), {"discharge": 1.0}) == {}


def test_passage_fees_read_each_codes_own_commentary_fees() -> None:
    note = VectorHit(
        "ohip:c",
        "Title\nCodes: C124\nBill C124 (61.15) or C122, 23.10; not C12 (9.99).",
        {"doc_type": "commentary"},
        0.5,
    )
    assert passage_fees("C124", [note]) == [61.15]
    assert passage_fees("C122", [note]) == [23.10]
    assert passage_fees("A001", [note, _hit("subsection")]) == [23.75, 24.10]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("ATORVASTATIN CALCIUM", "atorvastatin"),
        ("X HCL & Y", "x & y"),
        ("Amoxicillin (Sugar Reduced)", "amoxicillin"),
        ("LITHIUM CARBONATE", "lithium carbonate"),  # an ion first keeps its salt word
        ("", ""),
    ],
)
def test_remembered_ingredient_key_is_the_catalogs(name: str, key: str) -> None:
    assert odb_names.ingredient_key(name) == key
    assert odb_names.ingredient_key(name) == catalog.ingredient_key(name)


def test_spans_keep_a_name_ending_in_a_full_stop_and_the_sentences_words() -> None:
    texts = [s.text for s in word_spans.spans("Is PMS-Sulfasalazine-E.C. covered?", most=2)]
    # one word: trimmed of sentence punctuation, and (END) with the name's own full stop
    assert texts == [
        "PMS-Sulfasalazine-E.C",
        "PMS-Sulfasalazine-E.C.",
        "covered",
        "Is PMS-Sulfasalazine-E.C",
        "Is PMS-Sulfasalazine-E.C.",
        "PMS-Sulfasalazine-E.C. covered",
    ]


def test_commentary_sentences_split_once_with_the_codes_they_name() -> None:
    text = "Bill C124 once per admission.  C122 is limited to one per day. Record the time."
    assert _split_sentences(text) == (
        ("Bill C124 once per admission.", ("C124",)),
        ("C122 is limited to one per day.", ("C122",)),
        ("Record the time.", ()),
    )
    assert _sentences("C124", [text], LIMIT_WORDS) == ["Bill C124 once per admission."]
    assert _sentences("C122", [text], LIMIT_WORDS) == ["C122 is limited to one per day."]
