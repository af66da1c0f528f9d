"""Where the PHO IPAC document covers each theme (hand hygiene, PPE, reprocessing...), and the
facts it lists: the Spaulding table, cleaning frequencies, and the numbered legislated practices
and recommendations (number, level and theme only, never the wording)."""

from __future__ import annotations

import re
from typing import TypedDict

from .opa_pho_outline import Heading, OrphanHeading
from .opa_pho_text import Rejoiner, page_ranges, repair

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


class ThemeLocation(TypedDict):
    headings: list[str]  # outline headings whose span mentions the theme most, best first
    pages: list[str]  # body page ranges where it appears


# One row of the Spaulding table ("class" is a keyword, hence the functional form).
SpauldingRow = TypedDict(
    "SpauldingRow",
    {
        "class": str,
        "minimum_level": str,
        "sterilization_preferred": bool,
        "cleaning_alone_sometimes_acceptable": bool,
        "examples": list[str],
    },
)


class CleaningFrequency(TypedDict):
    item: str
    frequency: str
    page: int | None


class NumberedStatement(TypedDict):
    number: int
    level: str
    theme: str


def locate_themes(
    lines: list[tuple[int | None, str]],
    outline: list[Heading],
    extra: list[OrphanHeading],
    body_end: int,
) -> dict[str, ThemeLocation]:
    """For each theme: the outline headings (main body only) whose span mentions it most,
    and the body pages where it appears. ``extra`` are headings of chapters the extraction
    lost, used as span boundaries too."""
    flat = [h for c in outline for h in [c, *c.children]]
    for o in extra:
        number, _, title = o["heading"].partition(". ")
        flat.append(Heading(3, number, title, o["page"], o["line"]))
    flat.sort(key=lambda h: h.line)
    result: dict[str, ThemeLocation] = {}
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
        result[theme] = {"headings": [k for k, _ in top], "pages": page_ranges(pages)}
    return result


def derive_spaulding(text: str, fix: Rejoiner) -> list[SpauldingRow]:
    t = fix(repair(text))
    m = re.search(r"Table 2: Spaulding.*?(Critical.*?)C\. Single", t, re.S)
    if not m:
        return []
    body = re.sub(r"\s+", " ", m.group(1))
    rows: list[SpauldingRow] = []
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


def derive_cleaning_frequencies(lines: list[tuple[int | None, str]]) -> list[CleaningFrequency]:
    """Item + frequency pairs still present in the extraction (Table 1's body is not).

    The item is looked for on the line holding the frequency phrase, else on the line before
    it (the pattern closest to the phrase wins)."""
    out: list[CleaningFrequency] = []
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


def derive_numbered_statements(text: str, fix: Rejoiner) -> dict[str, list[NumberedStatement]]:
    """Numbered legislated practices and best-practice recommendations from the summary
    tables: number, level and theme only - never the wording."""
    t = fix(repair(text))
    summary = t.split("Summary of Legislated Mandatory Practices", 1)[-1]
    legislated_part, _, rec_part = summary.partition("Summary of Best Practice")
    rec_part = rec_part.split("III. Append", 1)[0]

    def items(part: str, default: str | None) -> list[NumberedStatement]:
        found: dict[int, NumberedStatement] = {}
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
