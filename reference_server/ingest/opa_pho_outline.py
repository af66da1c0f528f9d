"""The PHO IPAC document's outline, rebuilt from the page-marked text: title, numbered chapters
and lettered subsections with their pages, chapter titles known only from cross-references, and
the list of tables (the extraction's own `sections` are split on arbitrary upper-case lines)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from .opa_pho_text import PhoExtraction, Rejoiner, repair


class OrphanHeading(TypedDict):
    """A heading of a chapter the extraction lost, and where it was read."""

    heading: str
    page: int | None
    line: int


class TableEntry(TypedDict):
    """One entry of the document's list of tables."""

    table: int
    title: str
    page: int
    body_in_extraction: NotRequired[bool]  # set by opa_pho: is the table itself extracted?


_CHAPTER = re.compile(r"^\s*(\d{1,2})\.\s+([A-Z][A-Za-z/ ,()'’\-]{3,80}?)\s*$")
_SUBSECTION = re.compile(r"^\s*([A-K])\.\s+([A-Z][A-Za-z/ ,()'’\-]{3,80}?)\s*$")
_MODAL = re.compile(r"\b(shall|must|should|may|will|can|is|are)\b", re.I)
_CROSS_REF = re.compile(r"Section\s+(\d{1,2})(?:\.([A-K]))?\.?,\s*([A-Z][A-Za-z/ ,\-]+?)\s*[.(]")
_CONTINUES = ("and", "of", "for", "to", "in", "the", "with")


@dataclass
class Heading:
    level: int  # 1 = chapter, 2 = lettered subsection
    number: str
    title: str
    page: int | None
    line: int
    children: list[Heading] = field(default_factory=list)

    def label(self) -> str:
        return f"{self.number}. {self.title}"


def derive_title(raw: PhoExtraction) -> str:
    head = (raw.get("content") or "").split("Published:")[0]
    words = " ".join(w.strip() for w in head.splitlines() if w.strip())
    words = re.sub(r"\s+", " ", words).strip()
    return words or raw.get("title", "").strip()


def _heading_title(title: str, lines: list[tuple[int | None, str]], i: int, fix: Rejoiner) -> str:
    """Headings that wrap onto the next line (ending on 'and'/'of'..., or an open bracket)."""
    if (
        title.split()[-1].lower() in _CONTINUES or title.count("(") > title.count(")")
    ) and i + 1 < len(lines):
        title += " " + fix(repair(lines[i + 1][1]))
    return _tidy(title)


def derive_outline(
    lines: list[tuple[int | None, str]], fix: Rejoiner
) -> tuple[list[Heading], list[int], list[OrphanHeading]]:
    """Rebuild numbered chapters and lettered subsections.

    A chapter candidate is a short line ``N. Title`` without a modal verb that starts a page
    (within the first lines after a running footer; chapter 1 excepted) and whose number
    continues the sequence (gaps of up to two are allowed: the extraction lost some pages).
    Numbered items inside a lettered subsection look the same ("5. Hand Washing Sinks" under
    4.B), so a candidate is rejected when the next lettered heading after it continues the
    open chapter's letters instead of starting again at "A.". Returns the chapters, the
    chapter numbers the extraction is missing, and lettered headings that belong to a missing
    chapter (e.g. "B. Clinical Office Design/Renovations").
    """
    fixed = [fix(repair(line)) for _, line in lines]
    numbered: list[tuple[int, int]] = []  # (line index, number) of page-top candidates
    lettered: list[tuple[int, str]] = []
    since_page, last_page = 99, None
    for i, ((page, _), line) in enumerate(zip(lines, fixed, strict=True)):
        if page != last_page:
            since_page, last_page = 0, page
        if line:
            since_page += 1
        m = _CHAPTER.match(line)
        if m and not _MODAL.search(m.group(2)) and (since_page <= 3 or m.group(1) == "1"):
            numbered.append((i, int(m.group(1))))
        m = _SUBSECTION.match(line)
        if m and not _MODAL.search(m.group(2)):
            lettered.append((i, m.group(1)))

    chapters: list[Heading] = []
    missing: list[int] = []
    expected, expected_letter = 1, "A"
    current: Heading | None = None
    orphans: list[OrphanHeading] = []
    events = sorted([(i, "n", n) for i, n in numbered] + [(i, "l", c) for i, c in lettered])
    for k, (i, kind, val) in enumerate(events):
        page = lines[i][0]
        if kind == "n":
            n = int(val)
            if not expected <= n <= expected + 2:
                continue
            nxt = next((v for _, kd, v in events[k + 1 :] if kd == "l"), None)
            if current is not None and nxt == expected_letter and nxt != "A":
                continue  # a numbered item inside the open subsection
            m = _CHAPTER.match(fixed[i])
            assert m
            missing.extend(range(expected, n))
            current = Heading(1, str(n), _heading_title(m.group(2), lines, i, fix), page, i)
            chapters.append(current)
            expected, expected_letter = n + 1, "A"
        elif current is not None and val == expected_letter:
            m = _SUBSECTION.match(fixed[i])
            assert m
            current.children.append(
                Heading(2, str(val), _heading_title(m.group(2), lines, i, fix), page, i)
            )
            expected_letter = chr(ord(expected_letter) + 1)
    # headings met between a page gap and the next chapter belong to the lost chapters
    seen_pages = {p for p, _ in lines if p}
    for c_idx, chap in enumerate(chapters):
        nxt_line = chapters[c_idx + 1].line if c_idx + 1 < len(chapters) else len(lines)
        gap_at = next(
            (
                i
                for i in range(chap.line, nxt_line)
                if _after_gap(lines[i][0], seen_pages, chap.page or 0)
            ),
            None,
        )
        if gap_at is None or not missing:
            continue
        for i in range(gap_at, nxt_line):
            line = fixed[i]
            m = _CHAPTER.match(line) or _SUBSECTION.match(line)
            if m and not _MODAL.search(m.group(2)) and len(m.group(2).split()) <= 6:
                orphans.append(
                    {
                        "heading": f"{m.group(1)}. {_heading_title(m.group(2), lines, i, fix)}",
                        "page": lines[i][0],
                        "line": i,
                    }
                )
    return chapters, missing, orphans


def _after_gap(page: int | None, seen_pages: set[int], chapter_page: int) -> bool:
    return page is not None and page - 1 not in seen_pages and page - 1 > chapter_page


def cross_referenced_titles(text: str, fix: Rejoiner) -> dict[str, str]:
    """'See Section 7, Control of the Environment' -> {'7': 'Control of the Environment'}."""
    out: dict[str, str] = {}
    for n, letter, title in _CROSS_REF.findall(re.sub(r"\s+", " ", fix(repair(text)))):
        key = f"{n}.{letter}" if letter else n
        title = re.split(r",\s+(?:for|see|which|and see)\b", title)[0]
        out.setdefault(key, _tidy(title))
    return out


def _tidy(title: str) -> str:
    return re.sub(r"\s+", " ", title).strip(" .")


def derive_tables(text: str, fix: Rejoiner) -> list[TableEntry]:
    out: list[TableEntry] = []
    for m in re.finditer(r"TABLE (\d+):\s*(.+?)\s*\.{3,}[ .]*?(\d{1,3})\s*$", text, re.M):
        title = fix(re.sub(r"\s+", " ", m.group(2)).strip().lower())
        title = title.replace(" 's", "'s")
        out.append(
            {
                "table": int(m.group(1)),
                "title": title[:1].upper() + title[1:],
                "page": int(m.group(3)),
            }
        )
    return out
