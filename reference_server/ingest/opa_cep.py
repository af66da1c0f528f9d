"""Derive Centre for Effective Practice (CEP) clinical tool facts.

Reads the crawled CEP tool files (`../shared/data/opa/cep/*_extracted.json`) and writes, per
tool, a YAML skeleton in the corpus format (`corpus/FORMAT.md`, `tool:` block) whose summaries
and section texts are left for authors to write in their own words. Only facts are taken from
the source: title, URL, category, update date, navigation titles and anchors, feature flags and
the names of screening instruments. Re-running never overwrites authored text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict, get_args

import yaml

from .opa_cep_facts import (
    CepPage,
    clean_navigation,
    clean_title,
    derive_features,
    parse_date,
    screening_tools,
    skeleton_sections,
    tool_slug,
)
from .skeletons import write_record


class CepTool(TypedDict):
    """The `tool:` block of a CEP document (corpus/FORMAT.md)."""

    tool_id: str
    category: str | None
    conditions: list[str]
    features: dict[str, str | None]
    screening_tools: list[str]
    navigation: list[dict[str, str]]  # {title, anchor, summary}
    pdf_url: str | None


class CepRecord(TypedDict):
    """The derived facts of one CEP tool, in the corpus format (texts left empty)."""

    document_id: str
    source_org: str
    document_type: str
    title: str
    source_url: str
    policy_number: str | None
    published_date: str | None
    effective_date: str | None
    updated_date: str | None
    review_date: str | None
    topics: list[str]
    is_superseded: bool
    superseded_by: str | None
    companion_of: str | None
    derived_from: str
    tool: CepTool
    sections: list[dict[str, str]]  # {heading, text}


# The facts `merge` refreshes in an authored document, and in its `tool:` block.
RefreshedField = Literal[
    "source_org",
    "document_type",
    "title",
    "source_url",
    "published_date",
    "effective_date",
    "updated_date",
    "derived_from",
]
_REFRESHED: tuple[RefreshedField, ...] = get_args(RefreshedField)
_REFRESHED_TOOL: tuple[Literal["tool_id", "category", "features", "screening_tools"], ...] = (
    "tool_id",
    "category",
    "features",
    "screening_tools",
)


def derive(path: Path) -> CepRecord:
    """Corpus record (facts only, empty texts) for one CEP tool file."""
    raw: CepPage = json.loads(path.read_text(encoding="utf-8"))
    document_id = f"cep-{tool_slug(raw)}"
    date = parse_date(raw.get("last_updated"))
    nav = clean_navigation(raw.get("navigation") or [])
    return {
        "document_id": document_id,
        "source_org": "cep",
        "document_type": "tool",
        "title": re.sub(r"\s+", " ", raw["title"]).strip(),
        "source_url": raw["source_url"],
        "policy_number": None,
        "published_date": date,
        "effective_date": date,
        "updated_date": date,
        "review_date": None,
        "topics": [],
        "is_superseded": False,
        "superseded_by": None,
        "companion_of": None,
        "derived_from": f"opa/cep/{path.name}",
        "tool": {
            "tool_id": document_id,
            "category": raw.get("tool_category"),
            "conditions": [],
            "features": derive_features(raw, nav),
            "screening_tools": screening_tools(raw),
            "navigation": [{**n, "summary": ""} for n in nav],
            "pdf_url": None,
        },
        "sections": skeleton_sections(raw, nav),
    }


def merge(existing: CepRecord, facts: CepRecord) -> CepRecord:
    """Refresh derived facts; keep authored topics, conditions, summaries and sections.
    `existing` is the authored file as read: a document in the same format, texts written."""
    merged = existing.copy()
    for key in _REFRESHED:
        merged[key] = facts[key]
    tool = existing["tool"].copy() if existing.get("tool") else facts["tool"].copy()
    for tool_key in _REFRESHED_TOOL:
        tool[tool_key] = facts["tool"][tool_key]
    summaries = {n.get("anchor"): n.get("summary", "") for n in tool.get("navigation") or []}
    tool["navigation"] = [
        {**n, "summary": summaries.get(n["anchor"], "")} for n in facts["tool"]["navigation"]
    ]
    merged["tool"] = {**facts["tool"], **tool}
    return merged


class _Dumper(yaml.SafeDumper):
    """Safe dumper writing multi-line texts as literal blocks, so authored prose stays readable."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(record: Mapping[str, object]) -> str:
    """YAML text for one corpus record."""
    return yaml.dump(record, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


# Published CEP tools end with an acknowledgement-and-legal section; crawled work pages do not.
_ACKNOWLEDGEMENT = re.compile(r"acknowledge?ments?|legal", re.I)
_UNPUBLISHED_TITLE = re.compile(r"\b(draft(ing)?|staging)\b", re.I)
_HUB_TITLE = re.compile(r"\blearning cent(re|er)\b|\bindex\b", re.I)
# Fields that are the page itself, not where or when it was crawled (ids, URL, slug, title and
# crawl stamps differ between two URLs of one tool).
_CONTENT_FIELDS = (
    "tool_category",
    "last_updated",
    "navigation",
    "features",
    "key_content",
    "sections",
)


@dataclass(frozen=True)
class CepSourceOutcome:
    """What ingestion made of one crawled CEP file: the corpus document it became, or why it is
    left out (exactly one of the two is set)."""

    source_file: str  # file name in the CEP source folder
    title: str
    document_id: str | None = None
    excluded_because: str | None = None


@dataclass(frozen=True)
class CepIngestion:
    """Every crawled CEP file with its outcome, in file-name order."""

    outcomes: tuple[CepSourceOutcome, ...]

    @property
    def ingested(self) -> dict[str, str]:
        """Source file -> corpus document id."""
        return {o.source_file: o.document_id for o in self.outcomes if o.document_id}

    @property
    def excluded(self) -> dict[str, str]:
        """Source file -> why it is not a corpus document."""
        return {o.source_file: o.excluded_because for o in self.outcomes if o.excluded_because}


def content_fingerprint(raw: CepPage) -> str:
    """Hash of what a reader of the page sees, so one tool crawled under two URLs hashes alike."""
    content = {key: raw.get(key) for key in _CONTENT_FIELDS}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def not_a_tool(raw: CepPage) -> str | None:
    """Why a crawled page is not a published clinical tool (a draft, a staging page, a
    learning-centre hub), or None when it is one."""
    title = re.sub(r"\s+", " ", raw.get("title") or "").strip()
    headings = [clean_title(s.get("heading", "")) for s in raw.get("sections") or []]
    published = any(_ACKNOWLEDGEMENT.search(h) for h in headings)
    if _UNPUBLISHED_TITLE.search(title):
        return f"unpublished work page: its title {title!r} marks a draft or staging copy" + (
            ""
            if published
            else ", and it lacks the acknowledgement section published tools end with"
        )
    if _HUB_TITLE.search(title):
        return (
            f"learning-centre page ({title!r}) collecting resources on {', '.join(headings[:3])}: "
            "it covers no clinical condition, so it is not a clinical tool"
        )
    return None


def ingestion_outcome(source_dir: Path) -> CepIngestion:
    """Which crawled CEP file became which corpus document, and which were excluded and why.

    One tool crawled under two URLs (e.g. `opioid-use-disorder` and `opioid-use-disorder-oud-tool`,
    same content) yields one document: the shortest slug, the parent page."""
    raws: dict[str, CepPage] = {
        p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(source_dir.glob("*.json"))
    }
    kept_for: dict[str, str] = {}  # content fingerprint -> the file that represents it
    for name in sorted(raws, key=lambda n: (len(tool_slug(raws[n])), n)):
        if not not_a_tool(raws[name]):
            kept_for.setdefault(content_fingerprint(raws[name]), name)
    outcomes = []
    for name, raw in raws.items():
        title = re.sub(r"\s+", " ", raw.get("title") or "").strip()
        reason = not_a_tool(raw)
        kept = kept_for.get(content_fingerprint(raw))
        if reason is None and kept != name:
            reason = (
                f"duplicate of {kept}: the same tool (identical sections, navigation, features "
                "and date) crawled under a second URL"
            )
        if reason:
            outcomes.append(CepSourceOutcome(name, title, excluded_because=reason))
        else:
            outcomes.append(CepSourceOutcome(name, title, document_id=f"cep-{tool_slug(raw)}"))
    return CepIngestion(tuple(outcomes))


def write_skeletons(source_dir: Path, out_dir: Path) -> list[Path]:
    """Merge facts into authored files; write new tools under `_skeletons/`.

    Only files that `ingestion_outcome` keeps become documents: drafts, staging and hub pages
    and second URLs of one tool are left out (`main` prints each with its reason)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outcome = ingestion_outcome(source_dir)
    written = []
    for name in outcome.ingested:
        target = write_record(out_dir, derive(source_dir / name), merge, dump=dump)
        if target.parent == out_dir:  # now authored: drop its old skeleton
            (out_dir / "_skeletons" / target.name).unlink(missing_ok=True)
        written.append(target)
    return sorted(written)


def main(argv: list[str] | None = None) -> int:
    """`ocm ingest cep [SOURCE_DIR] [OUT_DIR]`: refresh facts, write skeletons."""
    import argparse

    parser = argparse.ArgumentParser(prog="ocm ingest cep", description=main.__doc__)
    parser.add_argument("source_dir", nargs="?", type=Path, default=Path("../shared/data/opa/cep"))
    parser.add_argument(
        "out_dir", nargs="?", type=Path, default=Path(__file__).parents[1] / "corpus/opa/cep"
    )
    args = parser.parse_args(argv)
    for p in write_skeletons(args.source_dir, args.out_dir):
        print(p)
    for name, reason in ingestion_outcome(args.source_dir).excluded.items():
        print(f"excluded {name}: {reason}")
    return 0
