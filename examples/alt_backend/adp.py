"""Assistive Devices Program: the policy manuals' sections, funding rules and exclusions.

Read from ``adp_extraction.json`` (sections by manual), ``adp_funding_rule.csv`` and
``adp_exclusion.csv``. The extract files several manuals under ``core_manual`` (and two under
``prosthesis`` / ``maxillofacial``); each run of sections is given the manual its text names
most often, so a citation can name the manual in words.

The income check for the client's share (thresholds $28,000 single / $39,000 family) is not in
those files: it is the project's Dr. OFF tools specification (adp.get step 7).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from examples.alt_backend.store import Passage, PassageStore
from examples.alt_backend.text import BM25, terms

CEP_ID = "spec/cep-income-thresholds"
CEP_SOURCE = "Dr. OFF MCP Tools Specification (project specification, adp.get step 7)"
CEP_THRESHOLDS = {"single": 28000.0, "family": 39000.0}
CEP_TEXT = (
    "Income check for the client's share, as the project's Dr. OFF specification sets it "
    "(adp.get step 7): a client whose annual income is at or below the threshold - single "
    "$28,000, family $39,000 - has the client share set to 0% (the remaining 25% is covered "
    "under the CEP check). These thresholds come from the specification, not from the ADP "
    "manuals, where 'CEP' names the Central Equipment Pool."
)

# adp_doc -> the manual's published title (as its own pages name it).
MANUALS: dict[str, str] = {
    "mobility": "Mobility Devices Policy and Administration Manual",
    "comm_aids": "Communication Aids Policy and Administration Manual",
    "hearing_devices": "Hearing Devices Policy and Administration Manual",
    "visual_aids": "Visual Aids Policy and Administration Manual",
    "respiratory": "Respiratory Equipment Policy and Administration Manual",
    "insulin_pump": "Insulin Pump and Supplies Policy and Administration Manual",
    "glucose_monitoring": "Real-Time Continuous Glucose Monitoring Systems Policy and Administration Manual",
    "grants": "Grants Policy and Administration Manual",
    "prosthesis": "Limb Prostheses Policy and Administration Manual",
    "maxillofacial": "Maxillofacial Extraoral Prostheses Policy and Administration Manual",
    "core_manual": "Policies and Procedures Manual for the Assistive Devices Program",
}
CATEGORY_WORDS = {
    "mobility": "mobility device",
    "comm_aids": "communication aid",
    "hearing_devices": "hearing device",
    "visual_aids": "visual aid",
    "respiratory": "respiratory equipment",
    "insulin_pump": "insulin pump",
    "glucose_monitoring": "continuous glucose monitoring",
    "grants": "grant",
    "prosthesis": "prosthesis",
    "maxillofacial": "maxillofacial prosthesis",
    "core_manual": "device",
}
POLICIES_MANUAL = "Policies and Procedures Manual for the Assistive Devices Program"
_TITLE = re.compile(
    r"((?:[A-Z][A-Za-z\-]+ (?:and )?){0,6}Polic(?:y|ies) and (?:Administration|Procedures) "
    r"Manual(?: for the Assistive Devices Program)?)"
)


@dataclass
class Section:
    manual: str  # slug used in ids
    title: str  # the manual's title in words
    category: str  # adp_doc (input enum value)
    section_id: str
    heading: str
    text: str
    page: int | None
    rules: list[dict[str, str]] = field(default_factory=list)
    exclusions: list[str] = field(default_factory=list)

    @property
    def chunk_id(self) -> str:
        return f"adp/{self.manual}/{self.section_id}"

    @property
    def loc(self) -> str:
        return f"{self.title}, section {self.section_id}"

    def body(self) -> str:
        parts = [self.heading, self.text]
        parts += [f"Funding rule ({r['scenario']}): {r['details']}" for r in self.rules]
        if self.exclusions:
            parts.append("Exclusion tags: " + ", ".join(self.exclusions) + ".")
        return " ".join(p for p in parts if p).strip()


def _clean(text: str, title: str) -> str:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or re.fullmatch(r"---\s*Page \d+\s*---", s):
            continue
        if re.fullmatch(
            r"(January|February|March|April|May|June|July|August|September|"
            r"October|November|December) \d{4}",
            s,
        ):
            continue
        if s.startswith(title) or _TITLE.fullmatch(re.sub(r"\s+\d+$", "", s)):
            continue
        out.append(s)
    text = " ".join(out)
    text = re.sub(r"\s*•\s*", " • ", text)
    return " ".join(text.split()).strip(" •")


def _revision_note(s: dict[str, JsonValue]) -> bool:
    """A manual's revision-history line (front matter, no part, pages 1-3), not a section."""
    page = s.get("page_num")
    return s.get("part") is None and isinstance(page, int) and page <= 3


def _slug(title: str) -> str:
    core = re.sub(r" (Policy and Administration|Policies and Procedures) Manual.*$", "", title)
    return re.sub(r"[^a-z0-9]+", "-", core.lower()).strip("-") or "policies-procedures"


class Manuals:
    def __init__(self, folder: Path):
        data = json.loads((folder / "adp_extraction.json").read_text(encoding="utf-8"))
        self.sections: dict[tuple[str, str], Section] = {}
        self.by_category: dict[str, list[Section]] = defaultdict(list)
        # adp_extraction.json's section records: {adp_doc, section_id, title, raw_text, ...}
        rows: list[dict[str, JsonValue]] = [
            s
            for s in data.get("sections") or []
            if "...." not in str(s.get("title")) and not _revision_note(s)
        ]
        for doc, runs in self._runs(rows).items():
            for run in runs:
                title = self._run_title(doc, run)
                for s in run:
                    self._add(doc, title, s)
        with (folder / "adp_funding_rule.csv").open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                sec = self._section_for(r["adp_doc"], r["section_ref"])
                sec.rules.append(
                    {
                        "rule_id": r["rule_id"],
                        "scenario": r["scenario"],
                        "details": _clean(r["details"], MANUALS.get(r["adp_doc"], "")),
                    }
                )
        with (folder / "adp_exclusion.csv").open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                sec = self._section_for(r["adp_doc"], r["section_ref"])
                if r["phrase"] not in sec.exclusions:
                    sec.exclusions.append(r["phrase"])
        self.all = list(self.sections.values())
        self._index = BM25([f"{s.heading} {s.body()}" for s in self.all])

    @staticmethod
    def _runs(rows: list[dict[str, JsonValue]]) -> dict[str, list[list[dict[str, JsonValue]]]]:
        """Sections of each adp_doc split where the numbering starts again (a new manual)."""
        runs: dict[str, list[list[dict[str, JsonValue]]]] = defaultdict(list)
        for s in rows:
            doc = str(s.get("adp_doc"))
            try:
                num = float(str(s.get("section_id")))
            except ValueError:
                continue
            doc_runs = runs[doc]
            if doc_runs and num + 50 >= float(str(doc_runs[-1][-1].get("section_id"))):
                doc_runs[-1].append(s)
            else:
                doc_runs.append([s])
        return runs

    @staticmethod
    def _run_title(doc: str, run: list[dict[str, JsonValue]]) -> str:
        counts: Counter[str] = Counter()
        for s in run:
            counts.update(_TITLE.findall(f"{s.get('title')} {s.get('raw_text')}"))
        for name, _ in counts.most_common():
            if not name.startswith(("This ", "The ", "ADP ", "Supplies ")):
                return name
        return MANUALS.get(doc, f"ADP {doc} manual")

    def _add(self, doc: str, title: str, s: dict[str, JsonValue]) -> None:
        manual = doc if title == MANUALS.get(doc) and doc != "core_manual" else _slug(title)
        sid = str(s.get("section_id")).strip()
        heading = " ".join(str(s.get("title") or "").split())
        text = _clean(str(s.get("raw_text") or ""), title)
        found = s.get("page_num")
        page = found if isinstance(found, int) else None
        key = (manual, sid)
        held = self.sections.get(key)
        if held is not None:
            held.heading = (
                f"{held.heading} / {heading}" if heading not in held.heading else held.heading
            )
            held.text = f"{held.text} {text}".strip()
            return
        sec = Section(manual, title, doc, sid, heading, text, page)
        self.sections[key] = sec
        self.by_category[doc].append(sec)

    def _section_for(self, doc: str, sid: str) -> Section:
        """The section a CSV row names (created from the row when the extract lacks it)."""
        manual = doc if doc != "core_manual" else _slug(POLICIES_MANUAL)
        key = (manual, sid.strip())
        if key not in self.sections:
            sec = Section(manual, MANUALS.get(doc, doc), doc, sid.strip(), "", "", None)
            self.sections[key] = sec
            self.by_category[doc].append(sec)
        return self.sections[key]

    def find(self, manual: str, sid: str) -> Section | None:
        return self.sections.get((manual, sid))

    def policies(self, sid: str) -> Section | None:
        return self.sections.get((_slug(POLICIES_MANUAL), sid))

    def search(self, query: str, category: str | None = None, k: int = 5) -> list[Section]:
        q = terms(query)
        scored = []
        for i, s in enumerate(self.all):
            if category and s.category != category:
                continue
            score = self._index.score(q, i)
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [self.all[i] for _, i in scored[:k]]

    def mentions(self, phrase: str) -> bool:
        low = phrase.lower()
        return any(low in s.body().lower() for s in self.all)

    def passages(self, store: PassageStore) -> None:
        for s in self.all:
            store.add(
                Passage(
                    s.chunk_id,
                    s.body(),
                    f"ADP {s.title}",
                    f"{s.section_id} {s.heading}".strip(),
                    s.page,
                )
            )
        store.add(Passage(CEP_ID, CEP_TEXT, CEP_SOURCE, "adp.get step 7 (CEP income thresholds)"))
