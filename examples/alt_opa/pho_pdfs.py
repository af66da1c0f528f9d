"""PHO PDF extracts: the PDF text in the sections' ``full_content``, cut into pages by the
running header (``<title> | <Month Year>  <page>``) and into sections by numbered, lettered
and page-top headings; words the PDF extraction split (``Of fice``) are joined when the
joined word is known and one part is not a word.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from examples.alt_opa.raw_documents import (
    DOC_TYPES,
    Extract,
    RawDoc,
    RawSection,
    display_title,
    iso_dates,
    letter_words,
    squash,
    tidy_block,
    topic,
)

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


def _looks_like_title(text: str, max_words: int = 10) -> bool:
    words = text.split()
    if not words or len(words) > max_words or len(text) > 90:
        return False
    if not (text[0].isupper() or text[0].isdigit()) or text.endswith((".", ",", ";", ":")):
        return False
    if _VERBS.search(text):
        return False
    long_words = [w for w in letter_words(text) if len(w) >= 4]
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


def _pdf_lines(data: Extract) -> str:
    parts = [
        str(s.get("full_content") or s.get("content") or "") for s in data.get("sections") or []
    ]
    text = "\n".join(p for p in parts if p.strip())
    return text or str(data.get("content") or "")


def read_pho(data: Extract, source: str, clean: set[str]) -> RawDoc:
    text = _PRIVATE_USE.sub("\u2022", _pdf_lines(data))
    counts = Counter(w.lower() for w in letter_words(text))
    known = clean | {w for w, c in counts.items() if c >= 3 and len(w) >= 3}
    lines = [squash(re.sub(r"(\w) -(\w)", r"\1-\2", line)) for line in text.splitlines()]
    runners = Counter(
        re.sub(r"\s+", "", m.group("running")).lower()
        for line in lines
        if (m := _RUNNING.match(line))
    )
    running = runners.most_common(1)[0][0] if runners else None

    sections: list[RawSection] = []
    part: str | None = None
    heading, page, start_page = "Front matter", None, None
    body: list[str] = []
    carried: list[str] = []

    def flush() -> None:
        nonlocal carried
        block = tidy_block(body)
        if len(block) < 120 and heading != "Front matter":
            carried = [*carried, heading, *([block] if block else [])]
            return
        if not block:
            return
        full = tidy_block([*carried, block]) if carried else block
        context = tuple(c for c in (part,) if c and c != heading)
        sections.append(RawSection(heading, context, full, page=start_page))
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
        last.text = tidy_block([last.text, *carried])

    metadata = data.get("metadata") or {}
    published = iso_dates(str(metadata.get("published_date") or ""))
    effective = iso_dates(str(metadata.get("effective_date") or ""))
    revised = iso_dates(str(metadata.get("revision_date") or ""))
    title = display_title(_pho_title(data, text))
    topics = tuple(dict.fromkeys(topic(t) for t in metadata.get("topics") or [] if t))
    return RawDoc(
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


def _pho_title(data: Extract, text: str) -> str:
    """The PDF's own title line(s) from its cover when the extract's title is only a topic."""
    given = str(data.get("title") or "").strip()
    head = [squash(line) for line in str(data.get("content") or text).splitlines()[:15]]
    head = [h for h in head if h]
    if len(head) >= 2 and head[0].startswith(given) and not head[1].lower().startswith("published"):
        return f"{head[0]} {head[1]}"
    return head[0] if head and head[0].startswith(given) else given


def _pho_url(data: Extract, published: list[str]) -> str:
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
