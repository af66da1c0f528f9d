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
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examples.alt_backend.store import Passage, PassageStore, citation
from examples.alt_backend.text import BM25, terms, words

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
# Words that name no device (a question made only of these has no category to infer).
GENERIC_TERMS = frozenset(
    terms(
        "adp assistive devices device program fund funding funded cover covered coverage pay pays "
        "paid client patient cost costs what does get need needs help grant eligible eligibility"
    )
)
_TITLE = re.compile(
    r"((?:[A-Z][A-Za-z\-]+ (?:and )?){0,6}Polic(?:y|ies) and (?:Administration|Procedures) "
    r"Manual(?: for the Assistive Devices Program)?)"
)

# Device words -> (device in words, category). Longest phrases are tried first.
DEVICES: tuple[tuple[str, str, str], ...] = (
    ("power wheelchair", "power wheelchair", "mobility"),
    ("power chair", "power wheelchair", "mobility"),
    ("electric wheelchair", "power wheelchair", "mobility"),
    ("manual wheelchair", "manual wheelchair", "mobility"),
    ("wheelchair", "wheelchair", "mobility"),
    ("power scooter", "power scooter", "mobility"),
    ("mobility scooter", "power scooter", "mobility"),
    ("scooter", "power scooter", "mobility"),
    ("rollator", "walker", "mobility"),
    ("walker", "walker", "mobility"),
    ("crutch", "crutches", "mobility"),
    ("standing frame", "standing frame", "mobility"),
    ("seating", "seating / positioning device", "mobility"),
    ("power add-on", "power add-on device", "mobility"),
    ("speech generating device", "speech generating device", "comm_aids"),
    ("speech-generating device", "speech generating device", "comm_aids"),
    ("sgd", "speech generating device", "comm_aids"),
    ("voca", "speech generating device", "comm_aids"),
    ("communication device", "communication aid", "comm_aids"),
    ("communication aid", "communication aid", "comm_aids"),
    ("speaking valve", "voice restoration / speaking valve", "comm_aids"),
    ("voice restoration", "voice restoration / speaking valve", "comm_aids"),
    ("electrolarynx", "electrolarynx", "comm_aids"),
    ("voice amplifier", "voice amplifier", "comm_aids"),
    ("hearing aid", "hearing aid", "hearing_devices"),
    ("fm system", "FM system", "hearing_devices"),
    ("cochlear", "cochlear implant speech processor", "hearing_devices"),
    ("baha", "bone anchored hearing aid", "hearing_devices"),
    ("magnifier", "magnifier", "visual_aids"),
    ("cctv", "closed-circuit television reader", "visual_aids"),
    ("low vision", "visual aid", "visual_aids"),
    ("cpap", "CPAP machine", "respiratory"),
    ("bipap", "BiPAP machine", "respiratory"),
    ("ventilator", "ventilator", "respiratory"),
    ("oxygen", "home oxygen", "respiratory"),
    ("insulin pump", "insulin pump", "insulin_pump"),
    ("continuous glucose monitor", "continuous glucose monitor", "glucose_monitoring"),
    ("glucose monitor", "continuous glucose monitor", "glucose_monitoring"),
    ("cgm", "continuous glucose monitor", "glucose_monitoring"),
    ("breast prosthesis", "breast prosthesis", "grants"),
    ("breast prostheses", "breast prosthesis", "grants"),
    ("ostomy", "ostomy supplies", "grants"),
    ("artificial limb", "limb prosthesis", "prosthesis"),
    ("prosthetic leg", "limb prosthesis", "prosthesis"),
    ("prosthetic arm", "limb prosthesis", "prosthesis"),
    ("artificial eye", "ocular prosthesis", "prosthesis"),
    ("ocular prosthesis", "ocular prosthesis", "prosthesis"),
    ("facial prosthesis", "facial prosthesis", "maxillofacial"),
    ("compression garment", "compression garment", "core_manual"),
    ("lymphedema", "compression garment", "core_manual"),
    ("orthosis", "orthosis", "core_manual"),
    ("brace", "orthosis", "core_manual"),
)

# Things a question can ask about that a manual may refuse: label, question words, text words.
CONCERNS: tuple[tuple[str, str, str, str], ...] = (
    ("batteries", "Batteries", r"batter", r"batter"),
    ("repairs", "Repairs and maintenance", r"repair|maintenance|fix", r"repair"),
    (
        "transport",
        "Use only outdoors or as a substitute for a car or other transport",
        r"car substitute|substitute for a car|instead of a car|outdoors? only|only (?:for )?outdoors?|outdoor use|replace (?:a|the|her|his) car",
        r"alternative means of transportation|substitution for car|replacement for a car",
    ),
    (
        "single_purpose",
        "Use solely for school, work, recreation or sport",
        r"only for (?:school|work|sports?|recreation)|just for (?:school|work|sports?)",
        r"school|recreation|sports",
    ),
    (
        "backup",
        "Backup, spare or duplicate devices",
        r"backup|back-up|spare|second (?:chair|device)",
        r"backup|spare|duplicate",
    ),
)
_NOT_FUNDED = re.compile(
    r"not (?:provide|be) fund|does not (?:provide|fund|pay)|not funded|no funding", re.I
)
_POLICY_Q = re.compile(
    r"\b(who (?:operates|runs|provides|supplies|repairs|pays)|operat(?:es|ed|or)|equipment pool|"
    r"lease|leasing|supplier|vendor|service agreement|co-?payment)\b",
    re.I,
)
_SA = (
    ("odsp", r"\bodsp\b|ontario disability support", "ODSP"),
    ("ontario_works", r"\bontario works\b|\bow\b", "Ontario Works"),
    ("acsd", r"\bacsd\b|assistance for children with severe disabilit", "ACSD"),
    ("social_assistance", r"social assistance|on welfare", "social assistance"),
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


def _revision_note(s: dict[str, Any]) -> bool:
    """A manual's revision-history line (front matter, no part, pages 1-3), not a section."""
    page = s.get("page_num")
    return s.get("part") is None and isinstance(page, int) and page <= 3


def _slug(title: str) -> str:
    core = re.sub(r" (Policy and Administration|Policies and Procedures) Manual.*$", "", title)
    return re.sub(r"[^a-z0-9]+", "-", core.lower()).strip("-") or "policies-procedures"


def _neighbour(section_id: str) -> str:
    """The next section number (705 -> 710, 110.01 -> 115.01): the seeded 'section' defect."""
    head, _, tail = section_id.partition(".")
    bumped = str(int(head) + 5)
    return f"{bumped}.{tail}" if tail else bumped


class Manuals:
    def __init__(self, folder: Path):
        data = json.loads((folder / "adp_extraction.json").read_text(encoding="utf-8"))
        self.sections: dict[tuple[str, str], Section] = {}
        self.by_category: dict[str, list[Section]] = defaultdict(list)
        rows = [
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
    def _runs(rows: list[dict[str, Any]]) -> dict[str, list[list[dict[str, Any]]]]:
        """Sections of each adp_doc split where the numbering starts again (a new manual)."""
        runs: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
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
    def _run_title(doc: str, run: list[dict[str, Any]]) -> str:
        counts: Counter[str] = Counter()
        for s in run:
            counts.update(_TITLE.findall(f"{s.get('title')} {s.get('raw_text')}"))
        for name, _ in counts.most_common():
            if not name.startswith(("This ", "The ", "ADP ", "Supplies ")):
                return name
        return MANUALS.get(doc, f"ADP {doc} manual")

    def _add(self, doc: str, title: str, s: dict[str, Any]) -> None:
        manual = doc if title == MANUALS.get(doc) and doc != "core_manual" else _slug(title)
        sid = str(s.get("section_id")).strip()
        heading = " ".join(str(s.get("title") or "").split())
        text = _clean(str(s.get("raw_text") or ""), title)
        page = s.get("page_num") if isinstance(s.get("page_num"), int) else None
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


# ======================================================================== answering


@dataclass
class AdpRequest:
    query: str | None = None
    category: str | None = None
    device_type: str | None = None
    checks: list[str] | None = None
    patient_income: float | None = None
    social_assistance: str | None = None
    daily: bool | None = None
    location: str | None = None
    independent_transfer: bool | None = None


def find_device(text: str) -> tuple[str | None, str | None]:
    low = " ".join(words(text.replace("-", " ")))
    for phrase, device, category in sorted(DEVICES, key=lambda d: -len(d[0])):
        p = " ".join(words(phrase.replace("-", " ")))
        if re.search(rf"\b{re.escape(p)}s?\b", low):
            return device, category
    return None, None


def find_income(text: str) -> tuple[float | None, str | None]:
    """An annual income stated in words around a dollar amount ('income $19,000', 'earns
    $26,000 a year', 'family income $30k'); a price ('a $2,400 wheelchair') is not one."""
    amount = r"\$?\s?(\d[\d,]*(?:\.\d+)?)\s*(k|thousand)?"
    patterns = (
        rf"(?:income|earns?|earning|makes|salary|pension)[^$\d]{{0,25}}{amount}",
        rf"{amount}\s*(?:a|per|/)\s*(?:year|yr|annum)",
        rf"{amount}\s*(?:annual|yearly)\s*income",
    )
    for pat in patterns:
        m = re.search(pat, text, re.IGNORECASE)
        if m:
            value = float(m.group(1).replace(",", ""))
            if m.group(2):
                value *= 1000
            return value, m.group(0).strip()
    return None, None


def find_household(text: str) -> tuple[str, bool]:
    """('family' | 'single', stated?)."""
    if re.search(
        r"\b(family|household of [2-9]|spouse|married|couple|children|kids|dependants?)\b",
        text,
        re.I,
    ):
        return "family", True
    if re.search(r"\b(lives alone|living alone|single|on (?:her|his|their) own)\b", text, re.I):
        return "single", True
    return "single", False


class AdpAnswer:
    def __init__(self, manuals: Manuals, defects: frozenset[str]):
        self.m = manuals
        self.defects = defects

    def _rule_loc(self, sec: Section) -> str:
        if "section" in self.defects:
            return f"{sec.title}, section {_neighbour(sec.section_id)}"
        return sec.loc

    def answer(self, req: AdpRequest) -> dict[str, Any]:
        if "slow" in self.defects:
            time.sleep(0.3)
        text = " ".join(x for x in (req.query, req.device_type) if x)
        checks = set(req.checks or ["eligibility", "exclusions", "funding", "cep"])
        device, category = find_device(text)
        if req.category:
            category = req.category
        if device is None and req.device_type:
            device = req.device_type.strip()
        notes: dict[str, str] = {}
        cited: list[tuple[Section, str]] = []  # (section, loc)

        def cite(sec: Section | None, loc: str | None = None) -> None:
            if sec is not None and all(
                s.chunk_id != sec.chunk_id or where != (loc or sec.loc) for s, where in cited
            ):
                cited.append((sec, loc or sec.loc))

        specific = [t for t in terms(text) if t not in GENERIC_TERMS]
        if category is None and specific:
            hits = self.m.search(" ".join(specific), k=3)
            if hits and hits[0].category != "core_manual":
                category = hits[0].category
                notes["category"] = f"{category}, from the closest manual section ({hits[0].loc})"
        elif device:
            notes["category"] = f"{category} (device read as '{device}')"

        # social assistance, income, household
        sa_key, sa_name = None, None
        if req.social_assistance and req.social_assistance != "none":
            sa_key = req.social_assistance
            sa_name = {k: n for k, _, n in _SA}.get(sa_key, sa_key)
        elif req.social_assistance is None and req.query:
            for key, pat, name in _SA:
                if re.search(pat, req.query, re.I) and not (
                    key == "ontario_works" and "ow" not in req.query.lower().split()
                ):
                    sa_key, sa_name = key, name
                    break
        if sa_name:
            notes["social_assistance"] = f"client receives {sa_name}"
        income, income_words = (
            (req.patient_income, "patient_income")
            if req.patient_income is not None
            else find_income(req.query or "")
        )
        household, stated = find_household(req.query or "")
        if income is not None:
            notes["income"] = f"${income:,.0f} a year (from {income_words!r})"
            notes["household"] = household + (
                "" if stated else " (not stated; the single threshold applies)"
            )

        concerns = [c for c in CONCERNS if req.query and re.search(c[2], req.query, re.I)]
        policy_q = bool(req.query and _POLICY_Q.search(req.query))
        missing_topic = self._unmentioned_topic(req.query or "")
        if missing_topic:
            notes["not_in_manuals"] = (
                f"'{missing_topic}' is not mentioned in any ADP manual section here"
            )

        out: dict[str, Any] = {
            "provenance": [],
            "confidence": 0.5,
            "summary": "",
            "interpretation_notes": notes,
            "context": "",
            "eligibility": None,
            "exclusions": [],
            "policy_rules": [],
            "funding": None,
            "cep": None,
            "lead": "device",
            "citations": [],
            "conflicts": [],
        }
        if category is None:
            out["lead"] = "unknown_device"
            out["summary"] = (
                "No ADP device or category recognised in the question; name the device "
                "(e.g. walker, hearing aid, CPAP) or pass device.category."
            )
            return out

        out["provenance"] = ["sql"]
        label = device or CATEGORY_WORDS.get(category, category)
        # device description sections
        for sec in self.m.search(f"{label} {text}", category, k=2):
            cite(sec)

        # ---- eligibility
        not_eligible = [c for c in concerns if c[0] in ("transport", "single_purpose")]
        basic: bool | None = None
        if category == "mobility":
            if not_eligible:
                basic = False
            elif req.daily or (req.query and re.search(r"\bdaily\b|every day", req.query, re.I)):
                basic = True
        elig_secs = [
            s
            for s in self.m.by_category[category]
            if re.search(r"basic .*requirement|eligib", s.heading, re.I)
        ]
        for sec in elig_secs[:1]:
            cite(sec)
        if "eligibility" in checks:
            other: dict[str, Any] = {"category": category, "device": label}
            if req.location:
                other["location"] = req.location
            if req.independent_transfer is not None:
                other["independent_transfer"] = req.independent_transfer
            if concerns:
                other["concerns"] = [c[0] for c in concerns]
            out["eligibility"] = {
                "basic_mobility": basic,
                "ontario_resident": True
                if req.query and re.search(r"ontario resident|lives in ontario", req.query, re.I)
                else None,
                "valid_prescription": None,
                "other_criteria": other,
            }

        # ---- exclusions
        exclusion_lines: list[str] = []
        wanted = concerns or [c for c in CONCERNS if c[0] in ("batteries", "repairs")]
        for key, what, _, text_pat in wanted:
            refusing = self._refusing_section(category, text_pat)
            if refusing is None:
                continue
            exclusion_lines.append(f"{what}: ADP does not fund this ({refusing.loc}).")
            if key in {c[0] for c in concerns} or "exclusions" in checks:
                cite(refusing)
        if "exclusions" in checks:
            out["exclusions"] = exclusion_lines

        # ---- funding
        funding, used, funding_words = self._funding(category, label, sa_key is not None)
        rule_secs = [s for s in used if s.rules]
        for sec in used:
            cite(sec, self._rule_loc(sec) if sec in rule_secs else None)
        repair_sec = self._refusing_section(category, r"repair")
        if funding is not None:
            funding["repair_coverage"] = (
                f"ADP pays nothing toward repairs or maintenance ({repair_sec.loc})"
                if repair_sec
                else None
            )
        cep: dict[str, Any] | None = None
        if income is not None:
            threshold = CEP_THRESHOLDS[household]
            eligible = income <= threshold
            standard = 25.0
            if (
                funding is not None
                and funding.get("client_share_percent") is not None
                and sa_key is None
            ):
                standard = float(funding["client_share_percent"])
            cep = {
                "income_threshold": threshold,
                "eligible": eligible,
                "client_share": 0.0 if eligible else standard,
            }
            if funding is not None and eligible and sa_key is None:
                funding["client_share_percent"] = 0.0
                funding["client_share_paid_by"] = None
        if "funding" in checks:
            out["funding"] = funding
        if "cep" in checks:
            out["cep"] = cep

        # ---- policy rules
        if policy_q:
            for sec, sentence in self._policy_rules(text, category):
                out["policy_rules"].append(f"{sentence} ({sec.loc})")
                cite(sec)

        # ---- lead and summary
        if not_eligible:
            out["lead"] = "not_eligible"
        elif policy_q and out["policy_rules"]:
            out["lead"] = "policy_rules"
        out["summary"] = self._summary(
            out,
            label,
            category,
            funding_words,
            sa_name,
            income,
            household,
            not_eligible,
            cited,
            missing_topic,
        )
        context = [f"{s.loc}: {s.body()[:400]}" for s, _ in cited[:4]]
        out["context"] = "\n".join(context)
        cites = [citation(self._passage(s), loc) for s, loc in cited]
        if cep is not None:
            cites.append(
                {
                    "source": CEP_SOURCE,
                    "loc": "Dr. OFF MCP Tools Specification, adp.get step 7 (CEP income thresholds)",
                    "chunk_id": CEP_ID,
                    "page": None,
                }
            )
        out["citations"] = cites
        base = 0.9 if funding is not None and rule_secs else 0.75
        out["confidence"] = round(min(0.99, base + 0.03 * min(3, max(0, len(cited) - 1))), 2)
        return out

    def _passage(self, sec: Section) -> Passage:
        return Passage(sec.chunk_id, sec.body(), f"ADP {sec.title}", sec.section_id, sec.page)

    def _refusing_section(self, category: str, text_pat: str) -> Section | None:
        """The category's section with a not-funded sentence about the thing."""
        for sec in self.m.by_category[category]:
            body = f"{sec.heading}. {sec.body()}"
            for sentence in re.split(r"(?<=[.;:])\s+", body):
                if _NOT_FUNDED.search(sentence) and re.search(text_pat, sentence, re.I):
                    return sec
        return None

    def _funding(
        self, category: str, label: str, on_assistance: bool
    ) -> tuple[dict[str, Any] | None, list[Section], str]:
        secs = self.m.by_category[category]
        device_words = [w for w in terms(label) if len(w) > 3]
        used: list[Section] = []
        funding: dict[str, Any] = {
            "client_share_percent": None,
            "adp_contribution": None,
            "max_contribution": None,
            "repair_coverage": None,
            "client_share_paid_by": None,
        }
        if category == "grants":
            best = self.m.search(label, "grants", k=6)
            for sec in best:
                amounts = [
                    float(a.replace(",", ""))
                    for a in re.findall(r"\$(\d[\d,]*\.\d{2})", sec.body())
                ]
                if amounts:
                    funding["max_contribution"] = max(amounts)
                    used.append(sec)
                    listed = ", ".join(f"${a:,.2f}" for a in dict.fromkeys(amounts))
                    return (
                        funding,
                        used,
                        f"ADP gives a fixed grant; amounts listed in section {sec.section_id}: {listed}",
                    )
            return None, used, ""

        def rule_share(*patterns: str) -> tuple[float, Section] | None:
            found: list[tuple[int, int, float, Section]] = []
            for sec in secs:
                if sec.section_id.startswith("710"):
                    continue  # the social-assistance co-payment section
                for r in sec.rules:
                    for pattern in patterns:
                        m = re.search(pattern, r["details"], re.I)
                        if m:
                            low = r["details"].lower()
                            specific = sum(1 for w in device_words if w[:5] in low)
                            found.append((specific, len(found), float(m.group(1)), sec))
            if not found:
                return None
            found.sort(key=lambda f: (-f[0], f[1]))
            return found[0][2], found[0][3]

        adp = rule_share(r"(?:will pay|pays) (\d+) percent")
        client = rule_share(
            r"client portion \((\d+) percent", r"collects from the applicant,? (\d+) percent"
        )
        if adp is not None:
            funding["adp_contribution"] = adp[0]
            used.append(adp[1])
        if client is not None:
            funding["client_share_percent"] = client[0]
            used.append(client[1])
        if adp is None or client is None:
            default = self.m.policies("305.01")
            if default is not None and re.search(r"75%", default.body()):
                if adp is None:
                    funding["adp_contribution"] = 75.0
                if client is None:
                    funding["client_share_percent"] = 100.0 - float(
                        funding["adp_contribution"] or 75.0
                    )
                used.append(default)
        if funding["client_share_percent"]:
            funding["client_share_paid_by"] = "client"
        usual = (
            f"ADP pays {funding['adp_contribution']:g}% and the client {funding['client_share_percent']:g}%"
            if funding["adp_contribution"] is not None
            and funding["client_share_percent"] is not None
            else ""
        )
        if usual and adp is None and client is None:
            usual += " (the program-wide default: this manual sets no share of its own)"
        if not on_assistance:
            return funding, used, usual
        # Social-assistance recipients: the program funds 100% (Policies and Procedures
        # Manual 310.00) and the category's co-payment section says who pays the share.
        assisted: list[Section] = []
        core = self.m.policies("310.00")
        if core is not None:
            assisted.append(core)
        sa_sec = next((s for s in secs if s.section_id == "710" and s.rules), None)
        if sa_sec is not None:
            assisted.append(sa_sec)
        funding["adp_contribution"] = 100.0
        funding["client_share_percent"] = 0.0
        funding["client_share_paid_by"] = "social_assistance"
        words = "the program funds 100% and the client pays no co-payment"
        if usual:
            words += f" (for other clients {usual.replace('ADP pays', 'ADP would pay')})"
        return funding, assisted + used, words

    def _policy_rules(self, text: str, category: str | None) -> list[tuple[Section, str]]:
        out: list[tuple[Section, str]] = []
        q = terms(text)
        scored = []
        for sec in self.m.by_category.get(category or "", []) or self.m.all:
            for r in sec.rules:
                overlap = len(set(q) & set(terms(r["details"])))
                if overlap:
                    scored.append((overlap, sec, r["details"]))
        scored.sort(key=lambda x: -x[0])
        top = scored[0][0] if scored else 0
        for overlap, sec, details in scored:
            sentence = details.split(" • ")[0].rstrip(".")
            if overlap < top or len(sentence.split()) < 6 or sentence.upper().startswith("NOTE"):
                continue  # weaker matches, page-header fragments and cross-references
            out.append((sec, sentence))
            if len(out) == 3:
                break
        return out

    def _unmentioned_topic(self, query: str) -> str | None:
        """What 'is there a X' asks about, when no manual section mentions X."""
        m = re.search(r"\bis there (?:an? |any )?([a-z][\w\-]*(?: [a-z][\w\-]*)?)", query, re.I)
        if not m:
            return None
        topic = m.group(1).lower()
        topic = re.sub(r"\s+(for|to|in|on|of|with)$", "", topic)
        first = topic.split()[0]
        if first in {"funding", "coverage", "a", "an"} or self.m.mentions(topic):
            return None
        return topic

    def _summary(
        self,
        out: dict[str, Any],
        label: str,
        category: str,
        funding_words: str,
        sa_name: str | None,
        income: float | None,
        household: str,
        not_eligible: list[tuple[str, str, str, str]],
        cited: list[tuple[Section, str]],
        missing_topic: str | None,
    ) -> str:
        if out["lead"] == "not_eligible":
            sec = self._refusing_section(category, not_eligible[0][3])
            where = f" ({sec.loc})" if sec else ""
            use = not_eligible[0][1][0].lower() + not_eligible[0][1][1:]
            return (
                f"Not fundable as asked: ADP does not pay for a {label} meant for "
                f"{use.removeprefix('use ')}{where}; funding needs a basic daily mobility need."
                if category == "mobility"
                else f"Not fundable as asked: ADP does not pay for a {label} meant for "
                f"{use.removeprefix('use ')}{where}."
            )
        if out["lead"] == "policy_rules":
            return out["policy_rules"][0]
        bits = [f"{label[0].upper()}{label[1:]} ({CATEGORY_WORDS.get(category, category)})"]
        if out["funding"] is None and not funding_words:
            bits.append(
                "the manual sections in this extract give no funding share or amount for it"
            )
        if funding_words and sa_name:
            bits.append(f"for a client on {sa_name}, {funding_words}")
        elif funding_words:
            bits.append(funding_words)
        cep = out.get("cep")
        if cep is not None and income is not None:
            if cep["eligible"]:
                bits.append(
                    f"with an income of ${income:,.0f} ({household}), at or under the "
                    f"${cep['income_threshold']:,.0f} threshold, the client's share drops to 0%"
                )
            else:
                bits.append(
                    f"an income of ${income:,.0f} ({household}) is above the "
                    f"${cep['income_threshold']:,.0f} threshold, so the usual share stays"
                )
        refused = [line.split(":")[0].lower() for line in out["exclusions"]][:2]
        if refused and any(
            c in (out["eligibility"] or {}).get("other_criteria", {}).get("concerns", [])
            for c in ("batteries", "repairs")
        ):
            bits.append("not funded: " + " and ".join(refused))
        if missing_topic:
            bits.append(
                f"the manuals here say nothing about a {missing_topic}: they describe only the "
                "standard assessment and application steps"
            )
        return "; ".join(bits) + "."
