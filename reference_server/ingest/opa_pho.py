"""Derive Public Health Ontario (PIDAC) IPAC document facts and write a YAML skeleton.

Reads the PDF extraction of *Infection Prevention and Control for Clinical Office Practice*
(`../shared/data/opa/pho/bp-clinical-office-practice.json`, shape `{title, content, sections,
metadata}`) and derives, without copying any prose:

* the full title, publication / revision dates and the source PDF file name;
* the document outline (numbered chapters ``N. Title`` and lettered subsections ``A. Title``,
  with the page each starts on), rebuilt from the page-marked text because the extraction's
  own ``sections`` are split on arbitrary upper-case lines;
* where the main IPAC themes are covered (hand hygiene, PPE, additional precautions,
  environmental cleaning, reprocessing, Spaulding classification, sharps, immunization), as
  outline headings and page numbers;
* the Spaulding table (class -> minimum reprocessing level -> example items);
* the frequency-of-cleaning items (Table 1's title and page, and every item/frequency pair the
  extraction still holds: checklists, toys, sterile storage, sterilizer and HLD monitoring...);
* the numbered legislated ("shall") practices and best-practice recommendations, as number,
  level and topic only.

It then writes a skeleton in the corpus format (`corpus/FORMAT.md`): document facts plus one
section per chosen outline heading with empty ``text`` for authors to write in their own words,
and a ``derived_facts`` block for reference. As with `opa_cpso`, a skeleton goes to
``<out>/_skeletons/`` unless an authored document already exists, in which case only the
derived document facts are refreshed and authored text is kept.

Run: ``ocm ingest pho SOURCE.json OUT_DIR [--print]``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from .opa_pho_ipac import (
    CleaningFrequency,
    NumberedStatement,
    SpauldingRow,
    ThemeLocation,
    derive_cleaning_frequencies,
    derive_numbered_statements,
    derive_spaulding,
    locate_themes,
)
from .opa_pho_outline import (
    TableEntry,
    cross_referenced_titles,
    derive_outline,
    derive_tables,
    derive_title,
)
from .opa_pho_text import (
    PhoExtraction,
    Rejoiner,
    first_group,
    full_text,
    missing_pages,
    month_date,
    paged_lines,
    repair,
)
from .skeletons import refresh_facts, safe_dump, write_record

DOCUMENT_ID = "pho-ipac-clinical-office-practice"
SOURCE_URL = (
    "https://www.publichealthontario.ca/-/media/documents/b/2013/bp-clinical-office-practice.pdf"
)

# Outline headings that become corpus sections ("N" chapter or "N.L" subsection), in order.
SECTION_PLAN = [
    "4",
    "4.A",
    "4.B",
    "4.C",
    "4.D",
    "5",
    "6",
    "7",
    "7.A",
    "7.B",
    "8",
    "9",
    "10",
    "10.B",
    "10.E",
    "1",
    "2",
]


class PhoSection(TypedDict):
    heading: str
    text: str  # written by authors
    ipac: None  # the section's IPAC facts, written by authors


class PhoRecord(TypedDict):
    """The derived facts of the PHO document, in the corpus format (texts left empty)."""

    document_id: str
    source_org: str
    document_type: str
    title: str
    source_url: str
    policy_number: None
    published_date: str | None
    effective_date: str | None
    updated_date: str | None
    review_date: None
    topics: list[str]
    is_superseded: bool
    superseded_by: None
    companion_of: None
    derived_from: str
    sections: list[PhoSection]


class OutlineSubsection(TypedDict):
    heading: str
    page: int | None


class OutlineChapter(TypedDict):
    chapter: str
    page: int | None
    subsections: list[OutlineSubsection]


class MissingChapter(TypedDict):
    chapter: int
    title_from_cross_reference: str | None


class PhoDerived(TypedDict):
    """What the extraction shows about the PDF, for authors (a skeleton's `derived_facts`)."""

    source_pdf: str
    page_count: int | None
    outline: list[OutlineChapter]
    pages_missing_from_extraction: list[str]
    chapters_missing_from_extraction: list[MissingChapter]
    headings_of_missing_chapters: list[OutlineSubsection]
    tables: list[TableEntry]
    theme_locations: dict[str, ThemeLocation]
    spaulding: list[SpauldingRow]
    cleaning_frequencies: list[CleaningFrequency]
    numbered_statements: dict[str, list[NumberedStatement]]


class PhoSkeleton(PhoRecord):
    derived_facts: PhoDerived


@dataclass
class PhoFacts:
    document_id: str
    record: PhoRecord
    derived: PhoDerived


def derive(path: Path) -> PhoFacts:
    raw: PhoExtraction = json.loads(path.read_text(encoding="utf-8"))
    meta = raw.get("metadata") or {}
    text = full_text(raw)
    fix = Rejoiner(repair(text))
    lines = paged_lines(raw)
    outline, missing, orphans = derive_outline(lines, fix)
    xref = cross_referenced_titles(text, fix)
    body_end = next(
        (
            i
            for i, (_, line) in enumerate(lines)
            if line.strip() in {"Abbreviations", "Glossary of Terms"}
            or line.startswith("II. Summary")
        ),
        len(lines),
    )

    published = month_date(str(meta.get("published_date") or "")) or month_date(
        first_group(r"Published:\s*([A-Za-z]+ \d{4})", text)
    )
    revised = month_date(str(meta.get("revision_date") or "")) or month_date(
        first_group(r"revision:\s*([A-Za-z]+ \d{4})", text)
    )

    labels: dict[str, str] = {c.number: c.title for c in outline}
    labels.update({f"{c.number}.{s.number}": s.title for c in outline for s in c.children})
    for key, title in xref.items():  # chapters/subsections lost by the extraction
        labels.setdefault(key, title)
    sections: list[PhoSection] = [
        {"heading": labels[k], "text": "", "ipac": None} for k in SECTION_PLAN if k in labels
    ]

    record: PhoRecord = {
        "document_id": DOCUMENT_ID,
        "source_org": "pho",
        "document_type": "guideline",
        "title": derive_title(raw),
        "source_url": SOURCE_URL,
        "policy_number": None,
        "published_date": published,
        "effective_date": revised,
        "updated_date": revised,
        "review_date": None,
        "topics": [
            "infection prevention and control",
            "ipac",
            "clinical office",
            "hand hygiene",
            "ppe",
            "reprocessing",
            "sterilization",
            "environmental cleaning",
        ],
        "is_superseded": False,
        "superseded_by": None,
        "companion_of": None,
        "derived_from": f"opa/pho/{path.name}",
        "sections": sections,
    }
    tables = derive_tables(text, fix)
    for t in tables:
        # the list of tables is at the front; is the table itself anywhere after it?
        body = re.search(rf"Table {t['table']}:\s*\S", text[3000:], re.I)
        t["body_in_extraction"] = bool(body)
    derived: PhoDerived = {
        "source_pdf": (raw.get("source_file") or "").rsplit("/", 1)[-1],
        "page_count": meta.get("page_count"),
        "outline": [
            {
                "chapter": c.label(),
                "page": c.page,
                "subsections": [{"heading": s.label(), "page": s.page} for s in c.children],
            }
            for c in outline
        ],
        "pages_missing_from_extraction": missing_pages(lines, meta.get("page_count")),
        "chapters_missing_from_extraction": [
            {"chapter": n, "title_from_cross_reference": xref.get(str(n))} for n in missing
        ],
        "headings_of_missing_chapters": [
            {"heading": o["heading"], "page": o["page"]} for o in orphans
        ],
        "tables": tables,
        "theme_locations": locate_themes(lines, outline, orphans, body_end),
        "spaulding": derive_spaulding(text, fix),
        "cleaning_frequencies": derive_cleaning_frequencies(lines),
        "numbered_statements": derive_numbered_statements(text, fix),
    }
    return PhoFacts(DOCUMENT_ID, record, derived)


def merge(existing: dict[str, Any], facts: PhoRecord) -> dict[str, Any]:
    """Refresh derived document facts while keeping authored text, topics and sections."""
    return refresh_facts(
        existing, facts, ("source_org", "title", "source_url", "published_date", "derived_from")
    )


def write_skeleton(source: Path, out_dir: Path) -> Path:
    facts = derive(source)
    out_dir.mkdir(parents=True, exist_ok=True)
    skeleton: PhoSkeleton = {**facts.record, "derived_facts": facts.derived}
    return write_record(out_dir, facts.record, merge, skeleton=skeleton)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ocm ingest pho", description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="bp-clinical-office-practice.json")
    ap.add_argument("out_dir", type=Path, help="corpus/opa/pho")
    ap.add_argument(
        "--print", action="store_true", help="print the derived facts instead of writing"
    )
    args = ap.parse_args(argv)
    if args.print:
        facts = derive(args.source)
        skeleton: PhoSkeleton = {**facts.record, "derived_facts": facts.derived}
        sys.stdout.write(safe_dump(skeleton))
        return 0
    print(write_skeleton(args.source, args.out_dir))
    return 0
