"""Derive CPSO document facts (titles, URLs, dates, headings, expectation/advice level).

Reads the crawled CPSO JSON files (`../shared/data/opa/cpso/*.json`) and writes, per
document, a YAML skeleton in the corpus format (`corpus/FORMAT.md`) whose `text` fields are
left for authors to write in their own words. Re-running never overwrites text already
written: only the derived facts are refreshed, so a newer crawl can be merged in.

A crawl holds more files than documents: the same page saved twice, one text under an old and a
new URL, and possibly drafts, staging copies or index pages. `select` keeps one file per document
and names every other file with the reason it was left out (the ingestion report lists them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .dates import parse_dates
from .skeletons import literal_dump, refresh_facts, write_record

_SKIP_HEADINGS = {"endnotes", "references", "footnotes"}
# A heading inside the page text: a markdown heading, or a line that is only bold/italic text
# (Advice to the Profession documents mark their questions that way).
_CONTENT_HEADING = re.compile(
    r"^(?:#{2,4}\s+(?P<md>.+?)|\*{2,3}(?P<em>[^*\n]{3,400}?)\s*\*{2,3})\s*$", re.M
)
# Words in a URL or title that mark a page that is not a published document.
_NOT_PUBLISHED = re.compile(r"\b(draft|staging|preview|test[-_ ]?page)\b", re.I)
# Listing pages of the site, not documents.
_INDEX_SEGMENTS = {"policies", "policies-guidance", "statements-positions", "physicians", "en"}
_MIN_BODY_CHARS = 400


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
    h = re.sub(r"[*_]+", " ", h)
    h = re.sub(r"\^?\d+$", "", h.strip())
    return re.sub(r"\s+", " ", h).strip()


@dataclass
class CpsoFacts:
    document_id: str
    record: dict[str, Any]
    source_file: str = ""
    body: str = ""  # the page text after its title line, whitespace collapsed (duplicate check)


@dataclass(frozen=True)
class Exclusion:
    source_file: str
    reason: str


def _flatten_sections(sections: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for s in sections:
        heading = _clean_heading(s.get("heading", ""))
        if heading.lower() in _SKIP_HEADINGS:
            continue
        subs = s.get("subsections") or []
        if subs:
            if (s.get("content") or "").strip():
                out += _split_emphasised(heading, s["content"])
            for sub in subs:
                out += _split_emphasised(_clean_heading(sub.get("heading", "")), sub.get("content"))
        else:
            out += _split_emphasised(heading, s.get("content"))
    return [(h, c) for h, c in out if h]


def _split_emphasised(heading: str, content: str | None) -> list[tuple[str, str]]:
    """A crawled section whose text carries its own sub-headings (bold lines) as several sections:
    the text before the first one under `heading`, then one per sub-heading."""
    text = content or ""
    first = _CONTENT_HEADING.search(text)
    if first is None:
        return [(heading, text)]
    lead = text[: first.start()].strip()
    return ([(heading, lead)] if lead else []) + _content_sections(text)


def _content_sections(content: str) -> list[tuple[str, str]]:
    """Sections read from the page text itself, for pages whose crawl kept no headings but
    endnotes: split at markdown headings and at lines that are only emphasised text."""
    marks = list(_CONTENT_HEADING.finditer(content))
    out: list[tuple[str, str]] = []
    for m, nxt in zip(marks, [*marks[1:], None], strict=False):
        heading = _clean_heading(m.group("md") or m.group("em") or "")
        body = content[m.end() : nxt.start() if nxt else len(content)].strip()
        if heading.lower() in _SKIP_HEADINGS:
            break
        if heading and body and not heading.endswith(":"):
            out.append((heading, body))
    return out


def _lead_text(content: str) -> str:
    """The page text between its title line and its first section (endnotes excluded)."""
    lines = content.split("\n", 1)
    rest = lines[1] if len(lines) > 1 else ""
    return re.split(r"^#{2,4}\s", rest, maxsplit=1, flags=re.M)[0].strip()


def _body(content: str) -> str:
    text = content.split("\n", 1)[1] if "\n" in content else ""
    return re.sub(r"\s+", " ", text).strip()


def _section_records(raw: dict[str, Any], title: str, is_advice: bool) -> list[dict[str, Any]]:
    content = raw.get("content", "")
    # Questions an Advice document asks before its first crawled section belong to it too.
    lead = re.split(r"^##\s", content.split("\n", 1)[-1], maxsplit=1, flags=re.M)[0]
    found = _content_sections(lead) + _flatten_sections(raw.get("sections") or [])
    found = found or _content_sections(content)
    if not found and raw.get("document_type") == "statement":
        found = [(title, _lead_text(content))]  # a statement is one block of text under its title
    return [
        # An Advice to the Profession document binds no one, even where it quotes a legal duty.
        {"heading": h, "policy_level": "advice" if is_advice else section_level(c), "text": ""}
        for h, c in found
    ]


_MINOR_WORDS = {"a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}


def _title_case(title: str) -> str:
    """'ADVICE TO THE PROFESSION: CONFLICTS OF INTEREST' -> 'Advice to the Profession: Conflicts
    of Interest' (a crawled title in capitals, written as CPSO writes its other titles)."""
    words = title.lower().split(" ")
    return " ".join(
        w if i and w in _MINOR_WORDS and not words[i - 1].endswith(":") else w.capitalize()
        for i, w in enumerate(words)
    )


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
    title = re.sub(r"\s+", " ", raw["title"]).strip()
    if title.isupper():
        title = _title_case(title)
    sections = _section_records(raw, title, is_advice)
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
    return CpsoFacts(document_id, record, path.name, _body(content))


def _not_a_document(facts: CpsoFacts) -> str | None:
    """Why a crawled page is not a published document, or None when it is one."""
    url = facts.record["source_url"]
    if not (urlsplit(url).hostname or "").endswith("cpso.on.ca"):
        return f"not a CPSO page ({url})"
    if _NOT_PUBLISHED.search(url) or _NOT_PUBLISHED.search(facts.record["title"]):
        return f"draft or staging page, not a published document ({url})"
    if url.rstrip("/").rsplit("/", 1)[-1].lower() in _INDEX_SEGMENTS:
        return f"index page listing documents, not a document ({url})"
    if len(facts.body) < _MIN_BODY_CHARS:
        return f"no document text ({len(facts.body)} characters after the title)"
    return None


def _preference(facts: CpsoFacts) -> tuple[bool, bool, str]:
    """Which of several files of one document to keep: the one whose URL names the document's
    title (an older URL of the same text is a redirect), then the file the crawl named after its
    URL (`en_physicians_...`), then the first name."""
    url_slug = slug(facts.record["source_url"].rstrip("/").rsplit("/", 1)[-1])
    title_slug = slug(facts.record["title"].split(":")[-1])
    return (
        not (title_slug in url_slug or url_slug in title_slug),
        not facts.source_file.startswith("en_"),
        facts.source_file,
    )


def select(derived: list[CpsoFacts]) -> tuple[list[CpsoFacts], list[Exclusion]]:
    """One file per document (by URL, then by identical text), every other file with its reason."""
    excluded: list[Exclusion] = []
    documents: list[CpsoFacts] = []
    for facts in derived:
        reason = _not_a_document(facts)
        if reason:
            excluded.append(Exclusion(facts.source_file, reason))
        else:
            documents.append(facts)
    kept: list[CpsoFacts] = []
    for facts in sorted(documents, key=_preference):
        same = next(
            (k for k in kept if k.document_id == facts.document_id or k.body == facts.body), None
        )
        if same is None:
            kept.append(facts)
        elif same.document_id == facts.document_id:
            excluded.append(
                Exclusion(facts.source_file, f"the same page saved twice: kept {same.source_file}")
            )
        else:
            excluded.append(
                Exclusion(
                    facts.source_file,
                    f"the same text under another URL ({facts.record['source_url']}): "
                    f"kept {same.source_file}",
                )
            )
    kept.sort(key=lambda f: f.document_id)
    excluded.sort(key=lambda e: e.source_file)
    return kept, excluded


def read_source(source_dir: Path) -> tuple[list[CpsoFacts], list[Exclusion]]:
    """Every crawled file of `source_dir`, derived, then selected."""
    return select([derive(path) for path in sorted(source_dir.glob("*.json"))])


def merge(existing: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """Refresh derived facts while keeping authored text, topics and sections."""
    return refresh_facts(
        existing,
        facts,
        ("source_org", "title", "source_url", "published_date", "updated_date", "derived_from"),
    )


def write_skeletons(source_dir: Path, out_dir: Path) -> list[Path]:
    """Refresh the facts of authored documents; draft the others under `_skeletons/`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    kept, _ = read_source(source_dir)
    written = []
    for facts in kept:
        target = write_record(out_dir, facts.record, merge, dump=literal_dump)
        if target.parent == out_dir:  # authored now: its old skeleton is obsolete
            (out_dir / "_skeletons" / target.name).unlink(missing_ok=True)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    """`ocm ingest cpso [SOURCE_DIR] [OUT_DIR]`: refresh facts, write skeletons."""
    import argparse

    parser = argparse.ArgumentParser(prog="ocm ingest cpso", description=main.__doc__)
    parser.add_argument("source_dir", nargs="?", type=Path, default=Path("../shared/data/opa/cpso"))
    parser.add_argument(
        "out_dir", nargs="?", type=Path, default=Path(__file__).parents[1] / "corpus/opa/cpso"
    )
    args = parser.parse_args(argv)
    written = write_skeletons(args.source_dir, args.out_dir)
    print(f"{len(written)} CPSO documents refreshed or drafted under {args.out_dir}")
    return 0
