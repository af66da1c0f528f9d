"""`opa.ipac_guidance`: PHO infection prevention and control (IPAC) guidance for office practice.

Sources. The spec filters ``source_org = 'pho'``: requirements, best practices, checklists and
references come from the PHO documents whose title or topics speak of infection prevention
(here the one PHO extract, PIDAC's *Infection Prevention and Control for Clinical Office
Practice*). CPSO's IPAC pages (the CPSO documents whose title says "Infection Prevention and
Control": the policy and its Advice to the Profession) are read only to find conflicts.

Topic -> sections, by the words of the section's own heading (``TOPIC_WORDS``): a heading that
names reprocessing, sterilization, disinfection, instruments or medical equipment/devices is
``reprocessing``; gloves, gowns, masks, respirators, facial/eye protection, PPE or precautions
``ppe``; hand hygiene, hand washing, hand rub or hand preparation ``hand_hygiene``; the
environment, cleaning, waste, sharps, toys, magazines, electronic equipment, reception areas or
office design ``environmental`` (a heading that names reprocessing words is not environmental:
"Instrument Cleaning" is reprocessing). Reference lists, the glossary, abbreviations, the
summary tables and the checklists are not requirement sections.

Setting: the PHO document is written for clinical offices and clinics alike, so ``office`` and
``clinic`` get the same answer; sections whose heading names surgery or invasive procedures
apply to ``procedure_room`` only, and are added there.

Level of a requirement, from the PHO's own wording (its summary tables define "Must indicates
best practice, i.e., the standard of care" and "Should indicates a recommendation ... advised but
not mandatory"; its legislated practices say "shall"): a sentence or bullet that says "must",
"shall" or "is/are required" is ``must``; else one that says "should" is ``should``; else one
that permits ("may be used", "may use", "may be considered", "may consider", "may choose") is
``may``. A sentence with none of these is not a requirement. ``rationale`` is the next sentence
of the same section when it is not itself a requirement or a bullet, else the section's first
such sentence (its opening explanation), else empty.

``specific_item`` narrows: the requirements of the topic's sections holding at least half of the
item's words (all of a one-word item, by the search's stemmer), most of them first; when none
does, those of any PHO IPAC section; when none anywhere does, the topic's requirements are
returned unnarrowed and ``confidence`` is capped at ``NO_ITEM_CAP``.

``best_practices``: the items of the PHO's own summary tables (sections under a "Summary of"
heading, numbered items) whose text names the topic's words, in the table's order.

Checklists: a section whose heading says "Checklist" and the sections after it up to the next
"Appendix" heading. In them a short title line without a bullet starts a list (named "<appendix
title> - <line>"); bullets are its items. ``frequency`` is the one its items name most
("between patients", "each patient", "after each use", "per use" -> ``per_use``; "daily" ->
``daily``; "weekly" -> ``weekly``; ties in that order), ``unspecified`` when none names one. An
item is ``required`` unless it is conditional (opens with "If", "Where" or "When") or only
advises ("should", "may", "if possible", "where possible"); its ``notes`` name the frequency it
states, if any. A list whose name names the topic's words is shown whole; otherwise its items
that name them are shown. ``include_checklists`` false returns none.

Conflicts: a PHO statement (a returned requirement or best practice) and a CPSO IPAC statement
about the same practice at different levels. CPSO statements are the lines of its IPAC pages
that name the topic's words; a policy line's level is its own ("must" -> must, "should" ->
should), else that of the last lead-in line (ending ":") that had one; an Advice page line is
``must`` when it says "must"/"required", else ``should`` (its questions are not statements). Same practice: the two share at
least ``SAME_PRACTICE_MIN_TERMS`` content terms (stemmed, less generic words) and those are at
least ``SAME_PRACTICE_SHARE`` of the shorter statement's. Each is reported once per PHO
statement (its best CPSO match), with the stricter level as the resolution.

``confidence``: a single-path base of 0.6, +0.03 for each further section behind the
requirements (at most +0.15), -0.1 when there are conflicts (the spec's penalty), capped at
``NO_ITEM_CAP`` when the item is found nowhere; 0 with no requirement.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypedDict

from fastmcp.exceptions import ToolError

from examples.alt_opa.corpus import Corpus, Document, Section
from examples.alt_opa.payloads import Conflict
from examples.alt_opa.search import tokens

TOPICS = ("reprocessing", "ppe", "hand_hygiene", "environmental")
SETTINGS = ("office", "clinic", "procedure_room")
MUST, SHOULD, MAY = "must", "should", "may"
PER_USE, DAILY, WEEKLY, UNSPECIFIED = "per_use", "daily", "weekly", "unspecified"
PROVENANCE = ["sql"]  # one lexical path; the schema's vocabulary calls that path "sql"
BASE_CONFIDENCE = 0.6
CORROBORATION_STEP = 0.03
CORROBORATION_CAP = 0.15
CONFLICT_PENALTY = 0.1
NO_ITEM_CAP = 0.3
SAME_PRACTICE_MIN_TERMS = 4
SAME_PRACTICE_SHARE = 0.45

TOPIC_WORDS = {
    "reprocessing": re.compile(
        r"reprocess|sterili[sz]|disinfect|instrument|single-use|endoscop|\bHLD\b|\bLLD\b|"
        r"medical (?:equipment|devices?)|contaminated equipment",
        re.I,
    ),
    "ppe": re.compile(
        r"personal protective|\bPPE\b|glove|gown|\bmasks?\b|respirator|facial protection|"
        r"eye protection|precaution",
        re.I,
    ),
    "hand_hygiene": re.compile(
        r"hand hygiene|hand ?washing|hand rub|\bABHR\b|hand preparation|\bhands\b", re.I
    ),
    "environmental": re.compile(
        r"environment|cleaning|\bwaste\b|sharps|spills?\b|toys|magazines|electronic equipment|"
        r"reception area|office design|renovation|surfaces?\b",
        re.I,
    ),
}
PROCEDURE_ONLY = re.compile(r"surgical|invasive", re.I)
NOT_REQUIREMENTS = re.compile(
    r"^(glossary|abbreviations|references|front matter|preamble)\b|summary of|checklist|"
    r"^(mandatory practice|recommendation)$",
    re.I,
)
IPAC_DOCUMENT = re.compile(r"infection prevention|\bipac\b|pidac", re.I)
CPSO_IPAC_TITLE = re.compile(r"infection prevention and control", re.I)

MUST_WORDS = re.compile(r"\b(must|shall)\b|\b(is|are)\s+required\b", re.I)
SHOULD_WORDS = re.compile(r"\bshould\b", re.I)
MAY_WORDS = re.compile(r"\bmay\s+(be used|use|be considered|consider|choose)\b", re.I)
BULLET = re.compile(r"^[\u2022\u25aa\u25cf\-\*]\s*")
NUMBERED = re.compile(r"^(?:\d{1,2}\.\s+)+")
SENTENCE_END = re.compile(r"(?<=[a-z0-9\)\]])[.;]\d*\s+(?=[A-Z])")
FREQUENCY_WORDS = (
    (PER_USE, re.compile(r"between patients|each patient|after each use|per use", re.I)),
    (DAILY, re.compile(r"\bdaily\b", re.I)),
    (WEEKLY, re.compile(r"\bweekly\b", re.I)),
)
CONDITIONAL = re.compile(r"^(if|where|when)\b", re.I)
ADVISORY = re.compile(r"\b(should|may)\b|(if|where) possible", re.I)
GENERIC_TERMS = frozenset(
    tokens(
        "physicians physician health care providers provider staff patient patients ensure "
        "ensuring practice practices clinical office setting settings used use using required "
        "including include accordance following appropriate undertake"
    )
)


class Requirement(TypedDict):
    level: str
    text: str
    rationale: str
    source_section_id: str


class ChecklistItem(TypedDict):
    item: str
    required: bool
    notes: str


class Checklist(TypedDict):
    name: str
    frequency: str
    items: list[ChecklistItem]


class Reference(TypedDict):
    title: str
    url: str
    date: str


class IpacCitation(TypedDict):
    source: str
    loc: str
    chunk_id: str
    url: str


class IpacResult(TypedDict):
    provenance: list[str]
    confidence: float
    topic: str
    setting: str
    requirements: list[Requirement]
    best_practices: list[str]
    checklists: list[Checklist]
    references: list[Reference]
    citations: list[IpacCitation]
    conflicts: list[Conflict]


@dataclass(frozen=True)
class Request:
    topic: str
    setting: str = "office"
    specific_item: str | None = None
    include_checklists: bool = True


@dataclass(frozen=True)
class Statement:
    """One sentence or bullet of a section, with the level its words state (None: none)."""

    section: Section
    text: str
    level: str | None
    bullet: bool


def validate(request: Request) -> None:
    if request.topic not in TOPICS:
        raise ToolError(f"invalid topic: {request.topic!r}; allowed: {', '.join(TOPICS)}")
    if request.setting not in SETTINGS:
        raise ToolError(f"invalid setting: {request.setting!r}; allowed: {', '.join(SETTINGS)}")
    if request.specific_item is not None and not tokens(request.specific_item):
        raise ToolError(
            f"invalid specific_item: {request.specific_item!r} holds no searchable word; "
            "name the equipment or procedure, or leave it out"
        )


def level_of(text: str) -> str | None:
    """The requirement level the words of one sentence state (module docstring)."""
    if MUST_WORDS.search(text):
        return MUST
    if SHOULD_WORDS.search(text):
        return SHOULD
    if MAY_WORDS.search(text):
        return MAY
    return None


def _units(text: str) -> list[tuple[str, bool]]:
    """The section's bullets and sentences (PDF lines joined), each with whether a bullet."""
    units: list[tuple[str, bool]] = []
    current: list[str] = []
    bullet = False

    def close() -> None:
        if current:
            units.append((" ".join(current), bullet))

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            close()
            current, bullet = [], False
            continue
        if BULLET.match(line) or NUMBERED.match(line):
            close()
            current, bullet = [NUMBERED.sub("", BULLET.sub("", line))], True
            continue
        current.append(line)
    close()
    out: list[tuple[str, bool]] = []
    for unit, is_bullet in units:
        for sentence in SENTENCE_END.split(re.sub(r"\s+", " ", unit).strip()):
            sentence = sentence.strip()
            if len(sentence) >= 12:
                out.append((sentence, is_bullet))
    return out


def statements(section: Section) -> list[Statement]:
    return [Statement(section, t, level_of(t), b) for t, b in _units(section.text)]


def topic_of_heading(heading: str) -> set[str]:
    found = {t for t, words in TOPIC_WORDS.items() if words.search(heading)}
    if "reprocessing" in found:
        found.discard("environmental")
    return found


def item_share(item_terms: list[str], text: str) -> float:
    if not item_terms:
        return 0.0
    have = set(tokens(text))
    return sum(1 for t in item_terms if t in have) / len(item_terms)


def item_enough(item_terms: list[str], text: str) -> bool:
    share = item_share(item_terms, text)
    return share >= 1.0 if len(item_terms) == 1 else share >= 0.5


def frequency_of(text: str) -> str | None:
    for name, words in FREQUENCY_WORDS:
        if words.search(text):
            return name
    return None


def practice_terms(text: str) -> set[str]:
    return {t for t in tokens(text) if t not in GENERIC_TERMS and not t.isdigit()}


def same_practice(a: str, b: str) -> bool:
    ta, tb = practice_terms(a), practice_terms(b)
    shared = ta & tb
    if len(shared) < SAME_PRACTICE_MIN_TERMS or not ta or not tb:
        return False
    return len(shared) / min(len(ta), len(tb)) >= SAME_PRACTICE_SHARE


def _short(text: str, limit: int = 220) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


class IpacGuide:
    """The PHO IPAC documents' sections (and CPSO's IPAC pages, for conflicts) of a corpus."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.pho = [
            d
            for d in corpus.documents.values()
            if d.org == "pho" and IPAC_DOCUMENT.search(" ".join([d.title, *d.topics]))
        ]
        self.cpso = [
            d
            for d in corpus.documents.values()
            if d.org == "cpso" and CPSO_IPAC_TITLE.search(d.title)
        ]
        self.sections = [
            s for d in self.pho for s in corpus.document_sections(d.doc_id) if s.searchable
        ]
        self.statements = {s.section_id: statements(s) for s in self.sections}

    # ------------------------------------------------------------------ pieces

    def requirement_sections(self, topic: str, setting: str) -> list[Section]:
        out = []
        for s in self.sections:
            if NOT_REQUIREMENTS.search(s.heading) or any(
                NOT_REQUIREMENTS.search(c) for c in s.context
            ):
                continue
            if topic not in topic_of_heading(s.heading):
                continue
            if PROCEDURE_ONLY.search(s.heading) and setting != "procedure_room":
                continue
            out.append(s)
        return out

    def requirements_of(self, sections: Iterable[Section]) -> list[tuple[Statement, str]]:
        out = []
        for s in sections:
            units = self.statements[s.section_id]
            opening = next((u.text for u in units if u.level is None and not u.bullet), "")
            for k, u in enumerate(units):
                if u.level is None:
                    continue
                after = units[k + 1] if k + 1 < len(units) else None
                rationale = (
                    after.text
                    if after is not None and after.level is None and not after.bullet
                    else (opening if opening != u.text else "")
                )
                out.append((u, rationale))
        return out

    def best_practices(self, topic: str) -> list[Statement]:
        words = TOPIC_WORDS[topic]
        out = []
        for s in self.sections:
            if not any("summary of" in h.lower() for h in (s.heading, *s.context)):
                continue
            for u in self.statements[s.section_id]:
                if u.bullet and u.level is not None and words.search(u.text):
                    out.append(u)
        return out

    def checklists(self, topic: str) -> list[Checklist]:
        words = TOPIC_WORDS[topic]
        out: list[Checklist] = []
        appendix = ""
        for s in self.sections:
            if "checklist" in s.heading.lower():
                appendix = s.heading
                lists = self._lists(s.text, appendix)
            elif appendix and not s.heading.lower().startswith("appendix"):
                lists = self._lists(s.text, f"{appendix} - {s.heading}")
            else:
                appendix = ""
                continue
            for name, items in lists:
                if not words.search(name):
                    items = [i for i in items if words.search(i)]
                if items:
                    out.append(self._checklist(name, items))
        return out

    def _lists(self, text: str, first_name: str) -> list[tuple[str, list[str]]]:
        lists: list[tuple[str, list[str]]] = [(first_name, [])]
        appendix = first_name.split(" - ")[0]
        for raw in text.splitlines():
            line = raw.strip()
            if not line:
                continue
            if BULLET.match(line):
                lists[-1][1].append(BULLET.sub("", line))
            elif len(line) <= 60 and not line.endswith((".", ",", ";")) and line[0].isupper():
                lists.append((f"{appendix} - {line}", []))
            elif lists[-1][1]:
                lists[-1][1][-1] += " " + line
        return [(n, [re.sub(r"\s+", " ", i).strip() for i in items]) for n, items in lists if items]

    def _checklist(self, name: str, items: list[str]) -> Checklist:
        named = Counter(f for i in items if (f := frequency_of(i)))
        order = [PER_USE, DAILY, WEEKLY]
        frequency = min(named, key=lambda f: (-named[f], order.index(f))) if named else UNSPECIFIED
        return {
            "name": name,
            "frequency": frequency,
            "items": [
                {
                    "item": i,
                    "required": not (CONDITIONAL.match(i) or ADVISORY.search(i)),
                    "notes": f"frequency: {f}" if (f := frequency_of(i)) else "",
                }
                for i in items
            ],
        }

    def cpso_statements(self, topic: str) -> list[tuple[Document, str, str]]:
        words = TOPIC_WORDS[topic]
        out = []
        for doc in self.cpso:
            advice = doc.doc_type == "advice" or doc.policy_level == "advice"
            for s in self.corpus.document_sections(doc.doc_id):
                if not s.searchable:
                    continue
                lead: str | None = None
                for raw in s.text.splitlines():
                    line = raw.strip()
                    if not line or line.endswith("?"):
                        continue
                    own = level_of(line)
                    level = (MUST if own == MUST else SHOULD) if advice else own or lead or ""
                    if own:
                        lead = own if line.endswith(":") else None
                    if level and words.search(line):
                        out.append((doc, NUMBERED.sub("", BULLET.sub("", line)), level))
        return out

    def conflicts(self, topic: str, pho: Iterable[Statement]) -> list[Conflict]:
        cpso = self.cpso_statements(topic)
        out: list[Conflict] = []
        seen: set[str] = set()
        for u in pho:
            if u.level not in (MUST, SHOULD) or u.text in seen:
                continue
            matches = [
                (len(practice_terms(u.text) & practice_terms(t)), doc, t, level)
                for doc, t, level in cpso
                if level in (MUST, SHOULD) and level != u.level and same_practice(u.text, t)
            ]
            if not matches:
                continue
            seen.add(u.text)
            _, doc, text, level = max(matches, key=lambda m: m[0])
            stricter = MUST if MUST in (u.level, level) else SHOULD
            out.append(
                {
                    "field": f"requirement level: PHO '{u.level}' vs CPSO '{level}'",
                    "resolution": (
                        f"PHO ({u.section.heading}) says '{u.level}': “{_short(u.text)}” "
                        f"CPSO ({doc.title}) says '{level}': “{_short(text)}” "
                        f"Both are shown; the stricter level is '{stricter}'."
                    ),
                }
            )
        return out

    # ------------------------------------------------------------------ the answer

    def answer(self, request: Request, url: Callable[[Document], str]) -> IpacResult:
        validate(request)
        sections = self.requirement_sections(request.topic, request.setting)
        found = self.requirements_of(sections)
        item_missing = False
        if request.specific_item:
            item = tokens(request.specific_item)
            narrowed = [r for r in found if item_enough(item, r[0].text)]
            if not narrowed:
                narrowed = [
                    r for r in self.requirements_of(self.sections) if item_enough(item, r[0].text)
                ]
            if narrowed:
                found = sorted(narrowed, key=lambda r: -item_share(item, r[0].text))
            else:
                item_missing = True
        best = self.best_practices(request.topic)
        conflicts = self.conflicts(request.topic, [r[0] for r in found] + best)
        used = list(dict.fromkeys(r[0].section.section_id for r in found))
        docs = list(dict.fromkeys(self.corpus.by_id[i].doc_id for i in used))
        return {
            "provenance": list(PROVENANCE),
            "confidence": self.confidence(len(used), bool(conflicts), item_missing),
            "topic": request.topic,
            "setting": request.setting,
            "requirements": [
                {
                    "level": u.level or SHOULD,
                    "text": u.text,
                    "rationale": rationale,
                    "source_section_id": u.section.section_id,
                }
                for u, rationale in found
            ],
            "best_practices": [u.text for u in best],
            "checklists": self.checklists(request.topic) if request.include_checklists else [],
            "references": [self.reference(self.corpus.documents[d], url) for d in docs],
            "citations": [self.citation(self.corpus.by_id[i], url) for i in used],
            "conflicts": conflicts,
        }

    def confidence(self, n_sections: int, conflicted: bool, item_missing: bool) -> float:
        if not n_sections:
            return 0.0
        value = BASE_CONFIDENCE + min(CORROBORATION_CAP, CORROBORATION_STEP * (n_sections - 1))
        if conflicted:
            value -= CONFLICT_PENALTY
        if item_missing:
            value = min(value, NO_ITEM_CAP)
        return round(max(0.0, min(1.0, value)), 3)

    def reference(self, doc: Document, url: Callable[[Document], str]) -> Reference:
        return {
            "title": doc.title,
            "url": url(doc),
            "date": doc.updated_date or doc.effective_date or doc.published_date or "",
        }

    def citation(self, section: Section, url: Callable[[Document], str]) -> IpacCitation:
        doc = self.corpus.documents[section.doc_id]
        where = url(doc)
        if where and section.page is not None and where.lower().endswith(".pdf"):
            where = f"{where}#page={section.page}"
        loc = section.heading + (f", p. {section.page}" if section.page is not None else "")
        return {"source": doc.title, "loc": loc, "chunk_id": section.section_id, "url": where}
