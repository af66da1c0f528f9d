"""CPSO pages: the whole page as Markdown in ``content``, cut into sections at its headings.

A section starts at every Markdown heading below the title (text before the first one sits
under the page title); headings with an empty body only give context. On *Advice to the
Profession* pages each question (a line that is bold and nothing else) starts a further
section under the same heading, with the question as its first line: the question is
text of the page, not a heading.
"""

from __future__ import annotations

import re

from examples.alt_opa.raw_documents import (
    DOC_TYPES,
    Extract,
    RawDoc,
    RawSection,
    clean_heading,
    clean_markdown,
    display_title,
    iso_dates,
    tidy_block,
    topic,
)

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_META = re.compile(
    r"^\*\*\s*(approved by council|reviewed and updated|last updated|companion resources?|"
    r"effective date|originally published|publication date)\s*:?\s*\*\*\s*:?\s*(.*)$",
    re.IGNORECASE,
)


def _bold_heading(line: str) -> str | None:
    """The text of a line that is bold and nothing else (its markers may be split, as in
    ``***A question*****?**``), when it is short or a question."""
    if not (line.startswith("**") and line.endswith("**")):
        return None
    inner = clean_heading(line)
    if not inner or len(inner) > 160 or clean_markdown(line).strip().endswith(":"):
        return None
    if inner.endswith("?") or len(inner.split()) <= 12:
        return inner
    return None


def read_cpso(data: Extract, source: str) -> RawDoc:
    title = display_title(str(data.get("title") or "").strip())
    meta: dict[str, list[str]] = {}
    sections: list[RawSection] = []
    stack: list[tuple[int, str]] = []
    heading = title  # text before the first heading sits under the page title
    question = ""
    body: list[str] = []
    in_companion = False

    def flush() -> None:
        text = tidy_block(body)
        if text:
            context = tuple(h for _, h in stack[:-1]) if stack else ()
            sections.append(RawSection(heading, context, text, extra_terms=question))

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
        body.append(clean_markdown(line))
    flush()

    raw_type = str(data.get("document_type") or "policy")
    doc_type = DOC_TYPES.get(raw_type, "policy")
    level_of = {"policy": "expectation", "advice": "advice"}
    all_dates = sorted(d for dates in meta.values() for d in dates)
    revised = sorted(meta.get("reviewed and updated", []) + meta.get("last updated", []))
    approved = meta.get("approved by council", [])
    plain = re.sub(r"^advice to the profession:\s*", "", title, flags=re.IGNORECASE)
    return RawDoc(
        org="cpso",
        title=title,
        url=str(data.get("source_url") or ""),
        doc_type=doc_type,
        policy_level=data.get("policy_level") or level_of.get(doc_type),
        published_date=min(approved) if approved else None,
        effective_date=all_dates[-1] if all_dates else None,
        updated_date=revised[-1] if revised else None,
        topics=(topic(plain),),
        source_file=source,
        sections=sections,
    )
