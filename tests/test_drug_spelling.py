"""Misspelt drug names read as the listed name they misspell, only when unambiguous. Pure
functions over small hand-made name lists (name, ingredient), no index."""

from __future__ import annotations

import pytest

from reference_server.retrieval.drug_spelling import SpellingIndex, sound_key

NAMES = [
    ("amoxicillin", "amoxicillin"),
    ("metformin", "metformin"),
    ("atorvastatin", "atorvastatin"),
    ("Lipitor", "atorvastatin"),
    ("Ozempic", "semaglutide"),
    ("phenytoin", "phenytoin"),
    ("Levaquin", "levofloxacin"),
    ("Nebcin", "tobramycin"),
    ("Avapro", "irbesartan"),
    ("Avalide", "irbesartan & hydrochlorothiazide"),
    ("Daypro", "oxaprozin"),
    ("BeneFIX", "nonacog alfa"),
]


@pytest.fixture(scope="module")
def index() -> SpellingIndex:
    return SpellingIndex(NAMES)


@pytest.mark.parametrize(
    ("typed", "listed"),
    [
        ("amoxicilin", "amoxicillin"),  # a doubled letter written once
        ("metforman", "metformin"),  # a vowel as it sounds
        ("atorvastatine", "atorvastatin"),  # a final 'e'
        ("ozempik", "ozempic"),  # hard 'c' as 'k'
        ("fenytoin", "phenytoin"),  # 'ph' as 'f'
        ("Levaqiun", "levaquin"),  # neighbours swapped
        ("nebcan", "nebcin"),
        ("Lipittor", "lipitor"),
    ],
)
def test_a_misspelling_reads_as_the_name_it_misspells(
    index: SpellingIndex, typed: str, listed: str
) -> None:
    corrected = index.correct(typed)
    assert corrected is not None and corrected[0] == listed


def test_a_listed_name_or_a_question_word_is_never_corrected(index: SpellingIndex) -> None:
    assert index.correct("Lipitor") is None
    assert index.correct("benefit") is None  # one letter from BeneFIX, but a question's word
    assert index.correct("covered") is None


def test_a_word_as_near_to_two_drugs_is_not_read_as_either() -> None:
    two_drugs = SpellingIndex([("Zolbrex", "drug one"), ("Zolbren", "drug two")])
    assert two_drugs.correct("Zolbres") is None  # one edit from each
    one_drug = SpellingIndex([("Zolbrex", "drug one"), ("Zolbren", "drug one")])
    assert one_drug.correct("Zolbres") == ("zolbren", 1)  # either name answers the same drug
    assert one_drug.correct("xyzzyplugh") is None


def test_the_nearer_name_wins(index: SpellingIndex) -> None:
    assert index.correct("Dyapro") == ("daypro", 1)  # 'Avapro' is two edits away


def test_in_text_finds_the_misspelt_word_and_where_it_is(index: SpellingIndex) -> None:
    q = "Is amoxicilin 500 mg covered by ODB?"
    found = index.in_text(q)
    assert found is not None
    assert (found.written, found.name) == ("amoxicilin", "amoxicillin")
    assert q[found.start : found.end] == "amoxicilin"


def test_sound_keys_agree_for_spellings_by_ear() -> None:
    assert sound_key("Amoxicillin") == sound_key("amoxicilin")
    assert sound_key("phenytoin") == sound_key("fenytoin")
    assert sound_key("Ozempic") == sound_key("ozempik")
    assert sound_key("lipitor") != sound_key("lisinopril")
