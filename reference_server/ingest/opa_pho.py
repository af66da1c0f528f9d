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

Run: ``python -m reference_server.ingest.opa_pho SOURCE.json OUT_DIR [--print]``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .dates import MONTH, iso_date
from .skeletons import refresh_facts, safe_dump, write_record

DOCUMENT_ID = "pho-ipac-clinical-office-practice"
SOURCE_URL = (
    "https://www.publichealthontario.ca/-/media/documents/b/2013/bp-clinical-office-practice.pdf"
)

# Page footer/header left by the PDF extraction: "... Practice | April 2015  49 <text>"
_PAGE = re.compile(r"Practice\s*\|\s*[A-Z][a-z]+ \d{4}\s+(\d{1,3})\b")
_CHAPTER = re.compile(r"^\s*(\d{1,2})\.\s+([A-Z][A-Za-z/ ,()'’\-]{3,80}?)\s*$")
_SUBSECTION = re.compile(r"^\s*([A-K])\.\s+([A-Z][A-Za-z/ ,()'’\-]{3,80}?)\s*$")
_MODAL = re.compile(r"\b(shall|must|should|may|will|can|is|are)\b", re.I)
_CROSS_REF = re.compile(r"Section\s+(\d{1,2})(?:\.([A-K]))?\.?,\s*([A-Z][A-Za-z/ ,\-]+?)\s*[.(]")
_CONTINUES = ("and", "of", "for", "to", "in", "the", "with")

THEMES: dict[str, list[str]] = {
    "hand_hygiene": ["hand hygiene", "alcohol-based hand rub", "abhr", "hand washing"],
    "ppe": [
        "personal protective equipment",
        "ppe",
        "gloves",
        "gown",
        "respirator",
        "eye protection",
    ],
    "additional_precautions": [
        "additional precautions",
        "airborne",
        "droplet",
        "contact precautions",
    ],
    "environmental": ["cleaning", "low-level disinfect", "hospital-grade disinfectant", "spill"],
    "reprocessing": ["reprocessing", "sterilization", "sterilizer", "high-level disinfection"],
    "spaulding": ["spaulding", "critical", "semicritical", "semi-critical", "noncritical"],
    "sharps": ["sharps", "safety-engineered", "needle"],
    "immunization": ["immunization", "vaccine", "tuberculin"],
}

FREQUENCY_WORDS = [
    ("between patients", "per_use"),
    ("between each patient", "per_use"),
    ("after each use", "per_use"),
    ("between uses", "per_use"),
    ("each sterilizer cycle", "per_use"),
    ("each cycle", "per_use"),
    ("each day", "daily"),
    ("daily", "daily"),
    ("weekly", "weekly"),
    ("once a month", "monthly"),
    ("monthly", "monthly"),
    ("annually", "annually"),
    ("when visibly soiled", "as_needed"),
]

# Item names for the frequency statements (lower-case cue in the source -> our label).
_ITEM_PATTERNS = [
    ("toy storage", "toy storage boxes/cupboards"),
    ("toys should be cleaned", "toys"),
    ("all toys", "toys"),
    ("daily inspection", "toys in general waiting rooms"),
    ("high touch", "clinic/examination areas and high-touch surfaces"),
    ("areas in direct", "surfaces in direct contact with the patient"),
    ("with the patient are cleaned", "surfaces in direct contact with the patient"),
    ("other office areas", "other office areas"),
    ("medical equ", "medical equipment used on multiple patients"),
    ("sterile processing", "sterile supply storage areas"),
    ("biolog", "sterilizer biological indicator test"),
    ("mechanical printout", "sterilizer printout check"),
    ("test strips", "high-level disinfectant concentration (test strips)"),
    ("ultrasonic", "ultrasonic washer efficacy test"),
    ("endoscope storage", "endoscope storage cabinets"),
    ("mop heads", "mop heads"),
    ("eye protection", "reusable eye protection"),
    ("soiled equipment", "containers/carts for soiled equipment"),
    ("enzymatic cleaner", "enzymatic cleaner solution"),
    ("tenaculum", "vaginal tenaculum"),
    ("transducer", "ultrasound transducer probes"),
    ("blood pressure cuff", "noncritical equipment (stethoscopes, BP cuffs, baby scales)"),
    ("inspect", "workplace safety inspection"),
    ("skin -tested", "staff TB skin test (offices seeing active TB)"),
    ("skin-tested", "staff TB skin test (offices seeing active TB)"),
    ("influen", "staff influenza vaccine"),
    ("training manual", "reprocessing training manual review"),
    ("reviewed at least annually", "reprocessing policies review"),
    ("borne pathogens (hbv", "blood-borne pathogen testing (exposure-prone procedures)"),
]


# --------------------------------------------------------------------------------------
# text helpers
# --------------------------------------------------------------------------------------
def repair(text: str) -> str:
    """Undo the extraction's split words ("alcohol -based", "hand hyg iene") where safe."""
    text = text.replace("\uf0b7", "-").replace("\uf067", "-").replace("\uf0a7", "-")
    text = re.sub(r"(\w) -(\w)", r"\1-\2", text)  # "alcohol -based" -> "alcohol-based"
    text = re.sub(r"[ \t]+", " ", text)
    return text


def full_text(raw: dict[str, Any]) -> str:
    return "\n".join(chunks_of(raw))


def _first(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    return m.group(1) if m else ""


def month_date(text: str) -> str | None:
    m = re.search(rf"({MONTH})\s+(\d{{4}})", text or "", re.I)
    return iso_date(m.group(2), m.group(1)) if m else None


def chunks_of(raw: dict[str, Any]) -> list[str]:
    return [raw.get("content") or ""] + [
        s.get("full_content") or s.get("content") or "" for s in raw.get("sections") or []
    ]


def paged_lines(raw: dict[str, Any]) -> list[tuple[int | None, str]]:
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
    return _ranges({p for p in range(min(seen), last + 1) if p not in seen})


# --------------------------------------------------------------------------------------
# derivations
# --------------------------------------------------------------------------------------
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


def derive_title(raw: dict[str, Any]) -> str:
    head = (raw.get("content") or "").split("Published:")[0]
    words = " ".join(w.strip() for w in head.splitlines() if w.strip())
    words = re.sub(r"\s+", " ", words).strip()
    return words or raw.get("title", "").strip()


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


def _heading_title(title: str, lines: list[tuple[int | None, str]], i: int, fix: Rejoiner) -> str:
    """Headings that wrap onto the next line (ending on 'and'/'of'..., or an open bracket)."""
    if (
        title.split()[-1].lower() in _CONTINUES or title.count("(") > title.count(")")
    ) and i + 1 < len(lines):
        title += " " + fix(repair(lines[i + 1][1]))
    return _tidy(title)


def derive_outline(
    lines: list[tuple[int | None, str]], fix: Rejoiner
) -> tuple[list[Heading], list[int], list[dict[str, Any]]]:
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
    orphans: list[dict[str, Any]] = []
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


def derive_tables(text: str, fix: Rejoiner) -> list[dict[str, Any]]:
    out = []
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


def _ranges(pages: set[int]) -> list[str]:
    out: list[str] = []
    for p in sorted(pages):
        if out and "-" in out[-1] and int(out[-1].split("-")[1]) == p - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{p}"
        elif out and "-" not in out[-1] and int(out[-1]) == p - 1:
            out[-1] = f"{out[-1]}-{p}"
        else:
            out.append(str(p))
    return out


def locate_themes(
    lines: list[tuple[int | None, str]],
    outline: list[Heading],
    extra: list[dict[str, Any]],
    body_end: int,
) -> dict[str, Any]:
    """For each theme: the outline headings (main body only) whose span mentions it most,
    and the body pages where it appears. ``extra`` are headings of chapters the extraction
    lost, used as span boundaries too."""
    flat = [h for c in outline for h in [c, *c.children]]
    for o in extra:
        number, _, title = o["heading"].partition(". ")
        flat.append(Heading(3, number, title, o["page"], o["line"]))
    flat.sort(key=lambda h: h.line)
    result: dict[str, Any] = {}
    for theme, keys in THEMES.items():
        counts: dict[str, int] = {}
        pages: set[int] = set()
        for idx, h in enumerate(flat):
            end = flat[idx + 1].line if idx + 1 < len(flat) else body_end
            for page, line in lines[h.line : min(end, body_end)]:
                low = repair(line).lower()
                if any(k in low for k in keys):
                    counts[h.label()] = counts.get(h.label(), 0) + 1
                    if page:
                        pages.add(page)
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
        result[theme] = {"headings": [k for k, _ in top], "pages": _ranges(pages)}
    return result


def derive_spaulding(text: str, fix: Rejoiner) -> list[dict[str, Any]]:
    t = fix(repair(text))
    m = re.search(r"Table 2: Spaulding.*?(Critical.*?)C\. Single", t, re.S)
    if not m:
        return []
    body = re.sub(r"\s+", " ", m.group(1))
    rows = []
    pattern = re.compile(
        r"(Critical|Semicritical|Noncritical)\s+(.*?)\s+(Cleaning followed by .*?)"
        r"(?=\s-\s)(.*?)(?=Semicritical|Noncritical|$)"
    )
    for cls, _use, level, examples in pattern.findall(body):
        items = [e.strip(" -") for e in re.split(r"\s-\s", " " + examples) if e.strip(" -")]
        lvl = re.sub(r"\s+", "", level.lower())
        minimum = (
            "low-level disinfection"
            if "low-level" in lvl
            else "high-level disinfection"
            if "high-level" in lvl
            else "sterilization"
        )
        rows.append(
            {
                "class": cls.lower(),
                "minimum_level": minimum,
                "sterilization_preferred": "sterilizationispreferred" in lvl,
                "cleaning_alone_sometimes_acceptable": "cleaningaloneisacceptable" in lvl,
                "examples": [
                    re.sub(r"\s*/\s*", "/", re.sub(r"\s+", " ", i)).strip() for i in items
                ][:6],
            }
        )
    return rows


def derive_cleaning_frequencies(lines: list[tuple[int | None, str]]) -> list[dict[str, Any]]:
    """Item + frequency pairs still present in the extraction (Table 1's body is not).

    The item is looked for on the line holding the frequency phrase, else on the line before
    it (the pattern closest to the phrase wins)."""
    out: list[dict[str, Any]] = []
    seen = set()
    for i, (page, line) in enumerate(lines):
        low = repair(line).lower()
        for word, freq in FREQUENCY_WORDS:
            if word in low:
                item = _item_of(low[: low.index(word) + len(word)])
                if not item and i:
                    item = _item_of(repair(lines[i - 1][1]).lower())
                if item and (item, freq) not in seen:
                    seen.add((item, freq))
                    out.append({"item": item, "frequency": freq, "page": page})
                break
    return out


def _item_of(ctx: str) -> str | None:
    best: tuple[int, str] | None = None
    for key, name in _ITEM_PATTERNS:
        pos = ctx.rfind(key)
        if pos >= 0 and (best is None or pos > best[0]):
            best = (pos, name)
    return best[1] if best else None


def derive_numbered_statements(text: str, fix: Rejoiner) -> dict[str, list[dict[str, Any]]]:
    """Numbered legislated practices and best-practice recommendations from the summary
    tables: number, level and theme only - never the wording."""
    t = fix(repair(text))
    summary = t.split("Summary of Legislated Mandatory Practices", 1)[-1]
    legislated_part, _, rec_part = summary.partition("Summary of Best Practice")
    rec_part = rec_part.split("III. Append", 1)[0]

    def items(part: str, default: str | None) -> list[dict[str, Any]]:
        found: dict[int, dict[str, Any]] = {}
        chunks = re.split(r"\n\s*(?:\d{1,2}\.\s+)?(\d{1,2})\.\s+", "\n" + part)
        for n_str, body in zip(chunks[1::2], chunks[2::2], strict=False):
            n, low = int(n_str), re.sub(r"\s+", " ", body.lower())
            level = next((w for w in ("must", "should") if re.search(rf"\b{w}\b", low)), None)
            level = default or level
            if level and n not in found and len(low) > 20:
                theme = next(
                    (k for k, keys in THEMES.items() if any(x in low for x in keys)), "general"
                )
                found[n] = {"number": n, "level": level, "theme": theme}
        return [found[k] for k in sorted(found)]

    return {"legislated": items(legislated_part, "shall"), "recommendations": items(rec_part, None)}


# --------------------------------------------------------------------------------------
# skeleton
# --------------------------------------------------------------------------------------
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


@dataclass
class PhoFacts:
    document_id: str
    record: dict[str, Any]
    derived: dict[str, Any]


def derive(path: Path) -> PhoFacts:
    raw = json.loads(path.read_text(encoding="utf-8"))
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
        _first(r"Published:\s*([A-Za-z]+ \d{4})", text)
    )
    revised = month_date(str(meta.get("revision_date") or "")) or month_date(
        _first(r"revision:\s*([A-Za-z]+ \d{4})", text)
    )

    labels: dict[str, str] = {c.number: c.title for c in outline}
    labels.update({f"{c.number}.{s.number}": s.title for c in outline for s in c.children})
    for key, title in xref.items():  # chapters/subsections lost by the extraction
        labels.setdefault(key, title)
    sections = [
        {"heading": labels[k], "text": "", "ipac": None} for k in SECTION_PLAN if k in labels
    ]

    record = {
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
    derived = {
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
            {k: v for k, v in o.items() if k != "line"} for o in orphans
        ],
        "tables": tables,
        "theme_locations": locate_themes(lines, outline, orphans, body_end),
        "spaulding": derive_spaulding(text, fix),
        "cleaning_frequencies": derive_cleaning_frequencies(lines),
        "numbered_statements": derive_numbered_statements(text, fix),
    }
    return PhoFacts(DOCUMENT_ID, record, derived)


def merge(existing: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """Refresh derived document facts while keeping authored text, topics and sections."""
    return refresh_facts(
        existing, facts, ("source_org", "title", "source_url", "published_date", "derived_from")
    )


def write_skeleton(source: Path, out_dir: Path) -> Path:
    facts = derive(source)
    out_dir.mkdir(parents=True, exist_ok=True)
    skeleton = {**facts.record, "derived_facts": facts.derived}
    return write_record(out_dir, facts.record, merge, skeleton=skeleton)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="bp-clinical-office-practice.json")
    ap.add_argument("out_dir", type=Path, help="corpus/opa/pho")
    ap.add_argument(
        "--print", action="store_true", help="print the derived facts instead of writing"
    )
    args = ap.parse_args(argv)
    if args.print:
        facts = derive(args.source)
        sys.stdout.write(safe_dump({**facts.record, "derived_facts": facts.derived}))
        return 0
    print(write_skeleton(args.source, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
