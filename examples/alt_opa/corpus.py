"""The publishers' extracts -> documents and sections, by this backend's own rules.

Three shapes arrive in the data folder (one sub-folder per organisation):

* CPSO pages: the whole page as Markdown in ``content``. A section starts at every Markdown
  heading below the title (text before the first one sits under the page title); headings
  with an empty body only give context. On *Advice to the Profession* pages each question
  (a line that is bold and nothing else) starts a further section under the same heading,
  with the question as its first line: the question is text of the page, not a heading.
* CEP tools: a list of top-level ``sections`` with a ``summary`` each (the tools' pages are
  not in the extract); the sub-headings are kept as extra search terms.
* PHO PDF extracts: the PDF text in the sections' ``full_content``. It is cut into pages by the
  running header (``<title> | <Month Year>  <page>``) and into sections by numbered,
  lettered and page-top headings; words the PDF extraction split (``Of fice``) are joined
  when the joined word is known and one part is not a word.

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
from typing import Any

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
# the extracts' document types -> the vocabulary the published schema filters on
DOC_TYPES = {
    "policy": "policy",
    "advice": "advice",
    "statement": "statement",
    "clinical_tool": "tool",
    "tool": "tool",
    "ipac-guidance": "guideline",
    "guideline": "guideline",
    "bulletin": "bulletin",
}
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


# ------------------------------------------------------------------------------ raw records


@dataclass
class _RawSection:
    heading: str
    context: tuple[str, ...]
    text: str
    page: int | None = None
    anchor: str | None = None
    extra_terms: str = ""


@dataclass
class _RawDoc:
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
    sections: list[_RawSection]


# ------------------------------------------------------------------------------ small helpers

_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_DATE = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+(?:(\d{1,2}),?\s+)?(\d{4})\b",
    re.IGNORECASE,
)


def iso_dates(text: str) -> list[str]:
    """Every 'Month YYYY' / 'Month D, YYYY' in ``text`` as ISO dates (day 1 when none)."""
    out = []
    for month, day, year in _DATE.findall(text or ""):
        out.append(f"{int(year):04d}-{_MONTHS[month.lower()]:02d}-{int(day or 1):02d}")
    return out


def _squash(text: str) -> str:
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def _tidy_block(lines: Iterable[str]) -> str:
    text = "\n".join(line.rstrip() for line in lines)
    text = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", text)
    return text.strip()


def clean_heading(text: str) -> str:
    """A heading without markup, footnote numbers glued to its end, or a 'New' badge."""
    text = _squash(_clean_markdown(text))
    text = re.sub(r"(?<=[a-z])New$", "", text)
    text = re.sub(r"(?<=[A-Za-z)])\d+(?:\s*[,\-\u2013]\s*\d+)*$", "", text)
    return text.strip(" :")


def display_title(title: str) -> str:
    """Titles set in capitals by the publisher are shown in title case."""
    title = _squash(title)
    if title.upper() != title:
        return title
    small = {"a", "an", "and", "as", "at", "for", "in", "of", "on", "or", "the", "to", "with"}
    words = title.lower().split(" ")
    return " ".join(w if (i and w in small) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def _topic(text: str) -> str:
    return _squash(re.sub(r"[-_/]+", " ", text.casefold()))


# ------------------------------------------------------------------------------ CPSO (Markdown)

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_CARET = re.compile(r"\^\d+")
_EMPH = re.compile(r"\*{1,3}")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_META = re.compile(
    r"^\*\*\s*(approved by council|reviewed and updated|last updated|companion resources?|"
    r"effective date|originally published|publication date)\s*:?\s*\*\*\s*:?\s*(.*)$",
    re.IGNORECASE,
)


def _clean_markdown(line: str) -> str:
    line = line.replace("\u00a0", " ").replace("[](#)", "")
    line = _LINK.sub(r"\1", line)
    line = _CARET.sub("", line)
    line = _EMPH.sub("", line)
    return re.sub(r"[ \t]+", " ", line).rstrip()


def _bold_heading(line: str) -> str | None:
    """The text of a line that is bold and nothing else (its markers may be split, as in
    ``***A question*****?**``), when it is short or a question."""
    if not (line.startswith("**") and line.endswith("**")):
        return None
    inner = clean_heading(line)
    if not inner or len(inner) > 160 or _clean_markdown(line).strip().endswith(":"):
        return None
    if inner.endswith("?") or len(inner.split()) <= 12:
        return inner
    return None


def _cpso(data: dict[str, Any], source: str) -> _RawDoc:
    title = display_title(str(data.get("title") or "").strip())
    meta: dict[str, list[str]] = {}
    sections: list[_RawSection] = []
    stack: list[tuple[int, str]] = []
    heading = title  # text before the first heading sits under the page title
    question = ""
    body: list[str] = []
    in_companion = False

    def flush() -> None:
        text = _tidy_block(body)
        if text:
            context = tuple(h for _, h in stack[:-1]) if stack else ()
            sections.append(_RawSection(heading, context, text, extra_terms=question))

    for raw in str(data.get("content") or "").splitlines():
        line = raw.replace("\u00a0", " ")
        stripped = line.strip()
        m_meta = _META.match(stripped)
        if m_meta:
            label = m_meta.group(1).lower()
            meta.setdefault(label, []).extend(iso_dates(m_meta.group(2)))
            in_companion = label.startswith("companion")
            continue
        if in_companion:
            if not stripped or stripped.startswith(("-", "*", "[")):
                continue
            in_companion = False
        m_head = _MD_HEADING.match(stripped)
        if m_head and len(m_head.group(1)) == 1:
            continue  # the page title
        name = clean_heading(m_head.group(2)) if m_head else ""
        if name:
            flush()
            body, question = [], ""
            level = len(m_head.group(1)) if m_head else 0
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, name))
            heading = name
            continue
        bold = _bold_heading(stripped)
        if bold:  # a question of an Advice page: a new passage under the same heading
            flush()
            body, question = [], bold
        body.append(_clean_markdown(line))
    flush()

    raw_type = str(data.get("document_type") or "policy")
    doc_type = DOC_TYPES.get(raw_type, "policy")
    level_of = {"policy": "expectation", "advice": "advice"}
    all_dates = sorted(d for dates in meta.values() for d in dates)
    revised = sorted(meta.get("reviewed and updated", []) + meta.get("last updated", []))
    approved = meta.get("approved by council", [])
    plain = re.sub(r"^advice to the profession:\s*", "", title, flags=re.IGNORECASE)
    return _RawDoc(
        org="cpso",
        title=title,
        url=str(data.get("source_url") or ""),
        doc_type=doc_type,
        policy_level=data.get("policy_level") or level_of.get(doc_type),
        published_date=min(approved) if approved else None,
        effective_date=all_dates[-1] if all_dates else None,
        updated_date=revised[-1] if revised else None,
        topics=(_topic(plain),),
        source_file=source,
        sections=sections,
    )


# ------------------------------------------------------------------------------ CEP (summaries)


def _cep(data: dict[str, Any], source: str) -> _RawDoc:
    anchors = {
        clean_heading(str(n.get("title") or "")).casefold(): str(n.get("anchor") or "").lstrip("#")
        for n in data.get("navigation") or []
        if n.get("anchor")
    }
    sections = []
    for sec in data.get("sections") or []:
        heading = clean_heading(str(sec.get("heading") or ""))
        text = _squash(str(sec.get("summary") or sec.get("content") or ""))
        subs: list[str] = []
        for sub in sec.get("subsections") or []:
            name = clean_heading(str(sub.get("heading") or ""))
            if name and name not in subs:
                subs.append(name)
        if not heading or not text:
            continue
        sections.append(
            _RawSection(
                heading,
                (),
                text,
                anchor=anchors.get(heading.casefold()) or None,
                extra_terms=" ".join(subs),
            )
        )
    key = data.get("key_content") or {}
    tools = [_topic(t) for t in key.get("assessment_tools") or [] if isinstance(t, str)]
    category = _topic(str(data.get("tool_category") or ""))
    title = display_title(str(data.get("title") or "").strip())
    stamp = _squash(str(data.get("last_updated") or ""))
    updated = iso_dates(stamp) if _DATE.fullmatch(stamp) else []
    topics = tuple(dict.fromkeys(t for t in (category, _topic(title), *tools) if t))
    return _RawDoc(
        org="cep",
        title=title,
        url=str(data.get("source_url") or ""),
        doc_type=DOC_TYPES.get(str(data.get("document_type") or ""), "tool"),
        policy_level=None,
        published_date=None,
        effective_date=None,
        updated_date=updated[-1] if updated else None,
        topics=topics,
        source_file=source,
        sections=sections,
    )


# ------------------------------------------------------------------------------ PHO (PDF text)

_RUNNING = re.compile(
    r"^(?P<running>\S.{8,160}?)\s*\|\s*[A-Z][a-z]+\s+\d{4}\s+(?P<page>\d{1,3}|[ivxlc]{1,6})\b\s*(?P<rest>.*)$"
)
_LEADERS = re.compile(r"(?:\.\s?){6,}")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")
_NUMBERED = re.compile(r"^(?P<num>\d{1,2}|[A-Z]|[IVX]{2,4})\.\s+(?P<title>\S.*)$")
_ROMAN = re.compile(r"^[IVX]{1,4}$")
_VERBS = re.compile(
    r"\b(shall|must|should|may|will|can|could|are|were|was|has|have|had|be|been)\b", re.I
)
_CONNECTORS = ("and", "of", "for", "to", "the", "in", "on", "with", "&", "-", "\u2013", "or")
_STANDALONE = re.compile(r"^(Appendix [A-Z]\b.*|Glossary( of Terms)?|References)$")


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", text)


def _looks_like_title(text: str, max_words: int = 10) -> bool:
    words = text.split()
    if not words or len(words) > max_words or len(text) > 90:
        return False
    if not (text[0].isupper() or text[0].isdigit()) or text.endswith((".", ",", ";", ":")):
        return False
    if _VERBS.search(text):
        return False
    long_words = [w for w in _words(text) if len(w) >= 4]
    if not long_words:
        return text.isupper()
    capital = sum(1 for w in long_words if w[0].isupper())
    return capital / len(long_words) >= 0.6


def _repair_words(line: str, clean: set[str], known: set[str]) -> str:
    """Join 'Of fice' -> 'Office' when the join is a known word and a part is not a word."""
    tokens = line.split(" ")
    out: list[str] = []
    i = 0
    while i < len(tokens):
        a = tokens[i]
        if i + 1 < len(tokens) and a.isalpha():
            m = re.match(r"^([A-Za-z]+)([^A-Za-z]*)$", tokens[i + 1])
            if m:
                core, tail = m.groups()
                joined = (a + core).lower()
                split = a.lower() not in clean or core.lower() not in clean or core == "s"
                if joined in known and split:
                    out.append(a + core + tail)
                    i += 2
                    continue
        out.append(a)
        i += 1
    return " ".join(out)


def _pdf_lines(data: dict[str, Any]) -> str:
    parts = [
        str(s.get("full_content") or s.get("content") or "") for s in data.get("sections") or []
    ]
    text = "\n".join(p for p in parts if p.strip())
    return text or str(data.get("content") or "")


def _pho(data: dict[str, Any], source: str, clean: set[str]) -> _RawDoc:
    text = _PRIVATE_USE.sub("\u2022", _pdf_lines(data))
    counts = Counter(w.lower() for w in _words(text))
    known = clean | {w for w, c in counts.items() if c >= 3 and len(w) >= 3}
    lines = [_squash(re.sub(r"(\w) -(\w)", r"\1-\2", line)) for line in text.splitlines()]
    runners = Counter(
        re.sub(r"\s+", "", m.group("running")).lower()
        for line in lines
        if (m := _RUNNING.match(line))
    )
    running = runners.most_common(1)[0][0] if runners else None

    sections: list[_RawSection] = []
    part: str | None = None
    heading, page, start_page = "Front matter", None, None
    body: list[str] = []
    carried: list[str] = []

    def flush() -> None:
        nonlocal carried
        block = _tidy_block(body)
        if len(block) < 120 and heading != "Front matter":
            carried = [*carried, heading, *([block] if block else [])]
            return
        if not block:
            return
        full = _tidy_block([*carried, block]) if carried else block
        context = tuple(c for c in (part,) if c and c != heading)
        sections.append(_RawSection(heading, context, full, page=start_page))
        carried = []

    def start(name: str) -> None:
        nonlocal heading, body, start_page
        flush()
        heading, body, start_page = name, [], page

    pending_join = False
    last_letter = ""
    for raw in lines:
        line = _repair_words(raw, clean, known) if raw else raw
        at_page_top = False
        m = _RUNNING.match(line)
        if m and running and re.sub(r"\s+", "", m.group("running")).lower() == running:
            number = m.group("page")
            page = int(number) if number.isdigit() else page
            line, at_page_top = m.group("rest").strip(), True
            if start_page is None:
                start_page = page
        if _LEADERS.search(line):
            continue
        if pending_join and line and _looks_like_title(line, 8) and not _NUMBERED.match(line):
            heading = f"{heading} {line}"
            pending_join = heading.split()[-1].lower() in _CONNECTORS
            continue
        pending_join = False
        numbered = _NUMBERED.match(line)
        title = numbered.group("title").strip() if numbered else ""
        if numbered and _looks_like_title(title):
            name, num = title, numbered.group("num")
            start(name)
            follows = bool(last_letter) and len(num) == 1 and ord(num) == ord(last_letter) + 1
            if _ROMAN.match(num) and not follows:
                part, last_letter = name, ""
            elif num.isalpha():
                last_letter = num
            pending_join = name.split()[-1].lower() in _CONNECTORS
            continue
        if line and (_STANDALONE.match(line) or (at_page_top and _looks_like_title(line, 8))):
            start(line)
            pending_join = line.split()[-1].lower() in _CONNECTORS
            continue
        body.append(line)
    flush()
    if carried and sections:
        last = sections[-1]
        last.text = _tidy_block([last.text, *carried])

    metadata = data.get("metadata") or {}
    published = iso_dates(str(metadata.get("published_date") or ""))
    effective = iso_dates(str(metadata.get("effective_date") or ""))
    revised = iso_dates(str(metadata.get("revision_date") or ""))
    title = display_title(_pho_title(data, text))
    topics = tuple(dict.fromkeys(_topic(t) for t in metadata.get("topics") or [] if t))
    return _RawDoc(
        org="pho",
        title=title,
        url=str(data.get("source_url") or metadata.get("source_url") or _pho_url(data, published)),
        doc_type=DOC_TYPES.get(str(metadata.get("document_type") or ""), "guideline"),
        policy_level=None,
        published_date=published[0] if published else None,
        effective_date=effective[0] if effective else (revised[0] if revised else None),
        updated_date=revised[-1] if revised else None,
        topics=topics,
        source_file=source,
        sections=sections,
    )


def _pho_title(data: dict[str, Any], text: str) -> str:
    """The PDF's own title line(s) from its cover when the extract's title is only a topic."""
    given = str(data.get("title") or "").strip()
    head = [_squash(line) for line in str(data.get("content") or text).splitlines()[:15]]
    head = [h for h in head if h]
    if len(head) >= 2 and head[0].startswith(given) and not head[1].lower().startswith("published"):
        return f"{head[0]} {head[1]}"
    return head[0] if head and head[0].startswith(given) else given


def _pho_url(data: dict[str, Any], published: list[str]) -> str:
    """The extract of a PHO PDF names its file but not its address. PHO serves its
    publications at ``/-/media/documents/<first letter>/<year>/<file>.pdf``; the year is the
    publication year. Documented rule, not a lookup table: a new PHO file gets its URL alike."""
    name = Path(str(data.get("source_file") or "")).name
    if not name or not published:
        return ""
    return (
        "https://www.publichealthontario.ca/-/media/documents/"
        f"{name[0].lower()}/{published[0][:4]}/{name}"
    )


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
        vocab.update(w.lower() for w in _words(text))
    return vocab


def _drop_boilerplate(docs: list[_RawDoc]) -> None:
    seen: Counter[str] = Counter()
    for doc in docs:
        paragraphs = {
            _squash(p)
            for s in doc.sections
            for p in re.split(r"\n\s*\n", s.text)
            if len(p.strip()) >= BOILERPLATE_MIN_CHARS
        }
        seen.update(paragraphs)
    common = {p for p, n in seen.items() if n >= BOILERPLATE_MIN_DOCS}
    for doc in docs:
        kept = []
        for s in doc.sections:
            kept_paragraphs = [p for p in re.split(r"\n\s*\n", s.text) if _squash(p) not in common]
            s.text = "\n\n".join(p.strip() for p in kept_paragraphs if p.strip())
            if s.text:
                kept.append(s)
        doc.sections = kept


def _fingerprint(doc: _RawDoc) -> str:
    body = "\n".join(f"{s.heading}\n{_squash(s.text)}" for s in doc.sections)
    return hashlib.sha256(body.encode()).hexdigest()


def load_corpus(folder: Path | None = None) -> Corpus:
    """Read every ``<org>/*.json`` under ``folder`` into numbered documents and sections."""
    folder = folder or data_folder()
    if not folder.is_dir():
        raise CorpusError(f"OPA data folder not found: {folder} (set {DATA_ENV})")
    loaded: list[tuple[str, str, dict[str, Any]]] = []
    for org, path in _files(folder):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
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
    raw: list[_RawDoc] = []
    for org, source, data in loaded:
        if org == "cpso" or (org not in ("cep", "pho") and data.get("content")):
            doc = _cpso(data, source)
        elif org == "cep":
            doc = _cep(data, source)
        elif org == "pho":
            doc = _pho(data, source, clean)
        else:
            continue
        doc.org = org if org in ORG_NAMES else doc.org
        if doc.sections and doc.title and not UNPUBLISHED.search(doc.title):
            raw.append(doc)
    if not raw:
        raise CorpusError(f"no OPA documents could be read under {folder}")
    _drop_boilerplate(raw)

    unique: dict[str, _RawDoc] = {}
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
