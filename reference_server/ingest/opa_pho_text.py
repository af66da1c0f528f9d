"""The PHO IPAC PDF extraction read as text: split words repaired, lines tagged with the page in
force, missing pages found, and dates read from "Month YYYY"."""

from __future__ import annotations

import re
from typing import TypedDict

from ocm_common.json_types import JsonValue

from .dates import MONTH, iso_date

# One PDF extraction (`../shared/data/opa/pho/*.json`) as the extractor wrote it: the keys read
# here (any may be missing).


class PhoExtractedSection(TypedDict, total=False):
    heading: str
    content: str | None
    full_content: str | None  # the section's whole text (`content` may be cut short)
    subsections: list[JsonValue]


class PhoExtractionMeta(TypedDict, total=False):
    """The extraction's `metadata`: the PDF's own properties and what the extractor read."""

    pdf_title: str
    pdf_author: str
    pdf_creation_date: str
    pdf_modified_date: str
    published_date: str | None  # "June 2013"
    revision_date: str | None
    effective_date: str | None
    topics: list[str]
    source_org: str
    document_type: str
    page_count: int | None
    extraction_date: str


class PhoExtraction(TypedDict, total=False):
    title: str
    source_file: str | None  # the PDF's path on the extracting machine
    content: str | None  # the text before the first section
    sections: list[PhoExtractedSection]
    metadata: PhoExtractionMeta


# Page footer/header left by the PDF extraction: "... Practice | April 2015  49 <text>"
_PAGE = re.compile(r"Practice\s*\|\s*[A-Z][a-z]+ \d{4}\s+(\d{1,3})\b")


def repair(text: str) -> str:
    """Undo the extraction's split words ("alcohol -based", "hand hyg iene") where safe."""
    text = text.replace("\uf0b7", "-").replace("\uf067", "-").replace("\uf0a7", "-")
    text = re.sub(r"(\w) -(\w)", r"\1-\2", text)  # "alcohol -based" -> "alcohol-based"
    text = re.sub(r"[ \t]+", " ", text)
    return text


def full_text(raw: PhoExtraction) -> str:
    return "\n".join(chunks_of(raw))


def first_group(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    return m.group(1) if m else ""


def month_date(text: str) -> str | None:
    m = re.search(rf"({MONTH})\s+(\d{{4}})", text or "", re.I)
    return iso_date(m.group(2), m.group(1)) if m else None


def chunks_of(raw: PhoExtraction) -> list[str]:
    return [raw.get("content") or ""] + [
        s.get("full_content") or s.get("content") or "" for s in raw.get("sections") or []
    ]


def paged_lines(raw: PhoExtraction) -> list[tuple[int | None, str]]:
    """Split into lines tagged with the page number in force (from the running footer).

    The extraction dropped some pages; a chunk that resumes after such a gap starts with text
    from the page just before its first footer, so those lines are tagged with that page."""
    out: list[tuple[int | None, str]] = []
    page: int | None = None
    for chunk in chunks_of(raw):
        first = _PAGE.search(chunk)
        if first and page is not None and int(first.group(1)) - 1 > page:
            page = int(first.group(1)) - 1
        for line in chunk.splitlines():
            m = _PAGE.search(line)
            if m:
                page = int(m.group(1))
                line = line[m.end() :]
            out.append((page, line.strip()))
    return out


def missing_pages(lines: list[tuple[int | None, str]], page_count: int | None) -> list[str]:
    seen = {p for p, _ in lines if p}
    last = page_count or max(seen)
    return page_ranges({p for p in range(min(seen), last + 1) if p not in seen})


def page_ranges(pages: set[int]) -> list[str]:
    out: list[str] = []
    for p in sorted(pages):
        if out and "-" in out[-1] and int(out[-1].split("-")[1]) == p - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{p}"
        elif out and "-" not in out[-1] and int(out[-1]) == p - 1:
            out[-1] = f"{out[-1]}-{p}"
        else:
            out.append(str(p))
    return out


class Rejoiner:
    """Rejoin words the PDF extraction split ("Mi croorganisms", "sh ould", "S etting s").

    Two adjacent tokens are merged when their concatenation is a word seen elsewhere in the
    document and at least one of them is not.
    """

    def __init__(self, text: str) -> None:
        self.vocab: dict[str, int] = {}
        for w in re.findall(r"[A-Za-z]+", text):
            w = w.lower()
            self.vocab[w] = self.vocab.get(w, 0) + 1

    def is_word(self, w: str) -> bool:
        w = w.lower()
        if len(w) == 1:
            return w in {"a", "i"}
        return self.vocab.get(w, 0) >= 2

    def _joinable(self, pieces: list[str]) -> bool:
        letters = [re.sub(r"[^A-Za-z]", "", x) for x in pieces]
        if not all(letters) or not all(x[-1:].isalpha() for x in pieces[:-1]):
            return False
        joined = "".join(letters).lower()
        return self.vocab.get(joined, 0) >= 2 and not all(self.is_word(x) for x in letters)

    def __call__(self, text: str) -> str:
        tokens = [t for t in text.split(" ") if t != ""]
        out: list[str] = []
        i = 0
        while i < len(tokens):
            for span in (4, 3, 2):
                pieces = tokens[i : i + span]
                if len(pieces) < span or not self._joinable(pieces):
                    continue
                # a whole word followed by a fragment that belongs to the *next* token
                # ("Office S etting s") is not joined: the fragment is joined forward instead
                if (
                    self.is_word(re.sub(r"[^A-Za-z]", "", pieces[0]))
                    and i + 2 < len(tokens)
                    and self._joinable(tokens[i + 1 : i + 3])
                ):
                    continue
                out.append("".join(pieces))
                i += span
                break
            else:
                out.append(tokens[i])
                i += 1
        return " ".join(out)
