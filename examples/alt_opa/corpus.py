"""The publishers' extracts -> documents and sections, by this backend's own rules.

Three shapes arrive in the data folder (one sub-folder per organisation), each read by its
own module, which cuts a document into sections by that shape's heading rules: CPSO pages in
Markdown (:mod:`examples.alt_opa.cpso_pages`), CEP tools' section summaries
(:mod:`examples.alt_opa.cep_tools`) and PHO PDF text (:mod:`examples.alt_opa.pho_pdfs`).

Paragraphs that repeat in several documents (publisher boilerplate) are dropped; sections with
reference lists (endnotes, references, acknowledgements) are kept for look-up but not searched.
Documents whose text is identical are kept once, under the shorter official URL. Documents are
numbered ``doc0001``... in (organisation, URL) order and sections ``<doc>-secNN`` in reading
order; a paragraph of a section is ``<doc>-secNN-pK``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from examples.alt_opa.cep_tools import read_cep
from examples.alt_opa.cpso_pages import read_cpso
from examples.alt_opa.pho_pdfs import read_pho
from examples.alt_opa.raw_documents import Extract, RawDoc, letter_words, squash

DATA_ENV = "ALT_OPA_DATA"
# <repo>/../shared/data/opa
DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "opa"

ORG_NAMES = {
    "cpso": "College of Physicians and Surgeons of Ontario",
    "cep": "Centre for Effective Practice",
    "pho": "Public Health Ontario",
    "ontario_health": "Ontario Health",
    "moh": "Ontario Ministry of Health",
}
ORG_ORDER = ("cpso", "cep", "pho", "ontario_health", "moh")
REFERENCE_HEADINGS = re.compile(
    r"^(end ?notes?|references?( and resources)?|notes|acknowledge?ments?\b.*|bibliography)$",
    re.IGNORECASE,
)
# pages the publisher has not released (a crawl also picks up staging and draft copies)
UNPUBLISHED = re.compile(r"\b(staging|drafting|draft)\b|\*\s*$", re.IGNORECASE)
BOILERPLATE_MIN_DOCS = 4
BOILERPLATE_MIN_CHARS = 40


class CorpusError(RuntimeError):
    """The data folder is missing or holds no readable document."""


@dataclass(frozen=True)
class Document:
    doc_id: str
    org: str
    title: str
    url: str
    doc_type: str
    policy_level: str | None
    published_date: str | None
    effective_date: str | None
    updated_date: str | None
    topics: tuple[str, ...]
    source_file: str


@dataclass(frozen=True)
class Section:
    section_id: str
    doc_id: str
    idx: int
    heading: str
    context: tuple[str, ...]
    text: str
    page: int | None = None
    anchor: str | None = None
    searchable: bool = True
    extra_terms: str = ""

    def paragraphs(self) -> list[str]:
        """The section's paragraphs (blank-line separated; the whole text when there is one)."""
        parts = [p.strip() for p in re.split(r"\n\s*\n", self.text)]
        return [p for p in parts if p]


@dataclass
class Corpus:
    documents: dict[str, Document]
    sections: list[Section]
    by_id: dict[str, Section] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {s.section_id: s for s in self.sections}

    def document_sections(self, doc_id: str) -> list[Section]:
        return [s for s in self.sections if s.doc_id == doc_id]


# ------------------------------------------------------------------------------ loading


def data_folder() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


def _files(folder: Path) -> Iterator[tuple[str, Path]]:
    for org_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for path in sorted(org_dir.glob("*.json")):
            yield org_dir.name.lower(), path


def _vocabulary(texts: Iterable[str]) -> set[str]:
    vocab: set[str] = set()
    for text in texts:
        vocab.update(w.lower() for w in letter_words(text))
    return vocab


def _drop_boilerplate(docs: list[RawDoc]) -> None:
    seen: Counter[str] = Counter()
    for doc in docs:
        paragraphs = {
            squash(p)
            for s in doc.sections
            for p in re.split(r"\n\s*\n", s.text)
            if len(p.strip()) >= BOILERPLATE_MIN_CHARS
        }
        seen.update(paragraphs)
    common = {p for p, n in seen.items() if n >= BOILERPLATE_MIN_DOCS}
    for doc in docs:
        kept = []
        for s in doc.sections:
            kept_paragraphs = [p for p in re.split(r"\n\s*\n", s.text) if squash(p) not in common]
            s.text = "\n\n".join(p.strip() for p in kept_paragraphs if p.strip())
            if s.text:
                kept.append(s)
        doc.sections = kept


def _fingerprint(doc: RawDoc) -> str:
    body = "\n".join(f"{s.heading}\n{squash(s.text)}" for s in doc.sections)
    return hashlib.sha256(body.encode()).hexdigest()


def load_corpus(folder: Path | None = None) -> Corpus:
    """Read every ``<org>/*.json`` under ``folder`` into numbered documents and sections."""
    folder = folder or data_folder()
    if not folder.is_dir():
        raise CorpusError(f"OPA data folder not found: {folder} (set {DATA_ENV})")
    loaded: list[tuple[str, str, Extract]] = []
    for org, path in _files(folder):
        try:
            data: Extract = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # an unreadable extract is left out, the others still serve
        if isinstance(data, dict):
            loaded.append((org, f"{org}/{path.name}", data))
    clean = _vocabulary(
        str(d.get("content") or "")
        + " ".join(str(s.get("summary") or "") for s in d.get("sections") or [])
        for org, _, d in loaded
        if org != "pho"
    )
    raw: list[RawDoc] = []
    for org, source, data in loaded:
        if org == "cpso" or (org not in ("cep", "pho") and data.get("content")):
            doc = read_cpso(data, source)
        elif org == "cep":
            doc = read_cep(data, source)
        elif org == "pho":
            doc = read_pho(data, source, clean)
        else:
            continue
        doc.org = org if org in ORG_NAMES else doc.org
        if doc.sections and doc.title and not UNPUBLISHED.search(doc.title):
            raw.append(doc)
    if not raw:
        raise CorpusError(f"no OPA documents could be read under {folder}")
    _drop_boilerplate(raw)

    unique: dict[str, RawDoc] = {}
    for doc in raw:
        key = _fingerprint(doc)
        kept = unique.get(key)
        if kept is None or (len(doc.url), doc.url) < (len(kept.url), kept.url):
            unique[key] = doc
    ordered = sorted(
        (d for d in unique.values() if d.sections),
        key=lambda d: (ORG_ORDER.index(d.org) if d.org in ORG_ORDER else 99, d.url.casefold()),
    )

    documents: dict[str, Document] = {}
    sections: list[Section] = []
    for n, doc in enumerate(ordered, start=1):
        doc_id = f"doc{n:04d}"
        documents[doc_id] = Document(
            doc_id=doc_id,
            org=doc.org,
            title=doc.title,
            url=doc.url,
            doc_type=doc.doc_type,
            policy_level=doc.policy_level,
            published_date=doc.published_date,
            effective_date=doc.effective_date,
            updated_date=doc.updated_date,
            topics=doc.topics,
            source_file=doc.source_file,
        )
        for i, s in enumerate(doc.sections, start=1):
            sections.append(
                Section(
                    section_id=f"{doc_id}-sec{i:02d}",
                    doc_id=doc_id,
                    idx=i,
                    heading=s.heading,
                    context=s.context,
                    text=s.text,
                    page=s.page,
                    anchor=s.anchor,
                    searchable=not REFERENCE_HEADINGS.match(s.heading),
                    extra_terms=s.extra_terms,
                )
            )
    return Corpus(documents=documents, sections=sections)
