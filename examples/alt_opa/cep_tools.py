"""CEP tools: a list of top-level ``sections`` with a ``summary`` each (the tools' pages are
not in the extract); the sub-headings are kept as extra search terms.
"""

from __future__ import annotations

from examples.alt_opa.raw_documents import (
    DATE,
    DOC_TYPES,
    Extract,
    RawDoc,
    RawSection,
    clean_heading,
    display_title,
    iso_dates,
    squash,
    topic,
)


def read_cep(data: Extract, source: str) -> RawDoc:
    anchors = {
        clean_heading(str(n.get("title") or "")).casefold(): str(n.get("anchor") or "").lstrip("#")
        for n in data.get("navigation") or []
        if n.get("anchor")
    }
    sections = []
    for sec in data.get("sections") or []:
        heading = clean_heading(str(sec.get("heading") or ""))
        text = squash(str(sec.get("summary") or sec.get("content") or ""))
        subs: list[str] = []
        for sub in sec.get("subsections") or []:
            name = clean_heading(str(sub.get("heading") or ""))
            if name and name not in subs:
                subs.append(name)
        if not heading or not text:
            continue
        sections.append(
            RawSection(
                heading,
                (),
                text,
                anchor=anchors.get(heading.casefold()) or None,
                extra_terms=" ".join(subs),
            )
        )
    key = data.get("key_content") or {}
    tools = [topic(t) for t in key.get("assessment_tools") or [] if isinstance(t, str)]
    category = topic(str(data.get("tool_category") or ""))
    title = display_title(str(data.get("title") or "").strip())
    stamp = squash(str(data.get("last_updated") or ""))
    updated = iso_dates(stamp) if DATE.fullmatch(stamp) else []
    topics = tuple(dict.fromkeys(t for t in (category, topic(title), *tools) if t))
    return RawDoc(
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
