"""The independent OPA backend's opa.policy_check (examples/alt_opa/policy.py): levels decided
from the CPSO text, the filters, ranking, argument errors and the spec-shaped output.

It reads the publishers' extracts in ../shared/data/opa (or ALT_OPA_DATA); without them there
is nothing to search, so the module is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from alt_opa_kit import skip_without_extracts, validated
from fastmcp import Client
from fastmcp.exceptions import ToolError
from pydantic import JsonValue

from examples.alt_opa.corpus import Corpus, Document, Section, data_folder
from examples.alt_opa.policy import (
    ADVICE,
    EXPECTATION,
    MAX_RESULTS,
    POOL_SHARE,
    PolicyCheck,
    Request,
    section_level,
    with_heading,
)
from examples.alt_opa.search import SectionSearch
from examples.alt_opa.server import Backend, build_server, load_schemas

skip_without_extracts()

TOOL = "opa.policy_check"
CPSO = "https://www.cpso.on.ca/"
VIRTUAL_CARE = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies/Virtual-Care"
VIRTUAL_CARE_ADVICE = f"{VIRTUAL_CARE}/Advice-to-the-Profession-Virtual-Care"
SPEC_POLICY_FIELDS = {
    "section_id",
    "policy_number",
    "policy_title",
    "policy_level",
    "text",
    "relevance_score",
    "effective_date",
    "review_date",
    "source_url",
}


def doc_by_url(corpus: Corpus, url: str) -> Document:
    return next(d for d in corpus.documents.values() if d.url == url)


def section_of(corpus: Corpus, url: str, heading: str) -> Section:
    doc = doc_by_url(corpus, url)
    return next(s for s in corpus.document_sections(doc.doc_id) if s.heading == heading)


def validate(result: Mapping[str, object]) -> None:
    validated(TOOL, result)


def check(backend: Backend, **args: JsonValue) -> dict[str, Any]:
    return validated(TOOL, backend.policy_check(dict(args)))


# ---------------------------------------------------------------------- levels


def test_a_policy_section_that_says_must_is_an_expectation(corpus: Corpus) -> None:
    section = section_of(corpus, VIRTUAL_CARE, "Obtaining Informed Consent for Virtual Care")
    assert "must" in section.text
    assert section_level(section, corpus.documents[section.doc_id]) == EXPECTATION


def test_every_section_of_an_advice_page_is_advice_even_where_it_says_must(
    corpus: Corpus,
) -> None:
    doc = doc_by_url(corpus, VIRTUAL_CARE_ADVICE)
    sections = [s for s in corpus.document_sections(doc.doc_id) if s.searchable]
    assert any(re.search(r"\bmust\b", s.text) for s in sections)
    assert {section_level(s, doc) for s in sections} == {ADVICE}


def test_a_policy_section_with_no_directive_takes_the_documents_level(corpus: Corpus) -> None:
    definitions = section_of(corpus, VIRTUAL_CARE, "Definitions")
    assert not re.search(r"\b(must|shall|should|advised)\b", definitions.text)
    assert section_level(definitions, corpus.documents[definitions.doc_id]) == EXPECTATION


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("Physicians must not refuse a patient.", EXPECTATION),
        ("Physicians are required to keep a record.", EXPECTATION),
        ("Physicians are advised to keep a copy.", ADVICE),
        ("Physicians should consider a chaperone.", ADVICE),
        ("Physicians are not required to inform them; they are encouraged to.", ADVICE),
        ("Physicians are advised to ask, and must document the answer.", EXPECTATION),
        ("Capacity means the ability to understand.", EXPECTATION),
    ],
)
def test_policy_section_level_by_its_words(corpus: Corpus, text: str, level: str) -> None:
    doc = doc_by_url(corpus, VIRTUAL_CARE)
    section = Section("x-sec01", doc.doc_id, 1, "Heading", (), text)
    assert section_level(section, doc) == level


# ---------------------------------------------------------------------- answers


def test_answer_is_cpso_only_with_official_urls_and_spec_fields(
    backend: Backend, corpus: Corpus
) -> None:
    out = check(backend, query="Documentation requirements for virtual care", n_results=10)
    assert out["provenance"] == ["sql"] and out["conflicts"] == []
    assert len(out["policies"]) == 10
    urls = {d.url: d for d in corpus.documents.values()}
    for policy in out["policies"]:
        assert set(policy) == SPEC_POLICY_FIELDS
        assert policy["source_url"].startswith(CPSO)
        doc = urls[policy["source_url"]]
        assert doc.doc_type in ("policy", "advice") and policy["policy_title"] == doc.title
        assert policy["section_id"].startswith(doc.doc_id + "-sec")
        assert policy["policy_number"] is None and policy["review_date"] is None
    assert out["policies"][0]["policy_title"] == "Virtual Care"
    assert out["expectations_found"] + out["advice_found"] == len(out["policies"])
    assert [c["chunk_id"] for c in out["citations"]] == [p["section_id"] for p in out["policies"]]
    assert 0 < out["confidence"] <= 1


def test_source_url_is_the_one_in_the_source_file(backend: Backend, corpus: Corpus) -> None:
    out = check(backend, query="virtual care informed consent", n_results=5)
    for policy in out["policies"]:
        doc = corpus.documents[corpus.by_id[policy["section_id"]].doc_id]
        raw = json.loads((data_folder() / doc.source_file).read_text(encoding="utf-8"))
        assert policy["source_url"] == raw["source_url"]


def test_text_is_the_whole_section_under_its_heading(corpus: Corpus) -> None:
    section = section_of(corpus, VIRTUAL_CARE, "Maintaining Privacy, Security, and Confidentiality")
    text = with_heading(section, corpus.documents[section.doc_id])
    assert text == f"{section.heading}\n\n{section.text}"


def test_expectations_come_first_among_comparably_relevant_sections(backend: Backend) -> None:
    policy_check = PolicyCheck(backend.corpus, backend.search)
    ranked = policy_check.rank(Request("Is email communication allowed for results?"))
    best = max(r.score for r in ranked)
    pooled = [r for r in ranked if r.score >= POOL_SHARE * best]
    levels = [r.level for r in pooled]
    assert EXPECTATION in levels and ADVICE in levels
    assert levels == sorted(levels, key=lambda level: level != EXPECTATION)
    assert ranked[: len(pooled)] == pooled
    for level in (EXPECTATION, ADVICE):
        scores = [r.score for r in pooled if r.level == level]
        assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(("level", "counts"), [(EXPECTATION, (20, 0)), (ADVICE, (0, 20))])
def test_policy_level_filter_keeps_that_level_only(
    backend: Backend, level: str, counts: tuple[int, int]
) -> None:
    out = check(backend, query="consent to treatment", policy_level=level, n_results=20)
    assert len(out["policies"]) == 20
    assert {p["policy_level"] for p in out["policies"]} == {level}
    assert (out["expectations_found"], out["advice_found"]) == counts


def test_include_advice_false_drops_every_advice_section(backend: Backend) -> None:
    query = "Is email communication allowed for results?"
    with_advice = check(backend, query=query, n_results=10)
    assert with_advice["advice_found"] > 0
    out = check(backend, query=query, include_advice=False, n_results=10)
    assert out["advice_found"] == 0 and out["expectations_found"] == 10
    assert all("Advice to the Profession" not in p["policy_title"] for p in out["policies"])


@pytest.mark.parametrize(("n", "shown"), [(None, 3), (1, 1), (MAX_RESULTS, MAX_RESULTS)])
def test_n_results_default_and_bounds(backend: Backend, n: int | None, shown: int) -> None:
    args: dict[str, JsonValue] = {"query": "patient care"}
    if n is not None:
        args["n_results"] = n
    assert len(check(backend, **args)["policies"]) == shown


@pytest.mark.parametrize("query", ["zzyzx quokka", "the of and"])
def test_no_matching_word_is_an_empty_answer_with_zero_confidence(
    backend: Backend, query: str
) -> None:
    out = check(backend, query=query)
    assert out["policies"] == [] and out["confidence"] == 0.0
    assert out["expectations_found"] == out["advice_found"] == 0


def test_no_url_defect_empties_the_source_url(corpus: Corpus) -> None:
    seeded = Backend(corpus, SectionSearch(corpus), frozenset({"no_url"}))
    out = seeded.policy_check({"query": "virtual care consent"})
    assert out["policies"] and {p["source_url"] for p in out["policies"]} == {""}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"query": "consent", "n_results": 0}, r"n_results"),
        ({"query": "consent", "n_results": MAX_RESULTS + 1}, r"n_results"),
        ({"query": "consent", "policy_level": ADVICE, "include_advice": False}, "include_advice"),
    ],
)
def test_direct_calls_check_what_the_schema_cannot(
    backend: Backend, args: dict[str, JsonValue], named: str
) -> None:
    with pytest.raises(ToolError, match=named):
        backend.policy_check(args)


# ---------------------------------------------------------------------- over MCP


async def test_tools_list_publishes_the_spec_fields_only(backend: Backend) -> None:
    async with Client(build_server(backend)) as client:
        tool = {t.name: t for t in await client.list_tools()}[TOOL]
    assert tool.input_schema == load_schemas()[TOOL]["inputSchema"]
    assert tool.output_schema == load_schemas()[TOOL]["outputSchema"]
    assert set(tool.input_schema["properties"]) == {
        "query",
        "policy_level",
        "include_advice",
        "n_results",
    }
    assert tool.input_schema["required"] == ["query"]
    output = tool.output_schema or {}
    assert (
        set(output["properties"])
        == set(output["required"])
        == {
            "provenance",
            "confidence",
            "policies",
            "expectations_found",
            "advice_found",
            "citations",
            "conflicts",
        }
    )
    assert set(output["properties"]["policies"]["items"]["properties"]) == SPEC_POLICY_FIELDS


async def test_over_mcp_the_answer_is_structured_and_valid(backend: Backend) -> None:
    async with Client(build_server(backend)) as client:
        result = await client.call_tool(TOOL, {"query": "closing a medical practice notice"})
    out = result.structured_content or {}
    validate(out)
    assert len(out["policies"]) == 3


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"query": "consent", "policy_level": "rule"}, r"policy_level.*expectation.*advice.*all"),
        ({"query": ""}, r"query"),
        ({"query": "   "}, r"query"),
        ({}, r"query"),
        ({"query": "consent", "n_results": 0}, r"n_results"),
        ({"query": "consent", "n_results": MAX_RESULTS + 1}, r"n_results"),
        ({"query": "consent", "n_results": "five"}, r"n_results"),
        ({"query": "consent", "include_advice": "yes"}, r"include_advice"),
        ({"query": "consent", "source_org": "cpso"}, r"source_org"),
        (
            {"query": "consent", "policy_level": "advice", "include_advice": False},
            r"include_advice",
        ),
    ],
)
async def test_bad_arguments_are_tool_errors_naming_the_field(
    backend: Backend, args: dict[str, Any], named: str
) -> None:
    async with Client(build_server(backend)) as client:
        result = await client.call_tool(TOOL, args, raise_on_error=False)
    assert result.is_error
    assert re.search(named, result.content[0].text)  # type: ignore[union-attr]
