"""Every Ontario Health and Ministry fact carries the page it was verified from, or says it is unverified."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml

from ocm_common.json_types import JsonObject
from reference_server.index import provenance

CORPUS = Path(__file__).resolve().parents[1] / "reference_server" / "corpus" / "opa"
TRACED = sorted(
    p for org in provenance.TRACED_ORGS for p in (CORPUS / org).glob("*.yaml") if p.is_file()
)


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_traced_documents_exist() -> None:
    assert len(TRACED) >= 9


@pytest.mark.parametrize("path", TRACED, ids=lambda p: p.stem)
def test_every_fact_has_provenance(path: Path) -> None:
    assert provenance.missing(_load(path)) == []


@pytest.mark.parametrize("path", TRACED, ids=lambda p: p.stem)
def test_sources_are_real_pages_seen_on_a_date(path: Path) -> None:
    for sid, src in (_load(path).get("sources") or {}).items():
        assert str(src["url"]).startswith(("https://", "http://")), sid
        seen = src["seen"]
        seen = seen if isinstance(seen, dt.date) else dt.date.fromisoformat(str(seen))
        assert seen <= dt.date(2026, 11, 23), f"{sid} seen in the future"
        assert src.get("note"), f"{sid}: say what the page confirms"


def test_a_fact_without_provenance_fails() -> None:
    doc: JsonObject = {
        "document_id": "x",
        "source_org": "ontario_health",
        "verified_from": ["p"],
        "sources": {"p": {"url": "https://example.org", "seen": "2026-11-23"}},
        "sections": [{"heading": "A", "text": "t", "verified_from": ["p"]}, {"heading": "B"}],
        "program": {
            "intervals": {"average_risk": "every 2 years"},
            "recommendations": [{"text": "r", "verified_from": ["nope"]}],
            "provenance": {},
        },
    }
    problems = provenance.missing(doc)
    assert any("sections[2]" in p for p in problems)
    assert any("intervals.average_risk" in p for p in problems)
    assert any("unknown sources ['nope']" in p for p in problems)


def test_resolve_expands_ids_to_url_and_seen() -> None:
    doc = _load(CORPUS / "ontario_health" / "ontario-health-olsp-lung-screening.yaml")
    out = provenance.resolve(doc)
    rec = out["program"]["recommendations"][0]
    assert rec["verified_from"][0]["url"].startswith("https://")
    assert rec["verified_from"][0]["seen"] == "2026-11-23"
    assert any(f["unverified"] for f in out["facts"])


def test_superseded_documents_point_to_a_current_one() -> None:
    docs = {d["document_id"]: d for d in map(_load, TRACED)}
    for doc in docs.values():
        if doc.get("is_superseded"):
            target = docs.get(doc.get("superseded_by"))
            assert target is not None and not target.get("is_superseded"), doc["document_id"]
