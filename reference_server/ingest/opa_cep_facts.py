"""The facts read from one crawled CEP tool page: its date, cleaned headings, URL slug,
navigation, feature anchors, the screening instruments it names, and the headings a skeleton
offers its authors.

Kept apart from `opa_cep.py`, which assembles these into corpus records and decides which
crawled files become documents.
"""

from __future__ import annotations

import re
from typing import TypedDict

from ocm_common.json_types import JsonValue

from .dates import MONTH, iso_date

# ----------------------------------------------------------------------------- the crawled page
# One `../shared/data/opa/cep/*_extracted.json` file as the crawler wrote it: the keys read
# here (every key may be missing; a crawl of a page that lacks a part leaves it out or empty).


class CepNavItem(TypedDict, total=False):
    """One entry of the page's navigation (its table of contents)."""

    title: str
    anchor: str | None
    type: str
    level: int


class CepSubsection(TypedDict, total=False):
    heading: str
    anchor: str | None
    level: int


class CepSection(TypedDict, total=False):
    """One main section of the page: its heading, anchor, subsections and a text extract."""

    heading: str
    anchor: str | None
    level: int
    subsections: list[CepSubsection]
    summary: str | None


class CepKeyContent(TypedDict, total=False):
    """What the crawler recognised in the page's text."""

    assessment_tools: list[str]
    red_flags: list[str]
    has_diagnostic_criteria: bool
    has_treatment_guidance: bool
    has_referral_criteria: bool


class CepPage(TypedDict, total=False):
    """One crawled CEP tool page."""

    document_id: str
    source_url: str
    source_org: str
    document_type: str
    tool_category: str
    extracted_at: str
    content_hash: str
    title: str
    tool_slug: str
    last_updated: str
    navigation: list[CepNavItem]
    key_content: CepKeyContent
    features: dict[str, bool]  # has_algorithm, has_calculator, has_checklist, ...
    sections: list[CepSection]
    references: list[JsonValue]
    summary: str


_DATE = re.compile(rf"({MONTH})\s+(\d{{1,2}}),\s*(\d{{4}})", re.I)
# Footnote markers glued to a heading: "Assessment algorithm2,3,5-8", "Diagnosis3–5", "Screening6".
_FOOTNOTES = re.compile(r"(?<=[A-Za-z)?:])\d+(?:\s*[,–-]\s*\d+)*\s*,?\s*$")
_BADGE = re.compile(r"^(?:Update|New)(?=[A-Z])|(?<=\S)New$")
_SLUG_FIXES = {"andpsychological": "and-psychological"}
_BOILER = r"references|acknowledge?ments?( and legal)?|legal"
_BOILERPLATE = re.compile(rf"^({_BOILER})$", re.I)  # left out of the instrument search
_NOT_CONTENT = re.compile(
    rf"^({_BOILER}|(provider and patient |supporting )?(resources|materials?))$", re.I
)

# Feature -> (preferred title/anchor pattern, fallback pattern).
_FEATURES: dict[str, tuple[str, str | None]] = {
    "assessment_algorithm": (r"algorithm", None),
    "calculator": (r"calculator", None),
    "checklist": (r"checklist", r"assessment tools?|assess-tools"),
}
_FLAGS = {
    "assessment_algorithm": "has_algorithm",
    "calculator": "has_calculator",
    "checklist": "has_checklist",
}
# Named screening/assessment instruments looked for in the tool text (name -> case-sensitive regex).
_INSTRUMENTS: dict[str, str] = {
    "MoCA": r"MoCA",
    "MMSE": r"MMSE",
    "Mini-Cog": r"Mini-Cog",
    "PHQ-9": r"PHQ-9",
    "PHQ-4": r"PHQ-4",
    "GAD-7": r"GAD-7",
    "ISI": r"\(ISI\)|Insomnia Severity\s*Index",
    "STOP-BANG": r"STOP-?BANG",
    "Epworth Sleepiness Scale": r"Epworth",
    "CAT": r"\(CAT\)|COPD Assessment Test",
    "mMRC": r"mMRC",
    "AUDIT": r"(?<![A-Z])AUDIT(?![A-Za-z]|-C)",
    "AUDIT-C": r"AUDIT-C",
    "PAT": r"Paddington Alcohol Test",
    "POMI": r"\(POMI\)|Prescription Opioid Misuse Index",
    "COWS": r"\(COWS\)|Clinical Opiate Withdrawal Scale",
    "SOWS": r"\(SOWS\)|Subjective Opiate Withdrawal Scale",
    "TUG": r"\(TUG\)|Timed Up and Go",
    "BPI": r"\(BPI\)|Brief Pain Inventory",
    "Opioid Risk Tool": r"Opioid Risk Tool",
    "SCARED": r"\(SCARED\)|Screen for Child Anxiety Related Emotional Disorders",
    "QUID": r"\(QUID\)|Questionnaire for Female Urinary Incontinence Diagnosis",
    "Keele STarT Back": r"STarT Back",
}


def parse_date(value: str | None) -> str | None:
    """'July 31, 2025' -> '2025-07-31'; anything that is not just a date -> None."""
    m = _DATE.fullmatch(str(value or "").strip())
    if not m:
        return None
    month, day, year = m.groups()
    return iso_date(year, month, int(day))


def clean_title(title: str) -> str:
    """Strip footnote digits, 'New'/'Update' badges and extraction glitches from a heading."""
    t = re.sub(r"\s+", " ", title or "").strip()
    t = _BADGE.sub("", t)
    t = _FOOTNOTES.sub("", t).strip()
    t = re.sub(r"\b(Non|non)- ", r"\1-", t)
    t = re.sub(r"(?<=\?)\d+(?=[A-Z])", " ", t)  # "immunizations?3Can it ..."
    t = re.sub(r"(?<=[a-z])\(", " (", t)
    t = re.sub(r"\)(?=[a-z])", ") ", t)
    return t.rstrip(":").strip()


def tool_slug(raw: CepPage) -> str:
    """URL slug without WordPress '-2' suffixes and with known typos fixed."""
    slug = raw.get("tool_slug") or raw["source_url"].rstrip("/").rsplit("/", 1)[-1]
    slug = re.sub(r"-[2-9]$", "", slug.lower())  # keep "covid-19", drop "...-2"
    for bad, good in _SLUG_FIXES.items():
        slug = slug.replace(bad, good)
    return slug


def clean_navigation(nav: list[CepNavItem]) -> list[dict[str, str]]:
    """[{title, anchor}] with titles cleaned; first entry wins when an anchor repeats."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for item in nav or []:
        title, anchor = clean_title(item.get("title", "")), (item.get("anchor") or "").strip()
        if title and anchor and anchor not in seen:
            seen.add(anchor)
            out.append({"title": title, "anchor": anchor})
    return out


def _find_anchor(nav: list[dict[str, str]], pattern: str) -> str | None:
    for item in nav:
        if re.search(pattern, f"{item['title']} {item['anchor']}", re.I):
            return item["anchor"]
    return None


def derive_features(raw: CepPage, nav: list[dict[str, str]]) -> dict[str, str | None]:
    """Best-matching navigation anchor per feature, else the tool URL if flagged, else None."""
    flags = raw.get("features") or {}
    out: dict[str, str | None] = {}
    for key, (primary, fallback) in _FEATURES.items():
        anchor = _find_anchor(nav, primary) or (_find_anchor(nav, fallback) if fallback else None)
        out[key] = anchor or (raw["source_url"] if flags.get(_FLAGS[key]) else None)
    return out


def _section_text(raw: CepPage) -> str:
    parts = []
    for s in raw.get("sections") or []:
        if not _BOILERPLATE.match(clean_title(s.get("heading", ""))):
            parts += [s.get("heading", ""), s.get("summary") or ""]
            parts += [sub.get("heading", "") for sub in s.get("subsections") or []]
    return " ".join(parts)


def screening_tools(raw: CepPage) -> list[str]:
    """key_content.assessment_tools, then instruments named in the tool's own sections."""
    found = list((raw.get("key_content") or {}).get("assessment_tools") or [])
    text = _section_text(raw)
    for name, pattern in _INSTRUMENTS.items():
        if name not in found and re.search(pattern, text):
            found.append(name)
    return found


def skeleton_sections(raw: CepPage, nav: list[dict[str, str]]) -> list[dict[str, str]]:
    """Headings for authors: navigation titles, or the tool's main headings when nav is thin."""
    headings = [n["title"] for n in nav]
    if len(headings) < 3:
        headings = [clean_title(s.get("heading", "")) for s in raw.get("sections") or []]
        headings = [h for h in headings if h and not _NOT_CONTENT.match(h)]
    return [{"heading": h, "text": ""} for h in dict.fromkeys(headings)]
