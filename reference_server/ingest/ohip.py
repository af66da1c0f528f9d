"""OHIP Schedule of Benefits fee tables (machine-extracted `section_*_extracted.json`).

The extraction repeats many codes: common visit codes (A007, C122-C124, K013 ...) are
printed in every specialty's table, some subsections swallowed rows from other pages, and a
few rows disagree on the fee. schedule.get needs one answer per code, so we keep one
canonical row per (code, fee) and flag codes that have more than one distinct fee with
`conflict_group` (= the code). Every other raw row is accounted for in `ohip_dropped.csv`.

Rules:
- fee: numbers as given; strings are cleaned of '$' and ',' and classified as flat,
  per_unit ('per unit 70.10'), per_diem, add_on ('add 17.10'), percent ('add 25%'),
  add_units, independent_consideration ('I.C.'); empty -> fee empty, kind 'missing'.
- a row without a code is dropped ('no code'); a code not shaped like a Schedule code
  (letter(s) + 3 digits + optional letter) is dropped ('malformed code'); an unparseable fee
  string is dropped ('malformed fee').
- canonical row of a (code, fee): prefer a subsection whose page range is plausible (at most
  100 pages; some extracted subsections span most of the book), then the longest description,
  then file order. Rows without a fee for a code that has a priced row are duplicates.
- `requirements` condenses the distinct `conditions` texts of *all* rows of the code with
  `textrules.summarise`; `limits` lists frequency limits found by pattern ('max 10 per time
  period'); descriptions are official labels kept via `textrules.keep_label`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .ohip_shapes import DroppedRow, FeeRow, OhipMeta, OhipResult, SubsectionRow
from .textrules import NUMBER_WORDS, break_runs, guarding, keep_label, reword, summarise

CODE_RE = re.compile(r"^[A-Z]{1,2}\d{3}[A-Z]?$")
MAX_PLAUSIBLE_SPAN = 100
_NUM = r"\d+(?:\.\d+)?"


# One `../shared/data/ohip/section_*_extracted.json` file as the extraction wrote it: the keys
# read here (any may be missing). A fee cell holds what the PDF table showed: a number, or text
# such as "per unit 12.50", "Add 30%", "I.C.".

FeeCell = str | int | float | None


class OhipFeeCode(TypedDict, total=False):
    """One fee code entry of a subsection."""

    code: str
    description: str
    fee: FeeCell
    units: str | int | None
    conditions: str | None
    h_fee: FeeCell
    p_fee: FeeCell
    t_fee: FeeCell
    asst_fee: FeeCell
    surg_fee: FeeCell
    anae_fee: FeeCell
    special_prefix: str | None
    context: str


class OhipSubsection(TypedDict, total=False):
    subsection_title: str
    parent_section: str
    page_ref: str
    pages_processed: str | None  # the PDF pages read, "12-14"
    fee_codes: list[OhipFeeCode] | None


class OhipSectionFile(TypedDict, total=False):
    source_pdf: str
    subsections: list[OhipSubsection]


@dataclass(frozen=True)
class Fee:
    value: float | None
    kind: str
    percent: float | None = None


def parse_fee(raw: Any) -> Fee | None:
    """Clean one fee cell; None means malformed."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return Fee(None, "missing")
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return Fee(round(float(raw), 2), "flat")
    s = str(raw).strip().replace("$", "").replace(",", "").strip()
    low = s.lower()
    if re.fullmatch(_NUM, s):
        return Fee(round(float(s), 2), "flat")
    if m := re.fullmatch(rf"per unit\s*({_NUM})", low):
        return Fee(round(float(m.group(1)), 2), "per_unit")
    if m := re.fullmatch(rf"per diem\s*({_NUM})", low):
        return Fee(round(float(m.group(1)), 2), "per_diem")
    if m := re.fullmatch(rf"(?:add\s*)?({_NUM})\s*%", low):
        return Fee(None, "percent", float(m.group(1)))
    if m := re.fullmatch(rf"add\s*({_NUM})", low):
        return Fee(round(float(m.group(1)), 2), "add_on")
    if m := re.fullmatch(rf"add\s*({_NUM})\s*units?", low):
        return Fee(None, "add_units", float(m.group(1)))
    if re.fullmatch(r"i\.?\s*c\.?", low):
        return Fee(None, "independent_consideration")
    return None


_PCT_TEXT = re.compile(r"\b(?:add|increase[^.;%]*?by)\s*(\d+(?:\.\d+)?)\s*%", re.I)


def _percent_in_disguise(fees: list[Fee], text: str) -> list[Fee]:
    """A premium printed as 'Add 30%' often lands in the fee cell as 30.0 (or 0.0, or empty).
    When the code's own rows state a single 'add N%' / 'increase ... by N%', cells equal to N
    or 0 become a percent premium of N, and so do empty cells unless the code also has a real
    dollar fee (A003 has one, plus an empty row from the age-premium table)."""
    pcts = {float(m.group(1)) for m in _PCT_TEXT.finditer(text)}
    if len(pcts) != 1:
        return fees
    n = pcts.pop()
    priced = any(f.kind != "missing" and f.value not in (0.0, n) for f in fees)
    out = []
    for f in fees:
        if (f.kind == "flat" and f.value in (0.0, n)) or (f.kind == "missing" and not priced):
            out.append(Fee(None, "percent", n))
        else:
            out.append(f)
    return out


def _num(raw: Any) -> float | None:
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return round(float(raw), 2)
    s = str(raw).strip().replace("$", "").replace(",", "")
    return round(float(s), 2) if re.fullmatch(_NUM, s) else None


def _span(pages: str | None) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", pages or "")
    return int(m.group(2)) - int(m.group(1)) if m else 0


_WORDNUM = {**NUMBER_WORDS, "once": "1"}
_LIMIT_RES = [
    re.compile(
        r"\b(?:max(?:imum)?\.?|limited to(?: a maximum of)?|up to|only)\s+(?:of\s+)?"
        r"(\w+)(?:\s*\([^)]*\))?(?:\s+[\w-]+){0,6}?\s+per\s+[\w\s-]+?(?=[.;,)]|$)",
        re.I,
    ),
    re.compile(r"\b(?:once|twice)(?:\s+[\w-]+){0,3}?\s+per\s+[\w\s-]+?(?=[.;,)]|$)", re.I),
    re.compile(r"\b(?:first|additional)\s+\w+\s+units?\b[^.;]*?per\s+[\w\s-]+?(?=[.;,)]|$)", re.I),
]


def find_limits(*texts: str) -> list[str]:
    """Frequency limits, re-expressed ('max 10 per time period', '1 per hosp admission')."""
    out: list[str] = []
    for text in texts:
        if not text:
            continue
        for rx in _LIMIT_RES:
            for m in rx.finditer(text):
                phrase = m.group(0).strip()
                words = [_WORDNUM.get(w.lower(), w) for w in reword(phrase).split()]
                short = " ".join(words[:12])
                short = re.sub(r"^(?:limited to|only)\s+(?:max\.?\s+)?", "max ", short, flags=re.I)
                short = break_runs(short, text)
                if short and short.lower() not in (o.lower() for o in out):
                    out.append(short)
    return out


@dataclass
class _SourceRow:
    """One fee code entry of a section file, with where it was read."""

    file: str
    sub: tuple[str, str, str]  # (parent section, page ref, subsection title)
    order: int
    fields: OhipFeeCode  # the extraction's entry as read
    fee: Fee = field(default_factory=lambda: Fee(None, "missing"))


def _tokset(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def _dedupe(items: list[str]) -> list[str]:
    """Drop empty items and near-duplicates (token set contained in a kept one)."""
    kept: list[str] = []
    for item in sorted((i for i in items if i), key=lambda i: -len(_tokset(i))):
        t = _tokset(item)
        if not any(
            t <= _tokset(k) or len(t & _tokset(k)) / max(len(t | _tokset(k)), 1) >= 0.75
            for k in kept
        ):
            kept.append(item)
    return [i for i in items if i in kept]


def _trivial_condition(text: str) -> bool:
    t = text.strip().lower()
    return (
        not t
        or t in {"#", "nil", "n/a", "none"}
        or bool(re.fullmatch(r"[\d.%\s$]+", t))
        or t.startswith("# = ")
    )


def load(paths: list[Path]) -> OhipResult:
    """Load all section files; rewording avoids 8-word runs of any text in them."""
    texts: list[str] = []
    for path in paths:
        section: OhipSectionFile = json.loads(path.read_text(encoding="utf-8"))
        for sub in section.get("subsections", []):
            for fc in sub.get("fee_codes") or []:
                texts.extend(
                    str(fc.get(k))
                    for k in ("description", "conditions", "units", "context")
                    if isinstance(fc.get(k), str)
                )
    with guarding(texts):
        return _load(paths)


def _load(paths: list[Path]) -> OhipResult:
    raw_rows: list[_SourceRow] = []
    sub_index: dict[tuple[str, str, str], int] = {}
    subsections: list[SubsectionRow] = []
    source_pdfs: set[str] = set()
    order = 0
    for path in sorted(paths):
        data: OhipSectionFile = json.loads(path.read_text(encoding="utf-8"))
        if data.get("source_pdf"):
            source_pdfs.add(Path(data["source_pdf"]).name)
        for part in data.get("subsections", []):
            key: tuple[str, str, str] = (
                part.get("parent_section", ""),
                part.get("page_ref", ""),
                part.get("subsection_title", ""),
            )
            fee_codes = part.get("fee_codes") or []
            if key not in sub_index and fee_codes:
                sub_index[key] = len(subsections) + 1
                subsections.append(
                    {
                        "subsection_n": sub_index[key],
                        "section": key[0],
                        "subsection_title": key[2],
                        "page_ref": key[1],
                        "pdf_pages": part.get("pages_processed") or "",
                        "plausible_pages": _span(part.get("pages_processed")) <= MAX_PLAUSIBLE_SPAN,
                        "n_source_rows": 0,
                        "n_codes": 0,
                    }
                )
            for fc in fee_codes:
                order += 1
                raw_rows.append(_SourceRow(path.name, key, order, fc))

    dropped_acc: dict[tuple[str, str, str], list[str]] = defaultdict(list)

    def drop(code: str, fee_raw: Any, reason: str, page_ref: str) -> None:
        dropped_acc[(code, "" if fee_raw is None else str(fee_raw), reason)].append(page_ref)

    by_code: dict[str, list[_SourceRow]] = defaultdict(list)
    for r in raw_rows:
        code = str(r.fields.get("code") or "").strip().upper()
        page_ref = r.sub[1]
        if not code:
            drop("", r.fields.get("fee"), "no code", page_ref)
            continue
        if not CODE_RE.match(code):
            drop(code, r.fields.get("fee"), "malformed code", page_ref)
            continue
        fee = parse_fee(r.fields.get("fee"))
        if fee is None:
            drop(code, r.fields.get("fee"), "malformed fee", page_ref)
            continue
        r.fee = fee
        if r.sub in sub_index:
            subsections[sub_index[r.sub] - 1]["n_source_rows"] += 1
        by_code[code].append(r)

    rows: list[FeeRow] = []
    for code in sorted(by_code):
        members = by_code[code]
        code_text = " ".join(
            f"{r.fields.get('conditions') or ''} {r.fields.get('description') or ''}"
            for r in members
        )
        for r, f in zip(
            members, _percent_in_disguise([r.fee for r in members], code_text), strict=True
        ):
            r.fee = f
        variants: dict[Fee, list[_SourceRow]] = defaultdict(list)
        for r in members:
            variants[r.fee].append(r)
        priced = [f for f in variants if f.kind != "missing"]
        if priced and Fee(None, "missing") in variants:
            for r in variants.pop(Fee(None, "missing")):
                drop(code, r.fields.get("fee"), "duplicate (no fee; priced row kept)", r.sub[1])
        conditions: list[str] = []
        for r in members:
            c = (r.fields.get("conditions") or "").strip()
            if c and not _trivial_condition(c) and c not in conditions:
                conditions.append(c)
        units_texts = [
            str(r.fields.get("units")) for r in members if isinstance(r.fields.get("units"), str)
        ]
        descs = [r.fields.get("description") or "" for r in members]
        limits = _dedupe(find_limits(*units_texts, *conditions, *descs))
        req = _dedupe([summarise(c, max_words=30, first_clause=False) for c in conditions])
        req = [x for x in req if not any(_tokset(x) <= _tokset(lim) for lim in limits)]
        n_variants = len(variants)
        for fee, vrows in sorted(
            variants.items(), key=lambda kv: (kv[0].value is None, kv[0].value or 0, kv[0].kind)
        ):

            def rank(r: _SourceRow) -> tuple[int, int, int]:
                sub = subsections[sub_index[r.sub] - 1] if r.sub in sub_index else None
                plausible = bool(sub and sub["plausible_pages"])
                return (
                    0 if plausible else 1,
                    -len((r.fields.get("description") or "").split()),
                    r.order,
                )

            vrows.sort(key=rank)
            best = vrows[0]
            for r in vrows[1:]:
                drop(code, r.fields.get("fee"), "duplicate", r.sub[1])
            sub = subsections[sub_index[best.sub] - 1] if best.sub in sub_index else None
            if sub:
                sub["n_codes"] += 1
            units = best.fields.get("units")
            if isinstance(units, (int, float)) and not isinstance(units, bool):
                units_s = str(int(units)) if float(units).is_integer() else str(units)
            else:
                units_s = keep_label(str(units or ""), max_words=12)
            desc = best.fields.get("description") or ""
            rows.append(
                {
                    "code": code,
                    "description": keep_label(desc),
                    "fee": fee.value,
                    "fee_kind": fee.kind,
                    "fee_percent": fee.percent,
                    "h_fee": _num(best.fields.get("h_fee")),
                    "p_fee": _num(best.fields.get("p_fee")),
                    "asst_fee": _num(best.fields.get("asst_fee")),
                    "surg_fee": _num(best.fields.get("surg_fee")),
                    "anae_fee": _num(best.fields.get("anae_fee")),
                    "t_fee": _num(best.fields.get("t_fee")),
                    "units": units_s,
                    "requirements": " | ".join(req[:4]),
                    "limits": "; ".join(limits[:4]),
                    "special_prefix": (best.fields.get("special_prefix") or "").strip(),
                    "section": best.sub[0],
                    "subsection_title": best.sub[2],
                    "subsection_n": sub["subsection_n"] if sub else None,
                    "page_ref": best.sub[1],
                    "pdf_pages": sub["pdf_pages"] if sub else "",
                    "n_source_rows": len(vrows),
                    "conflict_group": code if n_variants > 1 else "",
                    "n_fee_variants": n_variants,
                }
            )

    dropped: list[DroppedRow] = [
        {
            "code": k[0],
            "fee_raw": k[1],
            "reason": k[2],
            "n_rows": len(v),
            "page_refs": ";".join(sorted(set(v))),
        }
        for k, v in sorted(dropped_acc.items())
    ]
    meta: OhipMeta = {
        "source_pdf": sorted(source_pdfs),
        "edition": _edition(source_pdfs),
        "rows_in": len(raw_rows),
        "unique_codes_in": len({str(r.fields.get("code") or "").strip().upper() for r in raw_rows}),
    }
    return OhipResult(rows, dropped, subsections, meta)


def _edition(pdfs: set[str]) -> str:
    for p in sorted(pdfs):
        m = re.search(r"(\d{4}-\d{2}-\d{2})", p)
        if m:
            return m.group(1)
    return ""
