"""Every crawled CEP file is a corpus document or is excluded with a reason.

The rules (duplicates, drafts, hubs) are tested on small files written here; the accounting of
the real crawl needs the official files beside the project and skips without them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from reference_server.ingest import opa_cep

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "reference_server" / "corpus" / "opa" / "cep"
SOURCE = REPO.parent / "shared" / "data" / "opa" / "cep"

needs_shared = pytest.mark.skipif(
    not SOURCE.is_dir(),
    reason=f"the crawled CEP files are not beside the project ({SOURCE} is absent); "
    "the CEP corpus cannot be checked against them here",
)


def _tool(slug: str, title: str, sections: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "source_url": f"https://tools.cep.health/tool/{slug}/",
        "tool_slug": slug,
        "title": title,
        "tool_category": "mental_health",
        "last_updated": "June 1, 2024",
        "navigation": [],
        "features": {"has_algorithm": False},
        "sections": [{"heading": h, "summary": f"about {h}"} for h in sections],
        "extracted_at": f"2025-09-24T00:00:0{len(slug) % 10}",
        **extra,
    }


def _write(folder: Path, name: str, raw: dict[str, Any]) -> None:
    (folder / f"{name}_extracted.json").write_text(json.dumps(raw), encoding="utf-8")


def test_one_tool_under_two_urls_becomes_the_parent_page(tmp_path: Path) -> None:
    sections = ["Screening", "Treatment", "Acknowledgement and legal"]
    _write(tmp_path, "gout", _tool("gout", "Gout", sections))
    _write(tmp_path, "gout-tool", _tool("gout-tool", "Gout (tool)", sections))
    outcome = opa_cep.ingestion_outcome(tmp_path)
    assert outcome.ingested == {"gout_extracted.json": "cep-gout"}
    assert outcome.excluded["gout-tool_extracted.json"].startswith(
        "duplicate of gout_extracted.json"
    )


def test_same_title_with_other_content_is_not_a_duplicate(tmp_path: Path) -> None:
    _write(tmp_path, "gout", _tool("gout", "Gout", ["Screening", "Legal"]))
    _write(tmp_path, "gout-tool", _tool("gout-tool", "Gout", ["Screening", "Dosing", "Legal"]))
    outcome = opa_cep.ingestion_outcome(tmp_path)
    assert set(outcome.ingested.values()) == {"cep-gout", "cep-gout-tool"}
    assert outcome.excluded == {}


def test_draft_staging_and_learning_centre_pages_are_excluded(tmp_path: Path) -> None:
    _write(tmp_path, "gout-drafting", _tool("gout-drafting", "Gout drafting", ["Screening"]))
    _write(tmp_path, "forms", _tool("forms", "Forms Staging*", ["Screening", "Legal"]))
    _write(tmp_path, "lc", _tool("lc", "Quality Learning Centre", ["Audits", "Legal"]))
    outcome = opa_cep.ingestion_outcome(tmp_path)
    assert outcome.ingested == {}
    reasons = outcome.excluded
    assert "draft or staging" in reasons["gout-drafting_extracted.json"]
    assert "lacks the acknowledgement section" in reasons["gout-drafting_extracted.json"]
    assert "draft or staging" in reasons["forms_extracted.json"]
    assert "lacks the acknowledgement" not in reasons["forms_extracted.json"]
    assert reasons["lc_extracted.json"].startswith("learning-centre page")


def test_outcome_names_each_file_once_with_exactly_one_result(tmp_path: Path) -> None:
    _write(tmp_path, "gout", _tool("gout", "Gout", ["Screening", "Legal"]))
    _write(tmp_path, "sp-drafting", _tool("sp-drafting", "SP drafting", ["Immunization"]))
    outcome = opa_cep.ingestion_outcome(tmp_path)
    assert [o.source_file for o in outcome.outcomes] == [
        "gout_extracted.json",
        "sp-drafting_extracted.json",
    ]
    assert all((o.document_id is None) != (o.excluded_because is None) for o in outcome.outcomes)


@needs_shared
def test_every_cep_source_file_is_in_the_corpus_or_excluded_with_a_reason() -> None:
    sources = sorted(p.name for p in SOURCE.glob("*.json"))
    outcome = opa_cep.ingestion_outcome(SOURCE)
    assert [o.source_file for o in outcome.outcomes] == sources
    assert not set(outcome.ingested) & set(outcome.excluded)
    assert set(outcome.ingested) | set(outcome.excluded) == set(sources)
    assert all(reason.strip() for reason in outcome.excluded.values())
    corpus = {
        p.stem: yaml.safe_load(p.read_text(encoding="utf-8")) for p in CORPUS.glob("cep-*.yaml")
    }
    assert set(corpus) == set(outcome.ingested.values()), (
        "CEP corpus documents and the ingested source files differ"
    )
    for source_file, document_id in outcome.ingested.items():
        doc = corpus[document_id]
        assert doc["derived_from"] == f"opa/cep/{source_file}"
        assert all(s["text"].strip() for s in doc["sections"]), f"{document_id}: empty section"
        assert doc["topics"] and doc["tool"]["conditions"], f"{document_id}: no condition words"


@needs_shared
def test_reingesting_the_crawl_leaves_the_authored_corpus_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "cep"
    shutil.copytree(CORPUS, out)
    written = opa_cep.write_skeletons(SOURCE, out)
    assert all(p.parent == out for p in written), "a CEP tool has no authored document yet"
    changed = [
        p.name for p in CORPUS.glob("*.yaml") if p.read_bytes() != (out / p.name).read_bytes()
    ]
    assert not changed, f"derived facts are stale in {changed}: run `ocm ingest cep`"
