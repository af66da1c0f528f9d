"""ODB formulary: parsed from the official XML extract, answered by ``odb.get``.

The XML nests ``genericName > pcgGroup > pcg9 > drug``: a pcg9 is an interchangeable group
(``itemNumber``, strength, dosage form), a drug is one product (``@id`` = DIN), the
``lccNote`` elements of a pcgGroup carry its Limited Use (LU) codes (``@reasonForUseId``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from examples.alt_backend.store import Passage, PassageStore, citation
from examples.alt_backend.text import STOPWORDS, unit_price

SOURCE = "Ontario Drug Benefit Formulary / Comparative Drug Index (data extract of {date})"

# Salt and hydrate words a prescriber usually leaves out of an ingredient name.
_SALT_TEXT = """hcl hydrochloride sodium calcium potassium magnesium besylate maleate mesylate
    succinate tartrate fumarate citrate sulfate sulphate acetate phosphate bromide dihydrate
    monohydrate trihydrate hemihydrate malate dipropionate propionate hyclate disodium
    hydrobromide bitartrate valerate furoate xinafoate trihydrate medoxomil axetil
    cilexetil"""
SALTS = frozenset(_SALT_TEXT.split())

# Drug classes by ingredient (a small hand-made table; the formulary itself only has broad
# therapeutic categories). Key -> (label in words, words that name it, ingredients).
CLASSES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "statin": (
        "statin (HMG-CoA reductase inhibitor)",
        ("statin", "statins", "hmg coa reductase inhibitor"),
        ("ATORVASTATIN", "FLUVASTATIN", "LOVASTATIN", "PRAVASTATIN", "ROSUVASTATIN", "SIMVASTATIN"),
    ),
    "ppi": (
        "proton pump inhibitor (PPI)",
        ("ppi", "ppis", "proton pump inhibitor", "proton pump inhibitors"),
        (
            "OMEPRAZOLE",
            "ESOMEPRAZOLE",
            "LANSOPRAZOLE",
            "DEXLANSOPRAZOLE",
            "PANTOPRAZOLE",
            "RABEPRAZOLE",
        ),
    ),
    "sglt2": (
        "SGLT2 inhibitor",
        ("sglt2 inhibitor", "sglt2 inhibitors", "sglt2", "sglt 2 inhibitor", "gliflozin"),
        ("CANAGLIFLOZIN", "DAPAGLIFLOZIN", "EMPAGLIFLOZIN", "ERTUGLIFLOZIN"),
    ),
    "glp1": (
        "GLP-1 receptor agonist",
        ("glp 1 agonist", "glp 1 receptor agonist", "glp 1", "glp1", "glp 1 ra"),
        ("SEMAGLUTIDE", "LIRAGLUTIDE", "DULAGLUTIDE", "EXENATIDE", "LIXISENATIDE", "TIRZEPATIDE"),
    ),
    "dpp4": (
        "DPP-4 inhibitor",
        ("dpp 4 inhibitor", "dpp4 inhibitor", "dpp 4", "gliptin"),
        ("SITAGLIPTIN", "SAXAGLIPTIN", "LINAGLIPTIN", "ALOGLIPTIN"),
    ),
    "acei": (
        "ACE inhibitor",
        ("ace inhibitor", "ace inhibitors", "acei"),
        (
            "BENAZEPRIL",
            "CAPTOPRIL",
            "CILAZAPRIL",
            "ENALAPRIL",
            "FOSINOPRIL",
            "LISINOPRIL",
            "PERINDOPRIL",
            "QUINAPRIL",
            "RAMIPRIL",
            "TRANDOLAPRIL",
        ),
    ),
    "arb": (
        "angiotensin II receptor blocker (ARB)",
        ("arb", "arbs", "angiotensin receptor blocker", "sartan"),
        (
            "AZILSARTAN",
            "CANDESARTAN",
            "EPROSARTAN",
            "IRBESARTAN",
            "LOSARTAN",
            "OLMESARTAN",
            "TELMISARTAN",
            "VALSARTAN",
        ),
    ),
    "doac": (
        "direct oral anticoagulant (DOAC)",
        ("doac", "doacs", "direct oral anticoagulant", "noac"),
        ("APIXABAN", "RIVAROXABAN", "EDOXABAN", "DABIGATRAN"),
    ),
}

# The published form words (input enum) -> a test on the formulary's dosage-form tokens.
_EXTENDED = {"er", "sr", "cr", "la", "xl", "xr", "prolong", "mr"}
_DELAYED = {"dr", "ent", "enteric"}


def _form_tokens(form: str | None) -> set[str]:
    return {t for t in re.split(r"[\s\-/,()]+", (form or "").lower()) if t}


def form_matches(asked: str, form: str | None) -> bool:
    t = _form_tokens(form)
    tab, cap = bool(t & {"tab", "tabs"}), "cap" in t
    tests = {
        "extended-release tablets": tab and bool(t & _EXTENDED),
        "extended-release capsules": cap and bool(t & _EXTENDED),
        "delayed-release tablets": tab and bool(t & _DELAYED),
        "delayed-release capsules": cap and bool(t & _DELAYED),
        "chewable tablets": "chew" in t,
        "orally disintegrating tablets": bool(t & {"disintegrating", "odt", "dissolve"}),
        "sublingual tablets": "sl" in t,
        "extended-release": bool(t & _EXTENDED),
        "tablets": tab and not (t & _EXTENDED),
        "capsules": cap and not (t & _EXTENDED),
        "eye drops": "oph" in t,
        "ear drops": bool(t & {"ot", "otic"}),
        "nasal spray": "nas" in t,
        "inhaler": "inh" in t,
        "ointment": "oint" in t,
        "cream": "cr" in t and not (tab or cap),
        "lotion": "lot" in t,
        "gel": "gel" in t,
        "topical solution": "top" in t and "sol" in t,
        "oral liquid": ("o" in t and "l" in t) or "liq" in t,
        "oral solution": "oral" in t and "sol" in t,
        "suspension": "susp" in t,
        "injection": "inj" in t,
        "patch": bool(t & {"patch", "trans", "transdermal"}),
        "suppositories": "sup" in t,
        "film": bool(t & {"film", "strip"}),
    }
    return tests.get(asked, False)


# Words in a question that name a form, longest first (mapped to the published form words).
_FORM_WORDS: tuple[tuple[str, str], ...] = (
    ("extended release tablets", "extended-release tablets"),
    ("extended release tablet", "extended-release tablets"),
    ("extended release capsules", "extended-release capsules"),
    ("delayed release tablets", "delayed-release tablets"),
    ("delayed release capsules", "delayed-release capsules"),
    ("orally disintegrating tablets", "orally disintegrating tablets"),
    ("chewable tablets", "chewable tablets"),
    ("sublingual tablets", "sublingual tablets"),
    ("topical solution", "topical solution"),
    ("oral solution", "oral solution"),
    ("oral liquid", "oral liquid"),
    ("eye drops", "eye drops"),
    ("ear drops", "ear drops"),
    ("nasal spray", "nasal spray"),
    ("extended release", "extended-release"),
    ("ointment", "ointment"),
    ("cream", "cream"),
    ("lotion", "lotion"),
    ("suspension", "suspension"),
    ("injection", "injection"),
    ("inhaler", "inhaler"),
    ("patch", "patch"),
    ("suppositories", "suppositories"),
    ("suppository", "suppositories"),
    ("capsules", "capsules"),
    ("capsule", "capsules"),
    ("tablets", "tablets"),
    ("tablet", "tablets"),
)

_UNIT = r"(?:mg|mcg|µg|g|%|units?|u|iu|ml|meq|mmol)"
_STRENGTH_EXPR = re.compile(
    rf"(?<![\w.])\d+(?:\.\d+)?\s*{_UNIT}?(?:\s*(?:&|/|and)\s*\d+(?:\.\d+)?\s*{_UNIT}?)*",
    re.IGNORECASE,
)
_PART = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNIT})?", re.IGNORECASE)


def strength_parts(text: str) -> list[tuple[float, str | None]]:
    """'50mg & 1000mg' -> [(50, 'mg'), (1000, 'mg')]; '5/160 mg' -> [(5, 'mg'), (160, 'mg')];
    '50 units' -> [(50, 'u')]. A number after a '/' with no number-free unit before it is a
    further part ('200mg/5mL' -> [(200, 'mg'), (5, 'ml')]); '/mL' alone is dropped."""
    parts: list[tuple[float, str | None]] = []
    for m in _PART.finditer(text):
        unit = (m.group(2) or "").lower() or None
        if unit in {"unit", "units", "iu"}:
            unit = "u"
        if unit == "µg":
            unit = "mcg"
        parts.append((float(m.group(1)), unit))
    # a part without a unit takes the unit of the next part that has one ('5/160 mg')
    filled: list[tuple[float, str | None]] = []
    for i, (num, unit) in enumerate(parts):
        if unit is None:
            unit = next((u for _, u in parts[i + 1 :] if u), None)
        filled.append((num, unit))
    return filled


def strength_matches(asked: str, listed: str | None) -> bool:
    want = strength_parts(asked)
    have = strength_parts(listed or "")
    if not want or len(have) < len(want):
        return False
    for (wn, wu), (hn, hu) in zip(want, have, strict=False):
        if abs(wn - hn) > 1e-9:
            return False
        if wu and hu and wu != hu:
            return False
    return True


def find_strength(text: str) -> str | None:
    """The first strength written in a question ('Januvia 100 mg' -> '100 mg')."""
    for m in _STRENGTH_EXPR.finditer(text):
        expr = m.group(0).strip()
        if re.search(_UNIT + r"\b|%", expr, re.IGNORECASE):
            return expr
    return None


def norm_tokens(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z0-9]+", text.lower().replace("&", " and ")))


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


def find_class(text: str) -> str | None:
    tokens = " ".join(norm_tokens(text))
    for key, (_, aliases, _) in CLASSES.items():
        for alias in sorted(aliases, key=len, reverse=True):
            if re.search(rf"\b{re.escape(alias)}\b", tokens):
                return key
    return None


def find_form(text: str) -> str | None:
    joined = " ".join(norm_tokens(text))
    for words, form in _FORM_WORDS:
        if re.search(rf"\b{words}\b", joined):
            return form
    return None


def _is_brand_named(product: Product) -> bool:
    """A brand-name product: its name does not carry the ingredient's name."""
    first = next(iter(Formulary.short_generic(product.generic)), "")
    return bool(first) and first not in norm_tokens(product.brand)


# ======================================================================== answering


@dataclass
class OdbRequest:
    drug: str | None = None
    din: str | None = None
    ingredient: str | None = None
    drug_class: str | None = None
    q: str | None = None
    strength: str | None = None
    form: str | None = None
    condition: str | None = None
    check: list[str] | None = None
    check_alternatives: bool = True
    include_lu: bool = True
    exclude_lu: bool = False
    include_brand: bool = True
    top_k: int = 5


class OdbAnswer:
    """Builds one odb.get answer; ``price`` applies the seeded price defect."""

    def __init__(self, formulary: Formulary, defects: frozenset[str]):
        self.f = formulary
        self.defects = defects

    def price(self, p: Product, value: float | None = None) -> float | None:
        amount = p.price if value is None else value
        if amount is None:
            return None
        if "price" in self.defects and int(p.din[-1]) % 2 == 1:
            return round(amount * 1.15, 4)
        return amount

    def row(self, p: Product) -> dict[str, Any]:
        return {
            "din": p.din,
            "brand": p.brand,
            "strength": p.strength,
            "dosage_form": p.form,
            "group_id": p.group_id,
            "covered": p.benefit,
            "lu_required": p.lu_required,
            "price": self.price(p),
        }

    # -------------------------------------------------------------- resolution
    def candidates(self, req: OdbRequest) -> tuple[list[Product], str, str | None]:
        """Products the request names, how they were found, and the class key if any."""
        if req.din:
            din = req.din.zfill(8)
            p = self.f.products.get(din)
            return ([p] if p else []), f"DIN {din}", None
        text = " ".join(x for x in (req.drug, req.ingredient, req.q) if x)
        if req.q:
            m = re.search(r"(?<!\d)(\d{8})(?!\d)", req.q)
            if m and m.group(1) in self.f.products:
                return [self.f.products[m.group(1)]], f"DIN {m.group(1)}", None
        names = self.f.find_names(text) if text else []
        if names:
            best = names[0][0]
            top = [(kind, name) for n, kind, name in names if n == best]
            generic = next((name for kind, name in top if kind == "generic"), None)
            if generic is not None:
                return list(self.f.by_generic[generic]), generic, None
            brand = top[0][1]
            return list(self.f.by_brand[norm_tokens(brand)]), brand, None
        key = None
        if req.drug_class:
            key = find_class(req.drug_class)
        if key is None and text:
            key = find_class(text)
        if key is not None:
            return self.f.class_members(key), CLASSES[key][0], key
        return [], text or "the request", None

    # -------------------------------------------------------------- the answer
    def answer(self, req: OdbRequest) -> dict[str, Any]:
        checks = set(req.check or ["coverage", "interchangeable", "lowest_cost"])
        if "lu_criteria" in checks:
            checks.add("coverage")
        strength = req.strength or (find_strength(req.q) if req.q else None)
        form = req.form or (find_form(req.q) if req.q else None)
        condition = req.condition or _condition_in(req.q)
        wants_brands = "all_strengths" in checks or bool(
            req.q and re.search(r"\b(brands?|biosimilars?|all strengths)\b", req.q, re.I)
        )
        candidates, named, class_key = self.candidates(req)
        if req.din and candidates:
            strength = form = None  # the DIN names one product
        out: dict[str, Any] = {
            "provenance": [],
            "confidence": 0.0,
            "coverage": None,
            "interchangeable": [],
            "lowest_cost": None,
            "context": [],
            "alternatives": [],
            "price_comparison": None,
            "needs_more_info": False,
            "citations": [],
            "conflicts": [],
            "brands": [],
            "other_strengths": [],
            "not_listed": None,
        }
        if not candidates:
            out["needs_more_info"] = True
            out["context"] = [
                f"Nothing in the formulary extract of {self.f.date} matches {named!r}; "
                "give a brand or ingredient name, a DIN or a drug class."
            ]
            return self._finish(out)

        pool = candidates
        if req.exclude_lu:
            pool = [p for p in pool if not p.lu_required]
        if strength:
            pool = [p for p in pool if strength_matches(strength, p.strength)]
        if form:
            pool = [p for p in pool if form_matches(form, p.form)]
        if not pool:
            if "wrong_product" in self.defects and strength:
                # the seeded defect: answer another strength as if it were the one asked
                pool = [p for p in candidates if not form or form_matches(form, p.form)]
            if not pool:
                return self._not_listed(out, candidates, named, strength, form, req.top_k)

        chosen = self._pick(pool, class_key is not None)
        out["provenance"] = ["sql"]
        group = [p for p in self.f.groups[chosen.group_id]]
        benefit_group = [p for p in group if p.benefit and p.price is not None]
        cheapest = min(benefit_group, key=lambda p: (p.price or 0.0, p.order), default=None)

        cites: list[dict[str, Any]] = [
            citation(
                self.f.group_passage(chosen.group_id), f"interchangeable group {chosen.group_id}"
            ),
            citation(self.f.product_passage(chosen), f"DIN {chosen.din}"),
        ]
        if "coverage" in checks:
            out["coverage"] = self._coverage(chosen, req, checks, condition)
            if req.include_lu:
                for code in chosen.lu_codes:
                    cites.append(citation(self.f.lu_passage(code), f"LU code {code}"))
        if "interchangeable" in checks or "interchangeable_group" in checks:
            shown = [
                p
                for p in group
                if (p.benefit or p.din == chosen.din)
                and (req.include_brand or not _is_brand_named(p) or p.din == chosen.din)
            ]
            shown.sort(
                key=lambda p: (p.din != chosen.din, p.price is None, p.price or 0.0, p.order)
            )
            out["interchangeable"] = [
                {
                    "din": p.din,
                    "brand": p.brand,
                    "price": self.price(p),
                    "lowest_cost": cheapest is not None and p.benefit and p.price == cheapest.price,
                }
                for p in shown[: req.top_k]
            ]
        if cheapest is not None and ({"lowest_cost", "price_comparison"} & checks):
            saving = (
                round(chosen.price - cheapest.price, 4)
                if chosen.price is not None and cheapest.price is not None
                else None
            )
            if "lowest_cost" in checks:
                out["lowest_cost"] = {
                    "din": cheapest.din,
                    "brand": cheapest.brand,
                    "price": self.price(cheapest),
                    "savings": saving,
                }
            if chosen.benefit and chosen.price is not None and cheapest.price is not None:
                pct = round(100.0 * (saving or 0.0) / chosen.price, 2) if chosen.price else None
                out["price_comparison"] = {
                    "requested_din": chosen.din,
                    "requested_brand": chosen.brand,
                    "requested_price": self.price(chosen),
                    "amount_odb_pays": self.price(chosen, chosen.odb_pays),
                    "lowest_cost_din": cheapest.din,
                    "lowest_cost_brand": cheapest.brand,
                    "lowest_cost_price": self.price(cheapest),
                    "savings_per_unit": saving,
                    "savings_percent": pct,
                }
        if req.check_alternatives and (
            not chosen.benefit or class_key is not None or "alternatives" in checks
        ):
            out["alternatives"] = self._alternatives(chosen, class_key, req)
        if wants_brands:
            every = [p for p in self.f.by_generic[chosen.generic]]
            every.sort(key=lambda p: (not p.benefit, p.order))
            out["brands"] = [self.row(p) for p in every]
        if not strength and not form and class_key is None:
            same = [p for p in self.f.by_brand[norm_tokens(chosen.brand)] if p.din != chosen.din]
            out["other_strengths"] = [self.row(p) for p in same[: req.top_k]]
        out["context"] = self._context(chosen, class_key, strength, form)
        out["citations"] = cites
        corroborating = min(3, len(benefit_group) - 1) if benefit_group else 0
        out["confidence"] = round(min(0.99, 0.9 + 0.03 * max(0, corroborating)), 2)
        return self._finish(out)

    def _finish(self, out: dict[str, Any]) -> dict[str, Any]:
        if "missing_field" in self.defects:
            out.pop("needs_more_info", None)
        return out

    def _pick(self, pool: list[Product], by_price: bool) -> Product:
        """The product answered: for a class, the cheapest covered one; otherwise covered
        before not covered, plain tablets/capsules before other forms, listing order."""
        if by_price:
            covered = [p for p in pool if p.benefit and p.price is not None]
            if covered:
                return min(covered, key=lambda p: (p.price or 0.0, p.order))
        return min(
            pool,
            key=lambda p: (not p.benefit, len(_form_tokens(p.form)) > 1, p.order),
        )

    def _coverage(
        self, p: Product, req: OdbRequest, checks: set[str], condition: str | None
    ) -> dict[str, Any]:
        criteria: str | None = None
        if p.lu_codes and req.include_lu:
            pieces = []
            for code in p.lu_codes:
                entry = self.f.lu[code]
                period = f" (authorized for: {entry.period})" if entry.period else ""
                pieces.append(f"LU code {code}{period}: {entry.criteria}")
            criteria = " | ".join(pieces)
            if condition:
                hits = [c for c in p.lu_codes if condition.lower() in self.f.lu[c].criteria.lower()]
                if hits:
                    criteria += f" | '{condition}' appears in LU code(s) {', '.join(hits)}."
                else:
                    criteria += (
                        f" | Checked for '{condition}': none of these criteria names it, so "
                        "a Limited Use claim for that use is not supported by the formulary."
                    )
        notes: list[str] = []
        if "lu_criteria" in checks and p.note:
            notes.append(_summarise(p.note))
        return {
            "covered": p.benefit,
            "din": p.din,
            "brand_name": p.brand,
            "generic_name": p.generic,
            "strength": p.strength,
            "dosage_form": p.form,
            "group_id": p.group_id,
            "lu_required": p.lu_required,
            "lu_criteria": criteria,
            "lu_codes": list(p.lu_codes) if req.include_lu else [],
            "notes": notes,
        }

    def _alternatives(
        self, chosen: Product, class_key: str | None, req: OdbRequest
    ) -> list[dict[str, Any]]:
        key = class_key or self.f.class_of(chosen.generic)
        if key is not None:
            pool = self.f.class_members(key)
            label = CLASSES[key][0]
        else:
            pool = [p for p in self.f.products.values() if p.category == chosen.category]
            label = f"same formulary category ({chosen.category.lower()})"
        best: dict[str, Product] = {}
        for p in pool:
            if not p.benefit or p.price is None or p.group_id == chosen.group_id:
                continue
            if req.exclude_lu and p.lu_required:
                continue
            if class_key is None and p.generic == chosen.generic:
                continue
            held = best.get(p.group_id)
            if held is None or (p.price, p.order) < (held.price or 0.0, held.order):
                best[p.group_id] = p
        ranked = sorted(best.values(), key=lambda p: (p.price or 0.0, p.order))
        return [
            {
                "din": p.din,
                "brand": p.brand,
                "generic_name": p.generic,
                "strength": p.strength,
                "price": self.price(p),
                "lu_required": p.lu_required,
                "reason": f"covered {label}: {p.generic.lower()} {p.strength or ''}".strip(),
            }
            for p in ranked[: req.top_k]
        ]

    def _not_listed(
        self,
        out: dict[str, Any],
        candidates: list[Product],
        named: str,
        strength: str | None,
        form: str | None,
        top_k: int,
    ) -> dict[str, Any]:
        listed = sorted(candidates, key=lambda p: (not p.benefit, p.order))
        asked = " ".join(x for x in (strength, form) if x)
        at = ", ".join(
            dict.fromkeys(f"{p.strength or '?'} {p.form or ''}".strip() for p in listed[:top_k])
        )
        shown = named.title() if named.isupper() else named
        out["provenance"] = ["sql"]
        out["confidence"] = 0.9
        out["needs_more_info"] = True
        out["not_listed"] = {
            "name": shown,
            "strength": strength,
            "form": form,
            "message": f"{shown} is not listed at {asked}; the formulary lists it as: {at}.",
            "listed": [self.row(p) for p in listed[:top_k]],
        }
        out["context"] = [
            f"No product of {shown} matches {asked}; ask which listed product is meant."
        ]
        out["citations"] = [
            citation(self.f.product_passage(p), f"DIN {p.din}") for p in listed[: min(3, top_k)]
        ]
        return self._finish(out)

    def _context(
        self, p: Product, class_key: str | None, strength: str | None, form: str | None
    ) -> list[str]:
        lines = []
        if class_key is not None:
            lines.append(
                f"Lowest-priced covered {CLASSES[class_key][0]} in the extract: {p.brand} "
                f"({p.generic.lower()} {p.strength}) at {unit_price(p.price)} per unit."
            )
        lines.append(self.f.product_passage(p).text)
        lines.append(self.f.group_passage(p.group_id).text)
        for code in p.lu_codes[:3]:
            lines.append(self.f.lu_passage(code).text)
        return lines


def _summarise(note: str, limit: int = 240) -> str:
    text = " ".join(note.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def _condition_in(q: str | None) -> str | None:
    """'Is Ozempic covered for diabetes?' -> 'diabetes' (the words after 'for', up to '?')."""
    if not q:
        return None
    m = re.search(r"\bcovered for (?:an? |the )?([a-z][a-z0-9 \-']{2,40}?)\s*(?:[?.,;]|$)", q, re.I)
    return m.group(1).strip() if m else None


def iter_prices(answer: dict[str, Any]) -> Iterable[float]:
    """Every unit price an answer states (for tests)."""
    for key in ("interchangeable", "alternatives", "brands", "other_strengths"):
        for row in answer.get(key) or []:
            if row.get("price") is not None:
                yield row["price"]
