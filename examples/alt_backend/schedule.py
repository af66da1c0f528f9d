"""OHIP Schedule of Benefits: every fee row of the machine-extracted tables, by fee code.

A code is often listed in many tables (each specialty's table repeats the common visit codes);
the main listing is the one giving the amount most tables give (the first such table in the
Schedule's order), the others are kept as listings. Search is BM25 over one short document per
listing (its description, its table's title and its conditions).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from examples.alt_backend.store import Passage, PassageStore
from examples.alt_backend.text import BM25, money, terms

COMPONENTS = (
    ("h_fee", "H"),
    ("p_fee", "P"),
    ("t_fee", "T"),
    ("asst_fee", "assistant"),
    ("surg_fee", "surgeon"),
    ("anae_fee", "anaesthetist"),
)
COMPONENT_WORDS = {"H": "technical", "P": "professional", "T": "T column"}
CODE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]\d{3})[A-Za-z]?(?![A-Za-z0-9])")

# A physician named in a question -> the words of the Schedule table (specialty) it points to.
SPECIALTIES: dict[str, str] = {
    "internist": "internal",
    "internal medicine": "internal",
    "psychiatrist": "psychiatry",
    "dermatologist": "dermatology",
    "cardiologist": "cardiology",
    "neurologist": "neurology",
    "paediatrician": "paediatrics",
    "pediatrician": "paediatrics",
    "family physician": "family practice",
    "family doctor": "family practice",
    "gp": "family practice",
    "emergency physician": "emergency medicine",
    "er physician": "emergency medicine",
    "ophthalmologist": "ophthalmology",
    "obstetrician": "obstetrics",
    "gynaecologist": "obstetrics",
    "anaesthesiologist": "anaesthesia",
    "anesthesiologist": "anaesthesia",
    "urologist": "urology",
    "nephrologist": "nephrology",
    "oncologist": "oncology",
    "geriatrician": "geriatrics",
    "surgeon": "surgery",
}
_LIMIT = re.compile(
    r"\b(limit(ed)?|max\.?|maximum|per (hospital )?admission|per (day|year|week|month|patient|"
    r"visit|time period|provider|12)|once|no more than|up to|only one|first person|one per)\b",
    re.IGNORECASE,
)


def _fee(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).replace("$", "").replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_fee(raw: Any, text: str) -> tuple[float | None, str | None]:
    """(dollar amount, kind when the fee column says it) from the fee column as extracted:
    a number, or text such as 'add 30%', 'per unit 70.10', 'per diem 223.00', 'add 17.10',
    'add 6 units', 'I.C.'. A bare number that repeats an 'Add NN%' of the row is a percentage."""
    if isinstance(raw, str):
        low = raw.strip().lower()
        number = re.search(r"\d+(?:\.\d+)?", low.replace(",", ""))
        value = float(number.group(0)) if number else None
        if "%" in low:
            return None, "percent"
        if low.startswith("i.c") or "independent" in low:
            return None, "independent_consideration"
        if "unit" in low and low.startswith("add"):
            return None, "add_units"
        if low.startswith("per unit"):
            return value, "per_unit"
        if low.startswith("per diem"):
            return value, "per_diem"
        if low.startswith("add"):
            return value, "add_on"
        return _fee(raw), None
    value = _fee(raw)
    pct = re.search(r"\badd (\d+(?:\.\d+)?)\s*%", text, re.IGNORECASE)
    if value is not None and pct and float(pct.group(1)) == value:
        return None, "percent"
    return value, None


def _first_page(pages: Any) -> int | None:
    m = re.match(r"\s*(\d+)", str(pages or ""))
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Listing:
    code: str
    description: str
    fee: float | None
    raw_fee: Any
    fee_kind: str | None
    components: tuple[tuple[str, float], ...]
    units: str | None
    conditions: str | None
    page_ref: str
    table: str
    page: int | None
    order: int

    @property
    def amount(self) -> float | None:
        """The listing's amount: its fee, else the first component column it gives."""
        if self.fee is not None:
            return self.fee
        for name, value in self.components:
            if name in ("H", "P"):
                return value
        return None

    def kind(self) -> str:
        if self.fee_kind:
            return self.fee_kind
        low = " ".join(x for x in (self.description, self.units, self.conditions) if x).lower()
        if self.amount is None:
            if re.search(r"\bi\.?\s?c\.?\b|independent consideration", low):
                return "independent_consideration"
            if re.search(r"\badd \d+(\.\d+)?\s*%", low):
                return "percent"
            return "missing"
        if "per diem" in low or "per day" in low:
            return "per_diem"
        if "per unit" in low or re.search(r"\bunits?\b", self.units or ""):
            return "per_unit"
        if re.match(r"add\b", low):
            return "add_on"
        return "flat"


class Schedule:
    def __init__(self, folder: Path):
        self.listings: dict[str, list[Listing]] = defaultdict(list)
        self.edition = "edition not stated"
        flat: list[Listing] = []
        order = 0
        for path in sorted(folder.glob("section_*_extracted.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            m = re.search(r"(\d{4}-\d{2}-\d{2})", str(data.get("source_pdf", "")))
            if m:
                self.edition = f"{m.group(1)} edition"
            for sub in data.get("subsections") or []:
                title = str(sub.get("subsection_title") or "").strip()
                page_ref = str(sub.get("page_ref") or "").strip()
                page = _first_page(sub.get("pages_processed"))
                for row in sub.get("fee_codes") or []:
                    code = str(row.get("code") or "").strip().upper()
                    if not CODE.fullmatch(code) and not re.fullmatch(r"[A-Z]\d{3}[A-Z]", code):
                        continue
                    comps = tuple(
                        (name, v)
                        for key, name in COMPONENTS
                        if (v := _fee(row.get(key))) is not None
                    )
                    description = " ".join(str(row.get("description") or "").split())
                    around = f"{description} {row.get('units') or ''} {row.get('conditions') or ''}"
                    fee, fee_kind = read_fee(row.get("fee"), around)
                    listing = Listing(
                        code=code,
                        description=description,
                        fee=fee,
                        raw_fee=row.get("fee"),
                        fee_kind=fee_kind,
                        components=comps,
                        units=(str(row["units"]).strip() or None) if row.get("units") else None,
                        conditions=(str(row["conditions"]).strip() or None)
                        if row.get("conditions")
                        else None,
                        page_ref=page_ref,
                        table=title,
                        page=page,
                        order=order,
                    )
                    order += 1
                    self.listings[code].append(listing)
                    flat.append(listing)
        for code, rows in self.listings.items():
            # a premium the Schedule gives as 'Add NN%' is sometimes extracted as the bare number
            # NN in another table: that number is a percentage, not dollars
            said = " ".join(f"{r.description} {r.units or ''} {r.conditions or ''}" for r in rows)
            pcts = {float(m) for m in re.findall(r"\badd (\d+(?:\.\d+)?)\s*%", said, re.I)}
            if pcts:
                self.listings[code] = [
                    replace(r, fee=None, fee_kind="percent") if r.fee in pcts else r for r in rows
                ]
        flat = [r for rows in self.listings.values() for r in rows]
        flat.sort(key=lambda r: r.order)
        self.source = f"OHIP Schedule of Benefits ({self.edition}, machine-extracted fee tables)"
        self._flat = flat
        self._index = BM25(
            [f"{x.description} {x.code} | {x.table} | {x.conditions or ''}" for x in flat]
        )

    # ------------------------------------------------------------------ facts per code
    def main(self, code: str) -> Listing:
        rows = self.listings[code]
        amounts = Counter(r.amount for r in rows if r.amount is not None)
        if not amounts:
            return rows[0]
        top = max(amounts.values())
        modal = next(r.amount for r in rows if r.amount is not None and amounts[r.amount] == top)
        return next(r for r in rows if r.amount == modal)

    def description(self, code: str) -> str:
        main = self.main(code)
        if len(main.description.split()) >= 3:
            return main.description
        longest = max(self.listings[code], key=lambda r: len(r.description))
        return longest.description or main.description

    def amounts(self, code: str) -> list[tuple[float, list[Listing]]]:
        """Distinct amounts, main amount first, each with the listings giving it."""
        by: dict[float, list[Listing]] = defaultdict(list)
        for r in self.listings[code]:
            if r.amount is not None:
                by[r.amount].append(r)
        main = self.main(code).amount
        return sorted(by.items(), key=lambda kv: (kv[0] != main, -len(kv[1]), kv[1][0].order))

    def clauses(self, code: str) -> tuple[list[str], list[str]]:
        """(limits, requirements): distinct sentences of every listing's conditions and units."""
        limits: dict[str, str] = {}
        needs: dict[str, str] = {}
        for r in self.listings[code]:
            for text in (r.conditions, r.units):
                if not text or text.lower() in {"per unit", "none"}:
                    continue
                for clause in re.split(r";\s*|(?<=[a-z0-9)%])\.\s+(?=[A-Z])", text):
                    clause = clause.strip().rstrip(".").strip()
                    if len(clause) < 3:
                        continue
                    key = re.sub(r"\W+", " ", clause.lower()).strip()
                    target = limits if _LIMIT.search(clause) else needs
                    target.setdefault(key, clause)
        return list(limits.values()), list(needs.values())

    def passage(self, code: str) -> Passage:
        main = self.main(code)
        limits, needs = self.clauses(code)
        spread = self.amounts(code)
        others = (
            "; ".join(
                f"{money(amount)} in {len(rows)} table(s) ({', '.join(dict.fromkeys(r.page_ref for r in rows[:4]))})"
                for amount, rows in spread
            )
            or "no amount in any table"
        )
        comps = ", ".join(f"{n} {money(v)}" for n, v in main.components)
        text = (
            f"Fee code {code}: {self.description(code)}. Main listing: {money(main.amount)} in "
            f"table {main.page_ref} '{main.table}' (PDF page {main.page}). Amounts across the "
            f"{len(self.listings[code])} listing(s): {others}."
        )
        if comps:
            text += f" Component columns: {comps}."
        if limits:
            text += " Limits: " + "; ".join(limits) + "."
        if needs:
            text += " Conditions: " + "; ".join(needs) + "."
        return Passage(
            f"ohip/fee/{code}", text, self.source, f"{main.page_ref} {main.table}", main.page
        )

    def passages(self, store: PassageStore) -> None:
        for code in self.listings:
            store.add(self.passage(code))

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int, exclude: set[str]) -> list[str]:
        specialty = _specialty(query)
        q = terms(query)
        if not q:
            return []
        best: dict[str, float] = {}
        for i in range(len(self._flat)):
            score = self._index.score(q, i)
            if score <= 0:
                continue
            row = self._flat[i]
            if specialty and specialty in row.table.lower():
                score *= 1.5
            if row.code in exclude:
                continue
            if score > best.get(row.code, 0.0):
                best[row.code] = score
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        return [code for code, _ in ranked[:k]]


def _specialty(query: str) -> str | None:
    low = " " + " ".join(re.findall(r"[a-z]+", query.lower())) + " "
    for word, table_word in sorted(SPECIALTIES.items(), key=lambda kv: -len(kv[0])):
        if f" {word} " in low or f" {word}s " in low:
            return table_word
    return None
