"""The CPSO ingestion: one document per crawled page that is a document, every other file named
with its reason, every document of the crawl in the corpus, and the committed report current.

The tests that read the crawl need the official files beside the project (`../shared/data`); without
them they skip and say so. The selection rules are also checked on small files written here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reference_server.ingest import opa_cpso, report

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "opa"
CPSO_SOURCE = SHARED / "cpso"
CPSO_CORPUS = REPO / "reference_server" / "corpus" / "opa" / "cpso"

needs_shared = pytest.mark.skipif(
    not CPSO_SOURCE.is_dir(),
    reason=f"the crawled CPSO files are not beside the project ({CPSO_SOURCE} is absent); "
    "the corpus cannot be compared with its source here",
)

POLICY_BODY = (
    "**Approved by Council:** May 2010\n\n## Policy\n\n"
    + "Physicians **must** keep records of every encounter with enough detail. " * 10
)


def _page(
    folder: Path, name: str, url: str, title: str, content: str, kind: str = "policy"
) -> None:
    raw = {
        "source_url": url,
        "source_org": "cpso",
        "document_type": kind,
        "title": title,
        "content": f"# {title}\n\n{content}",
        "sections": [],
    }
    (folder / name).write_text(json.dumps(raw), encoding="utf-8")


BASE = "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Policies"


def test_select_keeps_one_file_per_document_and_names_the_rest(tmp_path: Path) -> None:
    _page(tmp_path, "en_records.json", f"{BASE}/Record-Keeping", "Record Keeping", POLICY_BODY)
    _page(tmp_path, "records_copy.json", f"{BASE}/Record-Keeping", "Record Keeping", POLICY_BODY)
    _page(tmp_path, "en_old.json", f"{BASE}/Old-Name", "Record Keeping", POLICY_BODY)
    _page(tmp_path, "en_draft.json", f"{BASE}/Draft-Consent", "Draft Consent", POLICY_BODY)
    _page(tmp_path, "en_index.json", f"{BASE}", "Policies", POLICY_BODY)
    _page(tmp_path, "en_empty.json", f"{BASE}/Empty", "Empty", "Nothing here.")
    kept, excluded = opa_cpso.read_source(tmp_path)
    assert [k.source_file for k in kept] == ["en_records.json"]
    reasons = {e.source_file: e.reason for e in excluded}
    assert set(reasons) == {
        "records_copy.json",
        "en_old.json",
        "en_draft.json",
        "en_index.json",
        "en_empty.json",
    }
    assert reasons["records_copy.json"].startswith("the same page saved twice")
    assert reasons["en_old.json"].startswith("the same text under another URL")
    assert reasons["en_draft.json"].startswith("draft or staging page")
    assert reasons["en_index.json"].startswith("index page")
    assert reasons["en_empty.json"].startswith("no document text")


def test_advice_questions_become_advice_sections(tmp_path: Path) -> None:
    content = (
        "**Last Updated: **March 2024\n\nIntro text.\n\n"
        "***Can I accept a gift?***\n\nIt is best to decline; you must follow the policy.\n\n"
        "***What about samples?***\n\nPhysicians should weigh cost.\n\n## Endnotes\n\n1. A note."
    )
    _page(
        tmp_path,
        "advice.json",
        f"{BASE}/Gifts/Advice-to-the-Profession-Gifts",
        "ADVICE TO THE PROFESSION: GIFTS AND SAMPLES",
        content,
        kind="advice",
    )
    facts = opa_cpso.derive(tmp_path / "advice.json")
    assert facts.document_id == "cpso-gifts-advice"
    assert facts.record["title"] == "Advice to the Profession: Gifts and Samples"
    assert facts.record["companion_of"] == "cpso-gifts"
    assert [(s["heading"], s["policy_level"]) for s in facts.record["sections"]] == [
        ("Can I accept a gift?", "advice"),
        ("What about samples?", "advice"),
    ]


def test_a_statement_without_headings_is_one_section(tmp_path: Path) -> None:
    body = "Physicians must report reasonable grounds to believe a child is at risk. " * 8
    _page(
        tmp_path,
        "statement.json",
        "https://www.cpso.on.ca/en/Physicians/Policies-Guidance/Statements-Positions/Risk",
        "Risk",
        body + "\n\n## Endnotes\n\n1. A note.",
        kind="statement",
    )
    sections = opa_cpso.derive(tmp_path / "statement.json").record["sections"]
    assert [(s["heading"], s["policy_level"]) for s in sections] == [("Risk", "expectation")]


@needs_shared
def test_every_cpso_document_of_the_crawl_is_in_the_corpus() -> None:
    kept, excluded = opa_cpso.read_source(CPSO_SOURCE)
    files = sorted(p.name for p in CPSO_SOURCE.glob("*.json"))
    assert sorted([k.source_file for k in kept] + [e.source_file for e in excluded]) == files
    missing = [
        k.document_id for k in kept if not report.authored(CPSO_CORPUS / f"{k.document_id}.yaml")
    ]
    assert not missing, f"CPSO documents of the crawl with no authored corpus file: {missing}"
    stray = {p.stem for p in CPSO_CORPUS.glob("*.yaml")} - {k.document_id for k in kept}
    assert not stray, f"corpus files no crawled document derives: {sorted(stray)}"


@needs_shared
def test_cpso_ingestion_rewrites_the_committed_corpus(tmp_path: Path) -> None:
    out = tmp_path / "cpso"
    shutil.copytree(CPSO_CORPUS, out)
    assert opa_cpso.main([str(CPSO_SOURCE), str(out)]) == 0
    differ = [
        p.name
        for p in sorted(CPSO_CORPUS.glob("*.yaml"))
        if (out / p.name).read_bytes() != p.read_bytes()
    ]
    assert not differ, f"derived facts differ from a fresh ingestion: {differ}"
    assert not (out / "_skeletons").exists() or not any((out / "_skeletons").iterdir())


@needs_shared
def test_committed_ingestion_report_is_current() -> None:
    fresh = report.render(report.reports(SHARED, report.CORPUS))
    assert report.REPORT.read_text(encoding="utf-8") == fresh, (
        "corpus/opa/INGESTION.md is stale: run `ocm ingest report`"
    )
