"""The independent OPA backend (examples/alt_opa): parsing, search, freshness, tools and seeded
defects.

It reads the publishers' extracts in ../shared/data/opa (or ALT_OPA_DATA); without them there
is nothing to parse, so the module is skipped.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from alt_opa_kit import skip_without_extracts
from fastmcp import Client
from fastmcp.exceptions import ToolError
from jsonschema import Draft202012Validator
from pydantic import JsonValue

from examples.alt_opa.corpus import (
    Corpus,
    CorpusError,
    Document,
    load_corpus,
)
from examples.alt_opa.freshness import (
    LIKELY_STALE,
    POTENTIALLY_STALE,
    SOURCE_ORGS,
    SUPERSEDED,
    Request,
    age,
    probe,
)
from examples.alt_opa.pho_pdfs import _repair_words
from examples.alt_opa.search import Bm25, SectionSearch, tokens, topic_matches
from examples.alt_opa.server import Backend, build_server, load_schemas, parse_defects

REPO = Path(__file__).resolve().parents[2]

skip_without_extracts()

VIRTUAL_CARE = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/Virtual-Care"
PHO_URL = (
    "https://www.publichealthontario.ca/-/media/documents/b/2013/bp-clinical-office-practice.pdf"
)

SEARCH, FRESHNESS = "opa.search_sections", "opa.freshness_probe"


def doc_by_url(corpus: Corpus, url: str) -> str:
    return next(d.doc_id for d in corpus.documents.values() if d.url == url)


def validate(tool: str, result: Mapping[str, object]) -> None:
    Draft202012Validator(load_schemas()[tool]["outputSchema"]).validate(result)


# ---------------------------------------------------------------------- tokens and BM25


def test_tokens_drop_stop_words_truncate_words_and_keep_digit_tokens() -> None:
    assert tokens("The sterilized Sterilizers, N95 and K080!") == [
        "steril",
        "steril",
        "n95",
        "k080",
    ]


def test_bm25_matches_a_hand_computed_score() -> None:
    index = Bm25([["a", "b"], ["a"]])
    # idf(b) = ln(1 + (2 - 1 + 0.5) / (1 + 0.5)) = ln 2; row 0: len 2, mean 1.5,
    # norm = 1.2 * (0.25 + 0.75 * 2 / 1.5) = 1.5; score = ln2 * 1 * 2.2 / (1 + 1.5)
    assert index.scores(["b"]) == pytest.approx({0: math.log(2) * 2.2 / 2.5})


def test_topic_match_is_whole_word() -> None:
    assert topic_matches(["hand-hygiene"], ["hand hygiene"])
    assert topic_matches(["hygiene"], ["hand hygiene"])
    assert not topic_matches(["hyg"], ["hand hygiene"])


def test_split_pdf_words_are_joined_only_when_a_part_is_not_a_word() -> None:
    clean = {"clinical", "of", "practice", "in", "to"}
    known = clean | {"office", "into"}
    assert _repair_words("Clinical Of fice Practice", clean, known) == "Clinical Office Practice"
    assert _repair_words("went in to it", clean, known) == "went in to it"


# ---------------------------------------------------------------------- parsing


def test_ids_are_this_backends_own_and_unique(corpus: Corpus) -> None:
    assert all(re.fullmatch(r"doc\d{4}", d) for d in corpus.documents)
    ids = [s.section_id for s in corpus.sections]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"doc\d{4}-sec\d{2,}", i) for i in ids)


def test_every_document_has_an_official_https_url(corpus: Corpus) -> None:
    assert {d.org for d in corpus.documents.values()} == {"cpso", "cep", "pho"}
    assert all(d.url.startswith("https://") for d in corpus.documents.values())


def test_cpso_policy_is_cut_at_its_markdown_headings(corpus: Corpus) -> None:
    doc = corpus.documents[doc_by_url(corpus, VIRTUAL_CARE)]
    assert (doc.doc_type, doc.policy_level, doc.effective_date) == (
        "policy",
        "expectation",
        "2022-06-01",
    )
    sections = {s.heading: s for s in corpus.document_sections(doc.doc_id)}
    privacy = sections["Maintaining Privacy, Security, and Confidentiality"]
    assert privacy.context == ("Policy",)
    assert "less secure" in privacy.text and "**" not in privacy.text
    assert "Policy" not in sections  # a heading with no body of its own only gives context
    assert not sections["Endnotes"].searchable


def test_advice_questions_start_passages_under_the_pages_own_heading(corpus: Corpus) -> None:
    doc = doc_by_url(corpus, VIRTUAL_CARE + "/Advice-to-the-Profession-Virtual-Care")
    sections = corpus.document_sections(doc)
    consent = [s for s in sections if s.heading == "Privacy, Security, and Informed Consent"]
    assert len(consent) >= 3  # one passage per question, all under the page's heading
    assert all(s.text.split("\n", 1)[0].endswith("?") for s in consent)
    assert all(s.extra_terms == s.text.split("\n", 1)[0] for s in consent)
    assert sections[0].heading == "Advice to the Profession: Virtual Care"  # before any heading
    assert corpus.documents[doc].policy_level == "advice"


def test_identical_documents_are_kept_once_under_the_shorter_url(corpus: Corpus) -> None:
    urls = [d.url for d in corpus.documents.values()]
    assert len(urls) == len(set(urls))
    base = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/"
    assert base + "Reporting-Requirements" in urls
    assert base + "Mandatory-and-Permissive-Reporting" not in urls


def test_pho_pdf_is_paged_and_cut_at_its_headings(corpus: Corpus) -> None:
    doc = corpus.documents[doc_by_url(corpus, PHO_URL)]
    assert (doc.published_date, doc.effective_date, doc.doc_type) == (
        "2013-06-01",
        "2015-04-01",
        "guideline",
    )
    sections = {s.heading: s for s in corpus.document_sections(doc.doc_id)}
    airborne = sections["Airborne Transmission and Precautions"]
    assert airborne.page == 31 and "N95" in airborne.text
    assert "Of fice" not in "".join(s.text for s in sections.values())


def test_missing_data_folder_is_a_corpus_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="not found"):
        load_corpus(tmp_path / "absent")


def test_server_start_fails_with_one_line_without_data(tmp_path: Path) -> None:
    env = {"ALT_OPA_DATA": str(tmp_path / "absent"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "examples.alt_opa"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not found" in done.stderr


# ---------------------------------------------------------------------- search


def test_search_answers_with_the_official_url_and_valid_output(backend: Backend) -> None:
    out = backend.search_sections({"query": "When are N95 respirators required?"})
    validate("opa.search_sections", out)
    top = out["sections"][0]
    assert top["source_url"] == PHO_URL and "N95" in top["text"]
    assert len(out["sections"]) == 5 and out["total_matches"] > 5
    assert out["provenance"] == ["sql"] and not out["no_relevant_document"]
    assert [c["chunk_id"] for c in out["citations"]] == [s["section_id"] for s in out["sections"]]


@pytest.mark.parametrize(
    ("args", "field", "value"),
    [
        ({"source_org": "cpso"}, "source_org", "cpso"),
        ({"document_type": "advice"}, "document_type", "advice"),
        ({"source_org": "cep", "document_type": "tool"}, "source_org", "cep"),
    ],
)
def test_search_filters(backend: Backend, args: dict[str, Any], field: str, value: str) -> None:
    out = backend.search_sections({"query": "patient care", "n_results": 20, **args})
    assert len(out["sections"]) == 20
    if field == "document_type":
        docs = backend.corpus.documents
        assert {docs[s["document_id"]].doc_type for s in out["sections"]} == {value}
    else:
        assert {cast(dict[str, Any], s)[field] for s in out["sections"]} == {value}


def test_topics_filter_keeps_matching_documents_only(backend: Backend) -> None:
    out = backend.search_sections({"query": "gloves masks", "topics": ["ppe"], "n_results": 3})
    assert out["sections"] and all("ppe" in s["topics"] for s in out["sections"])
    none = backend.search_sections({"query": "abnormal FIT", "topics": ["colonoscopy"]})
    assert none["sections"] == [] and none["no_relevant_document"]
    assert none["confidence"] <= 0.5
    validate("opa.search_sections", none)


def test_a_subject_no_document_mentions_is_flagged(backend: Backend) -> None:
    out = backend.search_sections({"query": "OHIP K080 K081 virtual care K-code end date"})
    assert out["no_relevant_document"] and out["confidence"] <= 0.5


def test_references_are_not_searched(backend: Backend) -> None:
    out = backend.search_sections({"query": "endnotes Medicine Act regulation", "n_results": 20})
    assert all(s["section_heading"] != "Endnotes" for s in out["sections"])


# ---------------------------------------------------------------------- get_section


def test_get_section_with_children_and_document(backend: Backend, corpus: Corpus) -> None:
    doc = doc_by_url(corpus, VIRTUAL_CARE)
    section = next(
        s for s in corpus.document_sections(doc) if s.heading.startswith("Maintaining Privacy")
    )
    out = backend.get_section({"section_id": section.section_id, "include_children": True})
    validate("opa.get_section", out)
    assert out["section"]["text"] == section.text
    assert [c["chunk_idx"] for c in out["children"]] == list(
        range(1, len(section.paragraphs()) + 1)
    )
    assert out["document"] is not None and out["document"]["source_url"] == VIRTUAL_CARE
    assert out["citation"]["url"] == VIRTUAL_CARE and section.heading in out["citation"]["text"]


def test_get_paragraph_returns_its_parent(backend: Backend, corpus: Corpus) -> None:
    section = next(s for s in corpus.sections if len(s.paragraphs()) >= 2)
    out = backend.get_section({"section_id": f"{section.section_id}-p2"})
    validate("opa.get_section", out)
    assert out["section"]["chunk_type"] == "child" and out["section"]["chunk_idx"] == 2
    assert out["parent"] is not None and out["parent"]["section_id"] == section.section_id


def test_get_section_without_document_metadata(backend: Backend, corpus: Corpus) -> None:
    out = backend.get_section(
        {"section_id": corpus.sections[0].section_id, "include_document_metadata": False}
    )
    assert out["document"] is None
    validate("opa.get_section", out)


def test_pdf_sections_cite_their_page(backend: Backend, corpus: Corpus) -> None:
    doc = doc_by_url(corpus, PHO_URL)
    section = next(s for s in corpus.document_sections(doc) if s.page)
    citation = backend.get_section({"section_id": section.section_id})["citation"]
    assert citation["url"] == f"{PHO_URL}#page={section.page}"


@pytest.mark.parametrize("wanted", ["cpso-nothing:s99", "doc9999-sec01", "doc0001-sec01-p999"])
def test_unknown_section_is_a_not_found_error_naming_it(backend: Backend, wanted: str) -> None:
    with pytest.raises(ToolError, match=r"not found") as info:
        backend.get_section({"section_id": wanted})
    assert wanted in str(info.value) and "section_id" in str(info.value)


# ---------------------------------------------------------------------- freshness_probe

TODAY = date(2026, 6, 1)  # a fixed "today": no assertion reads the live clock
VIRTUAL_CARE_DATE = date(2022, 6, 1)


def make_doc(
    doc_id: str,
    updated: date | None = None,
    *,
    effective: str | None = None,
    published: str | None = None,
    org: str = "cpso",
    topics: tuple[str, ...] = ("virtual care",),
) -> Document:
    return Document(
        doc_id=doc_id,
        org=org,
        title=f"Title of {doc_id}",
        url=f"https://example.org/{doc_id}",
        doc_type="policy",
        policy_level=None,
        published_date=published,
        effective_date=effective,
        updated_date=updated.isoformat() if updated else None,
        topics=topics,
        source_file=f"{org}/{doc_id}.json",
    )


def dated_corpus(*docs: Document) -> Corpus:
    return Corpus(documents={d.doc_id: d for d in docs}, sections=[])


@pytest.mark.parametrize(
    ("days", "expected"),
    [
        (0, None),
        (365, None),  # one year exactly is not yet "more than one year"
        (366, POTENTIALLY_STALE),
        (730, POTENTIALLY_STALE),  # two years exactly is not yet "more than two years"
        (731, LIKELY_STALE),
        (5000, LIKELY_STALE),
    ],
)
def test_staleness_thresholds_at_their_boundaries(days: int, expected: str | None) -> None:
    aged = age(make_doc("d", TODAY - timedelta(days=days)), TODAY)
    assert (aged.days_old, aged.staleness) == (days, expected)
    out = probe(dated_corpus(aged.doc), Request(), TODAY)
    assert [s["days_old"] for s in out["stale_documents"]] == ([days] if expected else [])


def test_a_superseded_document_is_stale_whatever_its_age() -> None:
    doc = make_doc("new", TODAY - timedelta(days=3))
    assert age(doc, TODAY).staleness is None
    assert age(doc, TODAY, superseded={"new"}).staleness == SUPERSEDED


def test_stale_documents_come_superseded_first_then_oldest() -> None:
    corpus = dated_corpus(
        make_doc("current", TODAY - timedelta(days=30)),
        make_doc("potential", TODAY - timedelta(days=400)),
        make_doc("old", TODAY - timedelta(days=3000)),
        make_doc("likely", TODAY - timedelta(days=800)),
        make_doc("replaced", TODAY - timedelta(days=10)),
        make_doc("replaced-old", TODAY - timedelta(days=4000)),
        make_doc("undated"),
    )
    out = probe(corpus, Request(), TODAY, superseded={"replaced", "replaced-old"})
    validate("opa.freshness_probe", out)
    order = [s["document_id"] for s in out["stale_documents"]]
    assert order == ["replaced-old", "replaced", "old", "likely", "potential"]
    assert out["documents_checked"] == 7
    assert out["potential_updates"] == []
    # the re-ingestion list names each stale document, in the same order, and why
    lines = [r for r in out["recommendations"] if r.startswith("Re-ingest")]
    assert [next(d for d in order if f"“Title of {d}”" in line) for line in lines] == order
    assert "superseded" in lines[0] and "likely stale" in lines[2]
    assert "potentially stale" in lines[4]
    assert any("Title of undated" in r and "no updated" in r for r in out["recommendations"])


def test_last_updated_falls_back_to_effective_then_published_date() -> None:
    corpus = dated_corpus(
        make_doc("a", date(2020, 1, 2), effective="2019-01-01", published="2018-01-01"),
        make_doc("b", effective="2019-01-01", published="2018-01-01"),
        make_doc("c", published="2018-01-01"),
    )
    out = probe(corpus, Request(), TODAY)
    assert {s["document_id"]: s["last_updated"] for s in out["stale_documents"]} == {
        "a": "2020-01-02",
        "b": "2019-01-01",
        "c": "2018-01-01",
    }
    assert out["stale_documents"][0]["days_old"] == (TODAY - date(2018, 1, 1)).days
    assert out["last_corpus_update"] == "2020-01-02"


def test_freshness_of_one_document_by_id(backend: Backend, corpus: Corpus) -> None:
    doc = doc_by_url(corpus, VIRTUAL_CARE)
    out = backend.freshness_probe({"document_ids": [doc]}, today=TODAY)
    validate("opa.freshness_probe", out)
    assert out["documents_checked"] == 1
    assert out["stale_documents"] == [
        {
            "document_id": doc,
            "title": "Virtual Care",
            "last_updated": "2022-06-01",
            "days_old": (TODAY - VIRTUAL_CARE_DATE).days,
            "topics": list(corpus.documents[doc].topics),
        }
    ]
    assert any("“Virtual Care”" in r and "likely stale" in r for r in out["recommendations"])
    # every filter must keep a document: the same id under another organisation is not checked
    other = backend.freshness_probe({"document_ids": [doc], "source_orgs": ["pho"]}, today=TODAY)
    assert (other["documents_checked"], other["stale_documents"]) == (0, [])


def test_freshness_filters_by_organisation_and_topic(backend: Backend, corpus: Corpus) -> None:
    out = backend.freshness_probe(
        {"source_orgs": ["cpso"], "topics": ["virtual care"]}, today=TODAY
    )
    assert {s["document_id"] for s in out["stale_documents"]} == {
        doc_by_url(corpus, VIRTUAL_CARE),
        doc_by_url(corpus, VIRTUAL_CARE + "/Advice-to-the-Profession-Virtual-Care"),
    }
    assert out["documents_checked"] == 2
    pho = backend.freshness_probe({"source_orgs": ["pho"]}, today=TODAY)
    assert [s["document_id"] for s in pho["stale_documents"]] == [doc_by_url(corpus, PHO_URL)]
    everything = backend.freshness_probe({}, today=TODAY)
    assert everything["documents_checked"] == len(corpus.documents)
    days = [s["days_old"] or 0 for s in everything["stale_documents"]]
    assert days == sorted(days, reverse=True) and days[0] == (TODAY - date(2015, 4, 1)).days
    # the newest date of the whole corpus, whatever the filters
    assert pho["last_corpus_update"] == everything["last_corpus_update"] is not None


def test_an_organisation_without_documents_is_checked_and_explained(backend: Backend) -> None:
    out = backend.freshness_probe({"source_orgs": ["ontario_health"]}, today=TODAY)
    validate("opa.freshness_probe", out)
    assert (out["documents_checked"], out["stale_documents"]) == (0, [])
    assert any("no Ontario Health" in r for r in out["recommendations"])


def test_check_web_says_web_checking_is_disabled(backend: Backend, corpus: Corpus) -> None:
    args: dict[str, Any] = {"document_ids": [doc_by_url(corpus, VIRTUAL_CARE)]}
    web = backend.freshness_probe({**args, "check_web": True}, today=TODAY)
    assert web["potential_updates"] == []
    assert any(re.search(r"(?i)web.*disabled", r) for r in web["recommendations"])
    plain = backend.freshness_probe(args, today=TODAY)
    assert not any("web" in r.casefold() for r in plain["recommendations"])


@pytest.mark.parametrize("wanted", [["no-such-doc"], ["doc0002", "doc9999", "x"]])
def test_unknown_document_id_is_a_not_found_error_naming_it(
    backend: Backend, wanted: list[Any]
) -> None:
    """It names the field and each unknown id (not a known one given with them)."""
    with pytest.raises(ToolError, match=r"not found") as info:
        backend.freshness_probe({"document_ids": wanted}, today=TODAY)
    message = str(info.value)
    assert "document_ids" in message and "doc0002" not in message
    assert all(repr(w) in message for w in wanted if w != "doc0002")


def test_unknown_organisation_is_an_error_naming_the_allowed_ones(backend: Backend) -> None:
    with pytest.raises(ToolError, match=r"source_orgs.*'cdc'.*cpso.*ontario_health.*cep.*pho.*moh"):
        backend.freshness_probe({"source_orgs": ["cpso", "cdc"]}, today=TODAY)
    schema: Any = load_schemas()["opa.freshness_probe"]["inputSchema"]
    assert schema["properties"]["source_orgs"]["items"]["enum"] == list(SOURCE_ORGS)


# ---------------------------------------------------------------------- over MCP


async def test_tools_list_publishes_the_reference_schemas_unchanged(backend: Backend) -> None:
    snapshot = json.loads((REPO / "tests/snapshots/tool_schemas.json").read_text())
    async with Client(build_server(backend)) as client:
        tools = {t.name: t for t in await client.list_tools()}
    assert {"opa.search_sections", "opa.get_section", "opa.freshness_probe"} <= set(tools)
    assert "opa.policy_check" in tools  # spec fields only: test_alt_opa_policy.py
    for name in ("opa.search_sections", "opa.get_section"):
        assert tools[name].input_schema == snapshot[name]["inputSchema"]
        assert tools[name].output_schema == snapshot[name]["outputSchema"]


async def test_freshness_probe_publishes_the_spec_fields_only(backend: Backend) -> None:
    async with Client(build_server(backend)) as client:
        tool = {t.name: t for t in await client.list_tools()}["opa.freshness_probe"]
    assert tool.input_schema == load_schemas()["opa.freshness_probe"]["inputSchema"]
    assert set(tool.input_schema["properties"]) == {
        "document_ids",
        "source_orgs",
        "topics",
        "check_web",
    }
    output = tool.output_schema or {}
    assert (
        set(output["properties"])
        == set(output["required"])
        == {
            "documents_checked",
            "stale_documents",
            "potential_updates",
            "last_corpus_update",
            "recommendations",
        }
    )
    stale = output["properties"]["stale_documents"]["items"]
    assert set(stale["properties"]) == {
        "document_id",
        "title",
        "last_updated",
        "days_old",
        "topics",
    }
    update = output["properties"]["potential_updates"]["items"]
    assert set(update["properties"]) == {"source_org", "indication", "url", "detected_date"}


async def test_freshness_probe_over_mcp_ages_against_todays_date(
    backend: Backend, corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a date given the handler asks the clock, here a fixed one."""
    from examples.alt_opa import server as server_module

    class FixedDate(date):
        @classmethod
        def today(cls) -> FixedDate:
            return cls(2030, 1, 1)

    monkeypatch.setattr(server_module, "date", FixedDate)
    doc = doc_by_url(corpus, VIRTUAL_CARE)
    async with Client(build_server(backend)) as client:
        result = await client.call_tool("opa.freshness_probe", {"document_ids": [doc]})
    out = result.structured_content or {}
    validate("opa.freshness_probe", out)
    assert out["stale_documents"][0]["days_old"] == (date(2030, 1, 1) - VIRTUAL_CARE_DATE).days


@pytest.mark.parametrize(
    ("tool", "args", "named"),
    [
        (
            SEARCH,
            {"query": "x", "source_org": "cdc"},
            r"source_org.*cpso.*ontario_health.*cep.*pho.*moh",
        ),
        (SEARCH, {"query": "x", "n_results": 21}, r"n_results"),
        (SEARCH, {"query": "x", "search_mode": "vector"}, r"search_mode"),
        (FRESHNESS, {"source_orgs": ["cdc"]}, r"source_orgs.*cpso.*ontario_health.*cep.*pho.*moh"),
        (FRESHNESS, {"document_ids": ["no-such-doc"]}, r"document_ids.*no-such-doc.*not found"),
        (FRESHNESS, {"check_web": "yes"}, r"check_web"),
        (FRESHNESS, {"n_results": 5}, r"n_results"),  # not a spec field of this tool
    ],
)
async def test_bad_arguments_are_tool_errors_naming_the_field(
    backend: Backend, tool: str, args: dict[str, Any], named: str
) -> None:
    async with Client(build_server(backend)) as client:
        result = await client.call_tool(tool, args, raise_on_error=False)
    assert result.is_error
    assert re.search(named, result.content[0].text)  # type: ignore[union-attr]


# ---------------------------------------------------------------------- seeded defects


def test_defect_names_are_checked() -> None:
    assert parse_defects(" no_url, slow ") == {"no_url", "slow"}
    assert parse_defects(None) == frozenset()
    with pytest.raises(ValueError, match="wrong_document"):
        parse_defects("typo")


def test_wrong_document_puts_the_runner_up_document_first(corpus: Corpus) -> None:
    args: dict[str, JsonValue] = {
        "query": "documentation requirements for virtual care",
        "n_results": 20,
    }
    search = SectionSearch(corpus)
    plain = Backend(corpus, search).search_sections(args)["sections"]
    docs = list(dict.fromkeys(s["document_id"] for s in plain))
    seeded = Backend(corpus, search, frozenset({"wrong_document"})).search_sections(args)
    assert seeded["sections"][0]["document_id"] == docs[1] != plain[0]["document_id"]


def test_no_url_empties_every_url(corpus: Corpus) -> None:
    seeded = Backend(corpus, SectionSearch(corpus), frozenset({"no_url"}))
    out = seeded.search_sections({"query": "hand hygiene"})
    assert out["sections"] and {s["source_url"] for s in out["sections"]} == {""}
    section = seeded.get_section({"section_id": out["sections"][0]["section_id"]})
    assert section["document"] is not None and section["document"]["source_url"] == ""
    assert section["citation"]["url"] == ""


async def test_slow_delays_each_search_call(
    corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The delay each call asked for is recorded, not timed: shared machines are noisy."""
    import asyncio
    from types import SimpleNamespace

    from examples.alt_opa import server as server_module

    slept: list[float] = []

    async def record_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(
        server_module, "asyncio", SimpleNamespace(sleep=record_sleep, to_thread=asyncio.to_thread)
    )
    server = build_server(Backend(corpus, SectionSearch(corpus), frozenset({"slow"})))
    async with Client(server) as client:
        await client.call_tool("opa.search_sections", {"query": "hand hygiene"})
        assert slept == [server_module.SLOW_SECONDS] and server_module.SLOW_SECONDS >= 0.3
        await client.call_tool("opa.get_section", {"section_id": corpus.sections[0].section_id})
        assert slept == [server_module.SLOW_SECONDS]
