"""opa.clinical_tools finds every CEP tool of the corpus: first by its own title, first by each
condition word only its document lists (with the others that list a shared word), and under each
feature it has.

Expected ids come from the corpus files (their titles, conditions and feature anchors), so a
document added without words a clinician would use, or a ranking that lets a longer title or a
neighbouring tool win, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastmcp import Client
from hypothesis import given
from hypothesis import strategies as st

from reference_server.retrieval.opa_cep_tools import CepTool, CepToolDoc, padded_words, word_runs
from reference_server.tools.opa_clinical_tools import ClinicalTools, Request, _matches, matching
from tests.conftest import call

CORPUS = Path(__file__).resolve().parents[1] / "reference_server" / "corpus" / "opa" / "cep"
DOCS: dict[str, dict[str, Any]] = {
    p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("cep-*.yaml"))
}
FEATURES = {
    "algorithm": "assessment_algorithm",
    "calculator": "calculator",
    "checklist": "checklist",
}


@pytest.mark.parametrize("document_id", sorted(DOCS))
async def test_found_first_by_its_title(client: Client[Any], document_id: str) -> None:
    out = await call(client, "opa.clinical_tools", {"tool_name": DOCS[document_id]["title"]})
    assert [t["tool_id"] for t in out["tools"]][:1] == [document_id]


def _naming(word: str) -> set[str]:
    """The documents whose conditions or topics list `word` as it is written."""
    return {
        d
        for d, doc in DOCS.items()
        if word in {n.lower() for n in [*doc["tool"]["conditions"], *doc["topics"]]}
    }


CONDITIONS = sorted({c.lower() for doc in DOCS.values() for c in doc["tool"]["conditions"]})


@pytest.mark.parametrize("condition", CONDITIONS)
async def test_a_condition_word_ranks_the_tools_naming_it_first(
    client: Client[Any], condition: str
) -> None:
    """A word one tool lists finds it first; a word several list finds them all ahead of others."""
    naming = _naming(condition)
    out = await call(client, "opa.clinical_tools", {"condition": condition})
    assert {t["tool_id"] for t in out["tools"][: len(naming)]} == naming


@pytest.mark.parametrize("feature", sorted(FEATURES))
async def test_a_feature_lists_exactly_the_tools_that_have_it(
    client: Client[Any], feature: str
) -> None:
    expected = {d for d, doc in DOCS.items() if doc["tool"]["features"][FEATURES[feature]]}
    out = await call(client, "opa.clinical_tools", {"feature_type": feature, "n_results": 50})
    assert {t["tool_id"] for t in out["tools"]} == expected
    assert out["total_tools"] == len(expected)


async def test_a_name_inside_a_longer_word_is_no_match(client: Client[Any]) -> None:
    """ADHD's name 'add' is inside 'bladder': only the tool listing 'bladder leakage' answers."""
    assert (
        "add"
        in DOCS["cep-attention-deficit-hyperactivity-disorder-in-adults"]["tool"]["conditions"]
    )
    out = await call(client, "opa.clinical_tools", {"condition": "bladder leakage"})
    assert [t["tool_id"] for t in out["tools"]] == ["cep-managing-urinary-incontinence-in-women"]


def _doc(document_id: str, title: str) -> CepToolDoc:
    tool = CepTool.decode(json.dumps({"category": "pain_msk"}), document_id)
    return CepToolDoc.build(
        document_id, title, f"https://example.org/{document_id}/", None, (), tool
    )


def test_a_tools_own_title_ranks_ahead_of_a_longer_title_containing_it() -> None:
    """Without the vector path's help ('Chronic Pain' sorts before 'Pain')."""
    docs = [_doc("cep-chronic-pain", "Chronic Pain"), _doc("cep-pain", "Pain")]
    query = ClinicalTools().parse(None, Request(tool_name="Pain"))  # type: ignore[arg-type]
    assert [m.doc.document_id for m in matching(docs, query)] == ["cep-pain", "cep-chronic-pain"]


def test_padded_words_keep_names_with_slashes_and_hyphens_whole() -> None:
    assert padded_words("ME/CFS, post-COVID  fatigue") == " me/cfs post-covid fatigue "
    assert " add " not in padded_words("bladder leakage")


# Names and conditions over a small alphabet, so shared words and runs are common.
_TEXT = st.lists(
    st.sampled_from(["add", "bladder", "me/cfs", "pain", "-", "Pain", "  "]), max_size=5
)


@given(_TEXT, _TEXT)
def test_a_name_is_in_a_condition_exactly_when_it_is_one_of_its_word_runs(
    name: list[str], condition: list[str]
) -> None:
    """The set lookup the matching uses says what the substring search it replaced said."""
    padded_name, padded_condition = padded_words(" ".join(name)), padded_words(" ".join(condition))
    assert (padded_name in word_runs(padded_condition)) == (padded_name in padded_condition)


def _corpus_docs() -> list[CepToolDoc]:
    """The corpus's CEP tool documents as the SQL path decodes them."""
    return [
        CepToolDoc.build(
            doc_id,
            doc["title"],
            doc["source_url"],
            None,
            tuple(doc.get("topics") or ()),
            CepTool.decode(json.dumps(doc["tool"]), doc_id),
        )
        for doc_id, doc in DOCS.items()
    ]


CORPUS_DOCS = _corpus_docs()
# Request values drawn from the corpus's own names, titles and categories, cut and joined, so
# filters that match, miss and overlap are all drawn.
_WORDS = sorted(
    {w for d in CORPUS_DOCS for n in (*d.match_names, d.title_lower) for w in n.split()}
)
_TITLES = sorted({d.title_lower for d in CORPUS_DOCS})
_VALUE = st.one_of(
    st.sampled_from(sorted({n for d in CORPUS_DOCS for n in d.match_names})),
    st.tuples(st.sampled_from(_TITLES), st.integers(0, 40), st.integers(1, 12))
    .map(lambda t: t[0][t[1] : t[1] + t[2]])
    .filter(str.strip),
    st.sampled_from(_TITLES),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    st.text(alphabet="abcdeilnoprst -", min_size=1, max_size=6).filter(str.strip),
)


@given(
    condition=st.none() | _VALUE,
    tool_name=st.none() | _VALUE,
    category=st.none() | st.sampled_from(sorted({d.tool.category for d in CORPUS_DOCS})),
    feature=st.none() | st.sampled_from(sorted(FEATURES)),
)
def test_the_catalogue_lookup_finds_what_scoring_every_document_finds(
    condition: str | None, tool_name: str | None, category: str | None, feature: str | None
) -> None:
    """The filters' lookups only skip documents that cannot match: the tools and scores are
    those of scoring every document of the corpus."""
    request = Request(
        condition=condition,
        tool_name=tool_name,
        category=category,
        feature_type=feature,  # type: ignore[arg-type]
    )
    query = ClinicalTools().parse(None, request)  # type: ignore[arg-type]
    scored = sorted(
        ((d, _matches(d, query)) for d in CORPUS_DOCS), key=lambda p: (-p[1], p[0].title)
    )
    every = [(d.document_id, score) for d, score in scored if score > 0]
    assert [(m.doc.document_id, m.match) for m in matching(CORPUS_DOCS, query)] == every
