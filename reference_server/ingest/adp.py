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
  percentage that the section text confirms) in MANIFEST.json. Sentence patterns and wording:
  `adp_funding`.
- exclusions: a fixed vocabulary (batteries, repairs/maintenance, education/work/recreation
  only, alternative transport / car substitute, backup/spare/duplicate, cosmetic, therapy or
  training only, bought before approval, unregistered or out-of-province supplier, warranties
  and fees, used devices, other payer) matched in not-funded contexts (`adp_exclusions`).
- descriptive rules: rows of the rule table that say who does what (equipment pool, leases,
  suppliers, repairs, service agreements, social-assistance co-payment), one own-words sentence
  per topic (`adp_descriptive`).
- sections: heading, part, page, manual title, topics, amounts found, and a summary made by
  `textrules.summarise` (no 8-word run of the manual survives); the text is read by
  `adp_manual_text`.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .adp_descriptive import DescriptiveRow, descriptive_rules
from .adp_exclusions import (
    CSV_EXCLUSION_KEYS,
    EXCLUSIONS,
    GENERAL_NOT_FUNDED,
    NOT_FUNDED,
    NOT_FUNDED_TITLE,
    ExclusionRow,
)
from .adp_funding import (
    SOCIAL_ASSISTANCE,
    FundingRow,
    ShareRule,
    funding_from_sentence,
    funding_summary,
)
from .adp_manual_text import (
    AMOUNT,
    MANUAL_FOOTER,
    AdpExtraction,
    AdpSection,
    clean_text,
    heading,
    percentages,
    section_kind,
    sentences,
)
from .textrules import guarding, norm_words, summarise

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


class AdpMeta(TypedDict):
    extraction_date: str
    documents_processed: int | None
    sections_in: int
    manuals: dict[str, list[str]]


@dataclass
class AdpResult:
    funding: list[FundingRow]
    exclusions: list[ExclusionRow]
    sections: list[AdpSection]
    meta: AdpMeta
    descriptive: list[DescriptiveRow] = field(default_factory=list)
    # what was read and left out, by kind (csv_funding_rows, llm_funding_items, ...)
    counts: Counter[str] = field(default_factory=Counter)


def load(extraction: Path, funding_csv: Path | None, exclusion_csv: Path | None) -> AdpResult:
    """Load all ADP inputs; rewording avoids 8-word runs of any of their texts."""
    data: AdpExtraction = json.loads(extraction.read_text(encoding="utf-8"))
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


def _load(data: AdpExtraction, funding_csv: Path | None, exclusion_csv: Path | None) -> AdpResult:
    raw_sections = data.get("sections", [])
    stats: Counter[str] = Counter()

    # ---- sections -------------------------------------------------------------------
    seen: Counter[str] = Counter()
    sections: list[AdpSection] = []
    manual_by_doc: dict[str, str] = {}
    first_manual: dict[str, str] = {}
    by_uid: dict[tuple[str, str], list[AdpSection]] = defaultdict(list)
    for x in raw_sections:
        doc = x.get("adp_doc", "")
        sid = str(x.get("section_id") or "")
        uid = x.get("policy_uid") or f"adp:{doc}:{sid}"
        seen[uid] += 1
        sec_id = uid if seen[uid] == 1 else f"{uid}-{seen[uid]}"
        raw = x.get("raw_text") or ""
        for m in MANUAL_FOOTER.finditer(raw):
            name = re.sub(r"\s+", " ", m.group(1)).strip()
            name = re.sub(r"^(?:Refer to|See|Introduction to)\s+(?:the\s+)?", "", name)
            manual_by_doc[doc] = name
            first_manual.setdefault(doc, name)
        text = clean_text(f"{x.get('title', '')} {raw}")
        amounts = sorted({a for a in AMOUNT.findall(text)}, key=lambda a: float(a.replace(",", "")))
        sec: AdpSection = {
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
            "percentages": sorted(set(percentages(text))),
            "amounts": [f"${a}" for a in amounts],
            "exclusions": [],
            "kind": section_kind(x, raw),
            "summary": summarise(text, max_words=35, first_clause=False)
            if len(norm_words(text)) > 3
            else "",
            "_text": text,
        }
        sections.append(sec)
        by_uid[(doc, sid)].append(sec)

    # ---- funding ----------------------------------------------------------------------
    funding: dict[tuple[Any, ...], FundingRow] = {}

    def add_rule(
        doc: str, sid: str, r: ShareRule, evidence: str, sec: AdpSection | None = None
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
            "summary": funding_summary(CATEGORIES.get(doc, doc), r),
            "evidence": evidence,
        }

    # A section is about OW/ODSP/ACSD recipients when its own text (any chunk of it) or its
    # parent's (the bare major number or its .00, e.g. 310 "Funding Available to Clients Receiving
    # Social Assistance") names them; a sibling's does not (230.01 grants to every client,
    # 230.02 to those on OW).
    def parent(ref: str) -> str:
        return ref.split(".")[0]

    social = {
        (s["adp_doc"], s["manual"], s["section_ref"])
        for s in sections
        if SOCIAL_ASSISTANCE.search(s["_text"])
    }
    social_parents = {
        (doc, manual, ref)
        for doc, manual, ref in social
        if ref == parent(ref) or ref == parent(ref) + ".00"
    }
    for sec in sections:
        doc, manual, ref = sec["adp_doc"], sec["manual"], sec["section_ref"]
        social_ctx = (
            bool(SOCIAL_ASSISTANCE.search(sec["_text"]))
            or (doc, manual, ref) in social
            or (doc, manual, parent(ref)) in social_parents
            or (doc, manual, parent(ref) + ".00") in social_parents
        )
        for s in sentences(sec["_text"]):
            for r in funding_from_sentence(s, social_ctx):
                add_rule(sec["adp_doc"], sec["section_ref"], r, "manual_text", sec)
    for x in raw_sections:
        for f in x.get("funding") or []:
            if f.get("llm_extracted"):
                stats["llm_funding_items"] += 1
                p = str(f.get("client_share_percent") or "").rstrip("%")
                if p.replace(".", "").isdigit():
                    t = f"{x.get('title', '')} {x.get('raw_text', '')}"
                    if int(float(p)) in percentages(t):
                        stats["llm_funding_items_percent_in_text"] += 1
                continue
            stats["plain_funding_items"] += 1
            for s in sentences(clean_text(f.get("details") or "")):
                for r in funding_from_sentence(
                    s, bool(SOCIAL_ASSISTANCE.search(x.get("raw_text") or ""))
                ):
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
            if SOCIAL_ASSISTANCE.search(row.get("details") or "")
        }
        if rows:
            for row in rows:
                stats["csv_funding_rows"] += 1
                doc, sid = row.get("adp_doc", ""), row.get("section_ref", "")
                secs = by_uid.get((doc, sid)) or []
                ctx = (
                    any(SOCIAL_ASSISTANCE.search(s["_text"]) for s in secs)
                    or (doc, sid) in social_sections
                )
                for s in sentences(clean_text(row.get("details") or "")):
                    for r in funding_from_sentence(s, ctx):
                        add_rule(doc, sid, r, "rules_csv")

    # ---- descriptive rules: rows that say who does what, not what share is paid ----------
    descriptive, stats["csv_rows_without_a_topic"] = descriptive_rules(rows, by_uid)

    # ---- exclusions -------------------------------------------------------------------
    excl: dict[tuple[str, str, str], ExclusionRow] = {}

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
        title_neg = bool(NOT_FUNDED_TITLE.search(sec["heading"]))
        for s in sentences(sec["_text"]):
            if not (title_neg or NOT_FUNDED.search(s)):
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
    for i, f_row in enumerate(f_rows, 1):
        f_row["rule_id"] = f"F{i:03d}"
    e_rows = sorted(
        excl.values(),
        key=lambda r: (doc_order.get(r["adp_doc"], 99), sid_key(r["section_ref"]), r["exclusion"]),
    )
    for i, e_row in enumerate(e_rows, 1):
        e_row["exclusion_id"] = f"X{i:03d}"
    d_rows = sorted(
        descriptive,
        key=lambda r: (doc_order.get(r["adp_doc"], 99), sid_key(r["section_ref"]), r["topic"]),
    )
    for i, d_row in enumerate(d_rows, 1):
        d_row["rule_id"] = f"D{i:03d}"
    for sec in sections:
        sec.pop("_text", None)
        if not sec["manual"]:
            sec["manual"] = first_manual.get(sec["adp_doc"], "")
    meta: AdpMeta = {
        "extraction_date": data.get("extraction_date", ""),
        "documents_processed": data.get("documents_processed"),
        "sections_in": len(raw_sections),
        "manuals": {
            d: sorted({x["manual"] for x in sections if x["adp_doc"] == d and x["manual"]})
            for d in CATEGORIES
        },
    }
    return AdpResult(f_rows, e_rows, sections, meta, d_rows, stats)
