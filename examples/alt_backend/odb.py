"""ODB formulary: parsed from the official XML extract, the facts ``odb.get`` answers from.

The XML nests ``genericName > pcgGroup > pcg9 > drug``: a pcg9 is an interchangeable group
(``itemNumber``, strength, dosage form), a drug is one product (``@id`` = DIN), the
``lccNote`` elements of a pcgGroup carry its Limited Use (LU) codes (``@reasonForUseId``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from examples.alt_backend.odb_terms import CLASSES, norm_tokens
from examples.alt_backend.store import Passage, PassageStore
from examples.alt_backend.text import STOPWORDS, unit_price

SOURCE = "Ontario Drug Benefit Formulary / Comparative Drug Index (data extract of {date})"

# Salt and hydrate words a prescriber usually leaves out of an ingredient name.
_SALT_TEXT = """hcl hydrochloride sodium calcium potassium magnesium besylate maleate mesylate
    succinate tartrate fumarate citrate sulfate sulphate acetate phosphate bromide dihydrate
    monohydrate trihydrate hemihydrate malate dipropionate propionate hyclate disodium
    hydrobromide bitartrate valerate furoate xinafoate trihydrate medoxomil axetil
    cilexetil"""
SALTS = frozenset(_SALT_TEXT.split())


@dataclass(frozen=True)
class Product:
    din: str
    brand: str
    generic: str
    strength: str | None
    form: str | None
    group_id: str
    price: float | None
    odb_pays: float | None
    benefit: bool
    lu_codes: tuple[str, ...]
    note: str | None
    category: str
    order: int

    @property
    def lu_required(self) -> bool:
        return bool(self.lu_codes)


@dataclass
class LuCode:
    code: str
    criteria: str
    period: str | None
    generic: str
    dins: list[str] = field(default_factory=list)
    group_ids: list[str] = field(default_factory=list)
    strength: str | None = None
    form: str | None = None


def _num(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _clean_note(text: str) -> str:
    text = re.sub(r"^\s*notes?\s*:\s*", "", text.strip(), flags=re.IGNORECASE)
    return " ".join(text.split())


class Formulary:
    """Every product of the extract, indexed by DIN, group, name and LU code."""

    def __init__(self, path: Path):
        root = ET.parse(path).getroot()
        self.date = root.get("createDate") or "unknown date"
        self.source = SOURCE.format(date=self.date)
        self.products: dict[str, Product] = {}
        self.groups: dict[str, list[Product]] = defaultdict(list)
        self.lu: dict[str, LuCode] = {}
        self.by_generic: dict[str, list[Product]] = defaultdict(list)
        self.by_brand: dict[tuple[str, ...], list[Product]] = defaultdict(list)
        self.names: dict[tuple[str, ...], set[tuple[str, str]]] = defaultdict(set)
        order = 0
        for p2 in root.iter("pcg2"):
            broad = p2.findtext("name") or ""
            for p6 in p2.iter("pcg6"):
                category = p6.findtext("name") or broad
                for gn in p6.findall("genericName"):
                    generic = (gn.findtext("name") or "").strip()
                    for group in gn.findall("pcgGroup"):
                        order = self._read_group(group, generic, category, order)
        for generic in self.by_generic:
            self.names[norm_tokens(generic)].add(("generic", generic))
            short = self.short_generic(generic)
            if short:
                self.names[short].add(("generic", generic))
        for key in self.by_brand:
            self.names[key].add(("brand", " ".join(key)))

    @staticmethod
    def short_generic(generic: str) -> tuple[str, ...]:
        """The ingredient without salt words: 'METFORMIN HCL' -> ('metformin',)."""
        tokens = norm_tokens(generic)
        return tuple(t for t in tokens if t not in SALTS)

    def _read_group(self, group: ET.Element, generic: str, category: str, order: int) -> int:
        lus: list[tuple[str, str]] = []
        period: str | None = None
        extra: list[str] = []
        for note in group.findall("lccNote"):
            text = " ".join((note.text or "").split())
            if note.get("reasonForUseId"):
                lus.append((note.get("reasonForUseId") or "", text))
            elif text.lower().startswith("lu authorization period"):
                period = text.split(":", 1)[-1].strip()
            elif text:
                extra.append(text)
        for p9 in group.findall("pcg9"):
            gid = (p9.findtext("itemNumber") or "").strip() or f"p{p9.get('id')}"
            strength = (p9.findtext("strength") or "").strip() or None
            form = (p9.findtext("dosageForm") or "").strip() or None
            raw_note = p9.findtext("note")
            note_text = _clean_note(raw_note) if raw_note and raw_note.strip() else None
            for drug in p9.findall("drug"):
                din = (drug.get("id") or "").strip()
                product = Product(
                    din=din,
                    brand=(drug.findtext("name") or "").strip(),
                    generic=generic,
                    strength=strength,
                    form=form,
                    group_id=gid,
                    price=_num(drug.findtext("individualPrice")),
                    odb_pays=_num(drug.findtext("amountMOHLTCPays")),
                    benefit=drug.get("notABenefit") != "Y",
                    lu_codes=tuple(code for code, _ in lus),
                    note=note_text,
                    category=category,
                    order=order,
                )
                order += 1
                self.products[din] = product
                self.groups[gid].append(product)
                self.by_generic[generic].append(product)
                self.by_brand[norm_tokens(product.brand)].append(product)
            for code, text in lus:
                entry = self.lu.get(code)
                if entry is None:
                    criteria = text + ("" if not extra else " " + " ".join(extra))
                    entry = LuCode(code, criteria, period, generic, strength=strength, form=form)
                    self.lu[code] = entry
                entry.group_ids.append(gid)
                entry.dins.extend(d.din for d in self.groups[gid])
        return order

    # ------------------------------------------------------------------ passages
    def passages(self, store: PassageStore) -> None:
        for product in self.products.values():
            store.add(self.product_passage(product))
        for gid in self.groups:
            store.add(self.group_passage(gid))
        for code in self.lu:
            store.add(self.lu_passage(code))

    def product_passage(self, p: Product) -> Passage:
        status = "an ODB benefit" if p.benefit else "listed but NOT an ODB benefit"
        lu = (
            "Limited Use: LU code " + ", ".join(p.lu_codes) + "."
            if p.lu_codes
            else "No Limited Use code applies (general benefit)."
            if p.benefit
            else ""
        )
        pays = f"; the ministry pays {unit_price(p.odb_pays)}" if p.odb_pays is not None else ""
        text = (
            f"{p.brand} (DIN {p.din}) is {p.generic.lower()} {p.strength or ''} "
            f"({p.form or 'form not stated'}), interchangeable group {p.group_id}; it is {status}. "
            f"Unit price {unit_price(p.price)}{pays}. {lu}"
        )
        if p.note:
            text += f" Formulary note: {p.note}"
        return Passage(f"odb/din/{p.din}", " ".join(text.split()), self.source, f"DIN {p.din}")

    def group_passage(self, gid: str) -> Passage:
        members = self.groups[gid]
        first = members[0]
        lu = (
            "Limited Use (LU code " + ", ".join(first.lu_codes) + ")"
            if first.lu_codes
            else "general benefit (no Limited Use code)"
        )
        listed = []
        for p in members:
            bits = [f"DIN {p.din}", unit_price(p.price)]
            if p.odb_pays is not None and p.price is not None and p.odb_pays < p.price:
                bits.append(f"ministry pays {unit_price(p.odb_pays)}")
            if not p.benefit:
                bits.append("not a benefit")
            listed.append(f"{p.brand} ({', '.join(bits)})")
        text = (
            f"Interchangeable group {gid}: {first.generic.lower()} {first.strength or ''} "
            f"{first.form or ''}; {lu}. Products: " + "; ".join(listed) + "."
        )
        if first.note:
            text += f" Formulary note: {first.note}"
        return Passage(
            f"odb/group/{gid}", " ".join(text.split()), self.source, f"interchangeable group {gid}"
        )

    def lu_passage(self, code: str) -> Passage:
        entry = self.lu[code]
        products = ", ".join(
            f"{self.products[d].brand} (DIN {d})" for d in dict.fromkeys(entry.dins)
        )
        text = (
            f"LU code {code}, {entry.generic.lower()} {entry.strength or ''} {entry.form or ''}"
            f" - products: {products}. Criteria: {entry.criteria}"
            f" Authorization period: {entry.period or 'not stated'}."
        )
        return Passage(f"odb/lu/{code}", " ".join(text.split()), self.source, f"LU code {code}")

    # ------------------------------------------------------------------ look-ups
    def find_names(self, text: str) -> list[tuple[int, str, str]]:
        """Names found in text: (number of words, kind 'brand'/'generic', name), longest first."""
        tokens = norm_tokens(text)
        found: dict[tuple[str, str], int] = {}
        for n in range(min(8, len(tokens)), 0, -1):
            for i in range(len(tokens) - n + 1):
                gram = tokens[i : i + n]
                if n == 1 and (gram[0] in STOPWORDS or len(gram[0]) <= 2 or gram[0].isdigit()):
                    continue
                for kind, name in self.names.get(gram, ()):
                    found.setdefault((kind, name), n)
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], kv[0][0] != "generic", kv[0][1]))
        return [(n, kind, name) for (kind, name), n in ranked]

    def class_members(self, key: str) -> list[Product]:
        ingredients = CLASSES[key][2]
        out: list[Product] = []
        for generic, products in self.by_generic.items():
            if any(re.search(rf"\b{i}\b", generic) for i in ingredients):
                out.extend(products)
        return out

    def class_of(self, generic: str) -> str | None:
        for key, (_, _, ingredients) in CLASSES.items():
            if any(re.search(rf"\b{i}\b", generic) for i in ingredients):
                return key
        return None
