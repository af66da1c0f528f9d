"""Assistive Devices Program (ADP): funding rules, exclusions, manual sections.

Inputs are the machine extraction of the ADP policy and procedures manuals
(`adp_extraction.json`, one record per manual section) and two rule tables
(`adp_funding_rule.csv`, `adp_exclusion.csv`) whose `details` cells quote the manuals.
adp.get answers "what share does ADP pay / is X excluded / where does the manual say so",
so we re-derive those facts with our own patterns from the manual text and keep the
section references and page numbers:

- funding: sentences stating a client portion or an ADP share (percent), grant amounts ($),
  social-assistance funding (OW/ODSP/ACSD), and "no funding for repairs/batteries" become rows
  with client_share_percent / adp_share_percent / max_contribution / covered. Items the
  extraction marks `llm_extracted` are not used: they are counted (and how many state a
  percentage that the section text confirms) in MANIFEST.json.
- exclusions: a fixed vocabulary (batteries, repairs/maintenance, education/work/recreation
  only, alternative transport / car substitute, backup/spare/duplicate, cosmetic, therapy or
  training only, bought before approval, unregistered or out-of-province supplier, warranties
  and fees, used devices, other payer) matched in not-funded contexts.
- descriptive rules: rows of the rule table that say who does what (equipment pool, leases,
  suppliers, repairs, service agreements, social-assistance co-payment), one own-words sentence
  per topic (`adp_descriptive`).
- sections: heading, part, page, manual title, topics, amounts found, and a summary made by
  `textrules.summarise` (no 8-word run of the manual survives).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .adp_descriptive import descriptive_rules
from .dates import MONTH
from .textrules import guarding, keep_label, norm_words, summarise

CATEGORIES: dict[str, str] = {
    "mobility": "Mobility devices",
    "comm_aids": "Communication aids",
    "hearing_devices": "Hearing devices",
    "visual_aids": "Visual aids",
    "respiratory": "Respiratory equipment",
    "insulin_pump": "Insulin pumps and supplies",
    "glucose_monitoring": "Real-time continuous glucose monitoring",
    "prosthesis": "Limb and ocular prostheses",
    "maxillofacial": "Maxillofacial prostheses",
    "grants": "ADP grants",
    "core_manual": "ADP general policies (core manual)",
}

# exclusion key -> (pattern, our own description)
EXCLUSIONS: dict[str, tuple[re.Pattern[str], str]] = {
    "batteries": (
        re.compile(r"batter(?:y|ies)", re.I),
        "Replacement batteries are the client's cost; ADP does not pay for them.",
    ),
    "repairs_maintenance": (
        re.compile(r"\brepairs?\b|maintenance", re.I),
        "Repairs and upkeep of a funded device are not paid by ADP.",
    ),
    "education_work_recreation_only": (
        re.compile(
            r"(?:school|education|work|employment|sports?|recreation|leisure|social activit)[^.;]{0,60}\b(?:only|purpose)|one purpose such as|solely for (?:school|work|recreation|sport)",
            re.I,
        ),
        "A device needed only for school, a job, sport or leisure does not qualify.",
    ),
    "alternative_transport": (
        re.compile(
            r"alternat\w* (?:means of )?transport|car substitute|substitute for a car|outdoor use only|intermittent(?:ly)? use",
            re.I,
        ),
        "Devices meant to replace a car or used only now and then (e.g. outdoors) are not funded.",
    ),
    "backup_spare_duplicate": (
        re.compile(r"back-?up|spare|duplicate", re.I),
        "A second, spare or back-up device is not funded.",
    ),
    "cosmetic": (
        re.compile(r"cosmetic", re.I),
        "Items chosen for appearance rather than function are not funded.",
    ),
    "therapy_training_only": (
        re.compile(
            r"(?:training|exercise|therapy|therapeutic|treatment)\s+(?:purposes?\s+)?only|used for (?:treatment|therapy|exercise|training)|for treatment purposes",
            re.I,
        ),
        "Devices used only for therapy, exercise or training are outside ADP.",
    ),
    "bought_before_approval": (
        re.compile(
            r"(?:purchased|leased|bought|authorized)[^.;]{0,40}before[^.;]{0,40}(?:authori[sz]ed|approved)",
            re.I,
        ),
        "Devices bought or leased before ADP approval cannot be reimbursed.",
    ),
    "unregistered_supplier": (
        re.compile(r"not registered|out-of-province|outside (?:of )?ontario", re.I),
        "Devices from a supplier not registered with ADP, or outside Ontario, are not funded.",
    ),
    "warranty_fees": (
        re.compile(r"extended warrant|service plans?|handling fees?", re.I),
        "Extended warranties, service plans and handling fees are not covered.",
    ),
    "used_devices": (
        re.compile(r"used devices|previously used|rebuilt", re.I),
        "Used or rebuilt devices are not eligible for ADP funding.",
    ),
    "other_payer": (
        re.compile(
            r"WSIB|Workplace Safety|Veterans Affairs|National Defence|Non-Insured Health Benefits|Correctional",
            re.I,
        ),
        "Not funded when another payer (e.g. WSIB, Veterans Affairs, federal programs) is responsible.",
    ),
}
CSV_EXCLUSION_KEYS = {
    "education/work/recreation only": "education_work_recreation_only",
    "training/exercise/therapy only": "therapy_training_only",
    "alternative transport / intermittent use": "alternative_transport",
    "backup/spare/duplicate": "backup_spare_duplicate",
    "general": "general_not_funded",
}
GENERAL_NOT_FUNDED = "The section lists items that the ADP does not fund."
_NEG = re.compile(
    r"not (?:be )?(?:funded|covered|eligible)|does not (?:provide|fund|cover)|will not (?:fund|pay|provide)|"
    r"no funding|not provide (?:any )?(?:adp )?(?:funding|coverage)|ineligible|non-eligible|excluded|exclusion",
    re.I,
)
_NOT_FUNDED_TITLE = re.compile(
    r"not funded|ineligible|non-eligible|repairs/batteries|exclusion", re.I
)
_FOOTER = re.compile(
    r"(?:[A-Z][A-Za-z-]*\s)+(?:and\s(?:[A-Z][A-Za-z-]*\s)+)?(?:Policy and Administration Manual|"
    r"Policies and Procedures Manual for the Assistive Devices Program)\s+(?:\d+\s+)?"
    rf"{MONTH}\s+(?:\d{{1,2}},\s+)?\d{{4}}(?:\s+\d+\b)?"
)
# a running footer names the manual the page belongs to
_MANUAL = re.compile(
    r"((?:[A-Z][A-Za-z-]*[ \t]+)+(?:and\s+(?:[A-Z][A-Za-z-]*[ \t]+)+)?Policy and Administration Manual|"
    r"Policies and Procedures Manual for the Assistive Devices Program)\s+(?:\d+\s*)?"
    rf"{MONTH}\s+(?:\d{{1,2}},\s+)?\d{{4}}"
)
_DOTS = re.compile(r"\.{4,}\s*\d*")
_PAGE = re.compile(r"---\s*Page\s+\d+\s*---")
_SOCIAL = re.compile(
    r"Ontario Works|\bODSP\b|Ontario Disability Support|\bACSD\b|social assistance", re.I
)
_AMOUNT = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d{2})?)")
_HEAD_STOP = {
    "the",
    "of",
    "for",
    "and",
    "or",
    "to",
    "a",
    "an",
    "by",
    "in",
    "with",
    "on",
    "real-time",
}
_SENTENCE_START = re.compile(
    r"^(?:The|If|In|An|A|For|To|When|Where|Unless|This|These|All|Each|Any|Clients?|Applicants?)\b"
)


def clean_text(text: str) -> str:
    """Drop page markers and running footers, flatten bullets and whitespace."""
    t = _PAGE.sub(" ", text or "")
    t = _FOOTER.sub(" ", t)
    t = _DOTS.sub(" ", t)
    t = re.sub(r"\s*•\s*", " • ", t)
    return re.sub(r"\s+", " ", t).strip()


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.;])\s+|\s•\s", text)
    return [p.strip(" •") for p in parts if p.strip(" •")]


def heading(title: str, raw: str) -> str:
    """A real heading is kept; a sentence fragment is reduced to a short label."""
    t = re.sub(r"\.{3,}.*$", "", title or "").strip()
    t = re.sub(r"^(?:Added|Revised|Updated)\s*(?:\d+(?:\.\d+)*)?:\s*", "", t).strip()
    first_line = (raw or "").strip().split("\n", 1)[0].strip()
    words = t.split()
    looks_heading = 0 < len(words) <= 9 and not _SENTENCE_START.match(t) and not t.endswith(",")
    if (
        looks_heading
        and words[-1].lower() in _HEAD_STOP | {"by", "to"}
        and first_line
        and len(first_line.split()) <= 5
    ):
        t = f"{t} {first_line}".strip()
    if looks_heading:
        return keep_label(t, max_words=12)
    return summarise(f"{t} {first_line}", max_words=8)


def _kind(x: dict[str, Any], raw: str) -> str:
    """'toc' for table-of-contents / amendment-log fragments, else 'policy'."""
    title = x.get("title") or ""
    if (
        _DOTS.search(title)
        or _DOTS.search(raw)
        or re.search(r"Table of Contents|Section Change Date|^\d+(?:\.\d+)*:", f"{title} {raw}")
    ):
        return "toc"
    if re.search(rf"\b{MONTH}\s+\d{{4}}\b", title) and (x.get("page_num") or 99) <= 5:
        return "toc"
    return "policy"


def _pct(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"(\d{1,3})\s*(?:percent|%)", text, re.I)]


@dataclass
class AdpResult:
    funding: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    sections: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)
    descriptive: list[dict[str, Any]] = field(default_factory=list)


FUNDING_COLUMNS = [
    "rule_id",
    "adp_doc",
    "device_category",
    "section_ref",
    "policy_uid",
    "page_num",
    "scenario",
    "client_share_percent",
    "adp_share_percent",
    "max_contribution",
    "covered",
    "summary",
    "evidence",
]
EXCLUSION_COLUMNS = [
    "exclusion_id",
    "adp_doc",
    "device_category",
    "section_ref",
    "policy_uid",
    "page_num",
    "exclusion",
    "description",
    "evidence",
]


def _funding_from_sentence(s: str, social_context: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    low = s.lower()
    scenario = "lease" if re.search(r"\blease", low) else "purchase"
    social = bool(_SOCIAL.search(s)) or social_context
    if m := re.search(
        r"client(?:'s|’s)?\s+portion\s*(?:\(|is\s+|must be\s+)?(?:at least\s+)?(\d{1,3})\s*(?:percent|%)",
        low,
    ):
        c = int(m.group(1))
        out.append({"scenario": scenario, "client": c, "adp": 100 - c})
    elif m := re.search(r"collects from the applicant,?\s*(\d{1,3})\s*percent", low):
        c = int(m.group(1))
        out.append({"scenario": scenario, "client": c, "adp": 100 - c, "vendor_price": True})
    elif m := re.search(
        r"(?:adp|program|ministry)\s+(?:will\s+)?(?:only\s+)?pays?\s+(?:up to\s+)?(\d{1,3})\s*(?:percent|%)",
        low,
    ):
        a = int(m.group(1))
        item = re.search(
            r"\bfor ([a-z][\w &/-]{3,60}?),?\s+(?:the\s+)?(?:adp|program)\s+(?:will\s+)?pays?", low
        )
        out.append(
            {
                # 100% funding in a section about OW/ODSP/ACSD recipients is their rule, item or not.
                "scenario": "social_assistance" if social and a == 100 else scenario,
                "client": 100 - a,
                "adp": a,
                "item": item.group(1) if item else "",
                "vendor_price": "vendor" in low,
                "max": "maximum contribution" in low or "maximum amount" in low,
            }
        )
    elif social and (m := re.match(r"(?:[a-d]\.\s*)?(100)%\s+(?:of|up to)", low)):
        out.append(
            {
                "scenario": "social_assistance",
                "client": 0,
                "adp": 100,
                "max": "maximum contribution" in low,
            }
        )
    if re.search(
        r"(?:not provide|no)\s+(?:any\s+)?(?:adp\s+)?(?:funding|coverage)(?:\s+assistance)?\s+(?:towards|for)\s+the\s+cost\s+of\s+(?:the\s+)?repairs",
        low,
    ):
        out.append({"scenario": "repair", "client": 100, "adp": 0, "covered": False})
        if "batter" in low:
            out.append({"scenario": "batteries", "client": 100, "adp": 0, "covered": False})
    amounts = _AMOUNT.findall(s)
    if amounts and re.search(r"grant", low):
        labels = re.findall(r"([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)\s*\(each\)", s)
        for i, amt in enumerate(amounts):
            out.append(
                {
                    "scenario": "grant_social_assistance" if social else "grant",
                    "max_value": float(amt.replace(",", "")),
                    "item": labels[i] if i < len(labels) and len(labels) == len(amounts) else "",
                }
            )
    return out


def _summary(cat: str, r: dict[str, Any]) -> str:
    label = CATEGORIES.get(cat, cat)
    sc = r["scenario"]
    if sc in ("repair", "batteries"):
        what = "Repairs and maintenance" if sc == "repair" else "Batteries"
        return f"{label}: {what} are not paid for by ADP; the client bears the full cost."
    if sc.startswith("grant"):
        who = "Clients on OW/ODSP/ACSD" if sc.endswith("social_assistance") else "Eligible clients"
        item = f" per {r['item'].lower()}" if r.get("item") else ""
        return f"{label}: {who} receive a grant of ${r['max_value']:.2f}{item}."
    if sc == "social_assistance":
        cap = " (up to the approved maximum)" if r.get("max") else ""
        what = f" of {r['item']}" if r.get("item") else ""
        return (
            f"{label}: for clients receiving Ontario Works, ODSP or ACSD, ADP covers "
            f"{r['adp']}%{what}{cap}, so the client share is {r['client']}%."
        )
    base = "the vendor's price" if r.get("vendor_price") else "the ADP approved price"
    cap = "; the ADP share is capped at an approved maximum amount" if r.get("max") else ""
    verb = "leased" if sc == "lease" else "purchased"
    what = r["item"] if r.get("item") else f"{verb} devices"
    return (
        f"{label}: for {what} ADP pays {r['adp']}% of {base} and the client pays "
        f"{r['client']}%{cap}."
    )


def load(extraction: Path, funding_csv: Path | None, exclusion_csv: Path | None) -> AdpResult:
    """Load all ADP inputs; rewording avoids 8-word runs of any of their texts."""
    data = json.loads(extraction.read_text(encoding="utf-8"))
    texts: list[str] = []
    for x in data.get("sections", []):
        title, raw = x.get("title") or "", x.get("raw_text") or ""
        texts += [title, raw, f"{title} {raw}", clean_text(f"{title} {raw}")]
        texts += [f.get("details") or "" for f in x.get("funding") or []]
        texts += [e.get("phrase") or "" for e in x.get("exclusions") or []]
    for path in (funding_csv, exclusion_csv):
        if path and path.exists():
            with path.open(encoding="utf-8", newline="") as fh:
                for row in csv.DictReader(fh):
                    texts += [v for v in row.values() if v]
    with guarding(texts):
        return _load(data, funding_csv, exclusion_csv)


def _load(data: dict[str, Any], funding_csv: Path | None, exclusion_csv: Path | None) -> AdpResult:
    raw_sections = data.get("sections", [])
    stats: Counter[str] = Counter()

    # ---- sections -------------------------------------------------------------------
    seen: Counter[str] = Counter()
    sections: list[dict[str, Any]] = []
    manual_by_doc: dict[str, str] = {}
    first_manual: dict[str, str] = {}
    by_uid: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for x in raw_sections:
        doc = x.get("adp_doc", "")
        sid = str(x.get("section_id") or "")
        uid = x.get("policy_uid") or f"adp:{doc}:{sid}"
        seen[uid] += 1
        sec_id = uid if seen[uid] == 1 else f"{uid}-{seen[uid]}"
        raw = x.get("raw_text") or ""
        for m in _MANUAL.finditer(raw):
            name = re.sub(r"\s+", " ", m.group(1)).strip()
            name = re.sub(r"^(?:Refer to|See|Introduction to)\s+(?:the\s+)?", "", name)
            manual_by_doc[doc] = name
            first_manual.setdefault(doc, name)
        text = clean_text(f"{x.get('title', '')} {raw}")
        amounts = sorted(
            {a for a in _AMOUNT.findall(text)}, key=lambda a: float(a.replace(",", ""))
        )
        sec = {
            "id": sec_id,
            "policy_uid": uid,
            "adp_doc": doc,
            "device_category": doc,
            "manual": manual_by_doc.get(doc, ""),
            "part": str(x.get("part") or ""),
            "section_ref": sid,
            "heading": heading(x.get("title", ""), raw),
            "page_num": x.get("page_num"),
            "topics": sorted(set(x.get("topics") or [])),
            "percentages": sorted(set(_pct(text))),
            "amounts": [f"${a}" for a in amounts],
            "exclusions": [],
            "kind": _kind(x, raw),
            "summary": summarise(text, max_words=35, first_clause=False)
            if len(norm_words(text)) > 3
            else "",
            "_text": text,
        }
        sections.append(sec)
        by_uid[(doc, sid)].append(sec)

    # ---- funding ----------------------------------------------------------------------
    funding: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add_rule(
        doc: str, sid: str, r: dict[str, Any], evidence: str, sec: dict[str, Any] | None = None
    ) -> None:
        secs = [sec] if sec else (by_uid.get((doc, sid)) or [])
        page = secs[0]["page_num"] if secs else None
        uid = secs[0]["id"] if secs else f"adp:{doc}:{sid}"
        key = (
            doc,
            sid,
            r["scenario"],
            r.get("client"),
            r.get("adp"),
            r.get("max_value"),
            r.get("item", ""),
        )
        if key in funding:
            if evidence not in funding[key]["evidence"].split(";"):
                funding[key]["evidence"] += f";{evidence}"
            return
        covered = r.get("covered")
        funding[key] = {
            "adp_doc": doc,
            "device_category": "all" if doc == "core_manual" else doc,
            "section_ref": sid,
            "policy_uid": uid,
            "page_num": page,
            "scenario": r["scenario"],
            "client_share_percent": r.get("client"),
            "adp_share_percent": r.get("adp"),
            "max_contribution": r.get("max_value"),
            "covered": (covered if covered is not None else True),
            "summary": _summary(doc, r),
            "evidence": evidence,
        }

    social_majors = {
        (s["adp_doc"], s["manual"], s["section_ref"].split(".")[0])
        for s in sections
        if _SOCIAL.search(s["_text"])
    }
    for sec in sections:
        major = (sec["adp_doc"], sec["manual"], sec["section_ref"].split(".")[0])
        social_ctx = bool(_SOCIAL.search(sec["_text"])) or major in social_majors
        for s in sentences(sec["_text"]):
            for r in _funding_from_sentence(s, social_ctx):
                add_rule(sec["adp_doc"], sec["section_ref"], r, "manual_text", sec)
    for x in raw_sections:
        for f in x.get("funding") or []:
            if f.get("llm_extracted"):
                stats["llm_funding_items"] += 1
                p = str(f.get("client_share_percent") or "").rstrip("%")
                if p.replace(".", "").isdigit():
                    t = f"{x.get('title', '')} {x.get('raw_text', '')}"
                    if int(float(p)) in _pct(t):
                        stats["llm_funding_items_percent_in_text"] += 1
                continue
            stats["plain_funding_items"] += 1
            for s in sentences(clean_text(f.get("details") or "")):
                for r in _funding_from_sentence(s, bool(_SOCIAL.search(x.get("raw_text") or ""))):
                    add_rule(
                        x.get("adp_doc", ""), str(x.get("section_id") or ""), r, "extraction_rule"
                    )
    rows: list[dict[str, str]] = []
    if funding_csv and funding_csv.exists():
        with funding_csv.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        # A section whose rules mention OW/ODSP/ACSD is about those clients (e.g. comm_aids 710).
        social_sections = {
            (row.get("adp_doc", ""), row.get("section_ref", ""))
            for row in rows
            if _SOCIAL.search(row.get("details") or "")
        }
        if rows:
            for row in rows:
                stats["csv_funding_rows"] += 1
                doc, sid = row.get("adp_doc", ""), row.get("section_ref", "")
                secs = by_uid.get((doc, sid)) or []
                ctx = any(_SOCIAL.search(s["_text"]) for s in secs) or (doc, sid) in social_sections
                for s in sentences(clean_text(row.get("details") or "")):
                    for r in _funding_from_sentence(s, ctx):
                        add_rule(doc, sid, r, "rules_csv")

    # ---- descriptive rules: rows that say who does what, not what share is paid ----------
    descriptive, stats["csv_rows_without_a_topic"] = descriptive_rules(rows, by_uid)

    # ---- exclusions -------------------------------------------------------------------
    excl: dict[tuple[str, str, str], dict[str, Any]] = {}

    def add_excl(doc: str, sid: str, key: str, evidence: str) -> None:
        secs = by_uid.get((doc, sid)) or []
        k = (doc, sid, key)
        if k in excl:
            if evidence not in excl[k]["evidence"].split(";"):
                excl[k]["evidence"] += f";{evidence}"
            return
        excl[k] = {
            "adp_doc": doc,
            "device_category": "all" if doc == "core_manual" else doc,
            "section_ref": sid,
            "policy_uid": secs[0]["policy_uid"] if secs else f"adp:{doc}:{sid}",
            "page_num": secs[0]["page_num"] if secs else None,
            "exclusion": key,
            "description": EXCLUSIONS[key][1] if key in EXCLUSIONS else GENERAL_NOT_FUNDED,
            "evidence": evidence,
        }
        for s in secs:
            if key not in s["exclusions"]:
                s["exclusions"].append(key)

    for sec in sections:
        title_neg = bool(_NOT_FUNDED_TITLE.search(sec["heading"]))
        for s in sentences(sec["_text"]):
            if not (title_neg or _NEG.search(s)):
                continue
            for key, (rx, _) in EXCLUSIONS.items():
                if rx.search(s):
                    add_excl(sec["adp_doc"], sec["section_ref"], key, "manual_text")
    if exclusion_csv and exclusion_csv.exists():
        with exclusion_csv.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                stats["csv_exclusion_rows"] += 1
                csv_key = CSV_EXCLUSION_KEYS.get((row.get("phrase") or "").strip())
                if csv_key is None:
                    stats["csv_exclusion_rows_unmapped"] += 1
                    continue
                add_excl(row.get("adp_doc", ""), row.get("section_ref", ""), csv_key, "rules_csv")
    stats["llm_exclusion_items"] = sum(
        1 for x in raw_sections for e in x.get("exclusions") or [] if e.get("llm_extracted")
    )

    def sid_key(s: str) -> tuple[Any, ...]:
        return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.-]", s or "0"))

    doc_order = {d: i for i, d in enumerate(CATEGORIES)}
    f_rows = sorted(
        funding.values(),
        key=lambda r: (
            doc_order.get(r["adp_doc"], 99),
            sid_key(r["section_ref"]),
            r["scenario"],
            r["max_contribution"] or 0,
        ),
    )
    for i, r in enumerate(f_rows, 1):
        r["rule_id"] = f"F{i:03d}"
    e_rows = sorted(
        excl.values(),
        key=lambda r: (doc_order.get(r["adp_doc"], 99), sid_key(r["section_ref"]), r["exclusion"]),
    )
    for i, r in enumerate(e_rows, 1):
        r["exclusion_id"] = f"X{i:03d}"
    d_rows = sorted(
        descriptive,
        key=lambda r: (doc_order.get(r["adp_doc"], 99), sid_key(r["section_ref"]), r["topic"]),
    )
    for i, r in enumerate(d_rows, 1):
        r["rule_id"] = f"D{i:03d}"
    for sec in sections:
        sec.pop("_text", None)
        if not sec["manual"]:
            sec["manual"] = first_manual.get(sec["adp_doc"], "")
    meta = {
        "extraction_date": data.get("extraction_date", ""),
        "documents_processed": data.get("documents_processed"),
        "sections_in": len(raw_sections),
        "manuals": {
            d: sorted({x["manual"] for x in sections if x["adp_doc"] == d and x["manual"]})
            for d in CATEGORIES
        },
        **dict(stats),
    }
    return AdpResult(f_rows, e_rows, sections, meta, d_rows)
