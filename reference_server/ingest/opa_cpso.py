"""Derive CPSO document facts (titles, URLs, dates, headings, expectation/advice level).

Reads the crawled CPSO JSON files (`../shared/data/opa/cpso/*.json`) and writes, per
document, a YAML skeleton in the corpus format (`corpus/FORMAT.md`) whose `text` fields are
left for authors to write in their own words. Re-running never overwrites text already
written: only the derived facts are refreshed, so a newer crawl can be merged in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dates import parse_dates
from .skeletons import refresh_facts, write_record

_SKIP_HEADINGS = {"endnotes", "references", "footnotes"}


def _field(content: str, label: str) -> str:
    m = re.search(rf"\*\*{label}:?\s*\*\*:?\s*([^\n]*)", content, re.I)
    return m.group(1).strip() if m else ""


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def section_level(text: str) -> str | None:
    """Regulatory language: 'must'/'shall'/'required to' is an expectation; 'advised'/'should' only
    is advice; neither is None (the index then falls back on the document type)."""
    t = text.lower()
    if re.search(r"\b(must|shall|required to)\b", t):
        return "expectation"
    if re.search(r"\b(advised|advisable|should)\b", t):
        return "advice"
    return None


def _clean_heading(h: str) -> str:
    return re.sub(r"\d+$", "", h).strip()


@dataclass
class CpsoFacts:
    document_id: str
    record: dict[str, Any]


def _flatten_sections(sections: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for s in sections:
        heading = _clean_heading(s.get("heading", ""))
        if heading.lower() in _SKIP_HEADINGS:
            continue
        subs = s.get("subsections") or []
        if subs:
            if (s.get("content") or "").strip():
                out.append((heading, s["content"]))
            for sub in subs:
                out.append((_clean_heading(sub.get("heading", "")), sub.get("content") or ""))
        else:
            out.append((heading, s.get("content") or ""))
    return [(h, c) for h, c in out if h]


def derive(path: Path) -> CpsoFacts:
    raw = json.loads(path.read_text(encoding="utf-8"))
    content = raw.get("content", "")
    url = raw["source_url"]
    is_advice = raw.get("document_type") == "advice" or "advice-to-the-profession" in url.lower()
    tail = url.rstrip("/").split("/")
    base = slug(tail[-2] if is_advice else tail[-1])
    document_id = f"cpso-{base}-advice" if is_advice else f"cpso-{base}"
    approved = parse_dates(_field(content, "Approved by (?:Council|the Board)"))
    reviewed = parse_dates(_field(content, "Reviewed and Updated"))
    last_updated = parse_dates(_field(content, "Last Updated"))
    published = approved[0] if approved else (last_updated[0] if last_updated else None)
    history = reviewed or last_updated or approved
    updated = history[-1] if history else None
    title = raw["title"].strip()
    if title.isupper():
        title = title.title().replace("To The", "to the")
    sections = [
        {"heading": h, "policy_level": section_level(c), "text": ""}
        for h, c in _flatten_sections(raw.get("sections") or [])
    ]
    record = {
        "document_id": document_id,
        "source_org": "cpso",
        "document_type": "advice" if is_advice else raw.get("document_type", "policy"),
        "title": title,
        "source_url": url,
        "policy_number": None,
        "published_date": published,
        "effective_date": updated,
        "updated_date": updated,
        "review_date": None,
        "topics": [],
        "is_superseded": False,
        "superseded_by": None,
        "companion_of": f"cpso-{base}" if is_advice else None,
        "derived_from": f"opa/cpso/{path.name}",
        "sections": sections,
    }
    return CpsoFacts(document_id, record)


def merge(existing: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """Refresh derived facts while keeping authored text, topics and sections."""
    return refresh_facts(
        existing,
        facts,
        ("source_org", "title", "source_url", "published_date", "updated_date", "derived_from"),
    )


def write_skeletons(source_dir: Path, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        write_record(out_dir, derive(path).record, merge)
        for path in sorted(source_dir.glob("*.json"))
    ]


def main(argv: list[str] | None = None) -> int:
    """`python -m reference_server.ingest cpso [SOURCE_DIR] [OUT_DIR]`: refresh facts, write skeletons."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m reference_server.ingest cpso", description=main.__doc__
    )
    parser.add_argument("source_dir", nargs="?", type=Path, default=Path("../shared/data/opa/cpso"))
    parser.add_argument(
        "out_dir", nargs="?", type=Path, default=Path(__file__).parents[1] / "corpus/opa/cpso"
    )
    args = parser.parse_args(argv)
    written = write_skeletons(args.source_dir, args.out_dir)
    print(f"{len(written)} CPSO documents refreshed or drafted under {args.out_dir}")
    return 0
