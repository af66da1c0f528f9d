"""Ontario Drug Benefit formulary (ODB / Comparative Drug Index XML extract).

Flattens the official XML (`pcg2 > pcg6 > genericName > pcgGroup > pcg9 > drug`) into three
tables: one row per drug (DIN/PIN), one per interchangeable group (`pcg9`), one per Limited
Use (LU) code. Interchangeable groups are what odb.get uses to find the lowest-cost
alternative, so `lowest_cost` is computed here once, from the listed unit prices.

Derivation rules (facts only, nothing copied):
- `group_id` is the pcg9 `itemNumber`; the few pcg9 without one (mostly nutrition products)
  fall back to the 9-digit pcg9 `id`, so every group has a key.
- `ingredient` is the generic name, lower-cased, with salt/hydrate words stripped from the end
  of each component ('ATORVASTATIN CALCIUM' -> 'atorvastatin'; combinations keep ' & ').
  Names that start with a metal ion ('POTASSIUM CHLORIDE') are kept whole.
- `lowest_cost` is true for every benefit drug (not `notABenefit`) whose individual price
  equals the group minimum; `lowest_cost_din` in the group table is the smallest such DIN.
- LU codes apply to every drug of the `pcgGroup` whose `lccNote` carries the
  `reasonForUseId`. `indication` is NOT the criteria text: it is `textrules.summarise` of the
  first clause only (lead-in -> label such as 'Tx:'/'Pts:', abbreviations, articles dropped,
  cut to 20 words, and no 8-word run of the source kept). `period` comes from the
  'LU Authorization Period' note that follows the code; `period_days` converts
  days/weeks/months/years (month = 30 days, year = 365 days; indefinite -> empty).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from reference_server.catalog import ingredient_key

from .dpd import AtcInfo
from .odb_notes import ProductNotes
from .odb_shapes import DRUG_COLUMNS, DrugRow, GroupMeta, GroupRow, LuRow, OdbMeta, OdbResult
from .textrules import guarding, summarise

# XML attribute -> column; attributes not listed here are added in snake_case automatically.
FLAG_COLUMNS: dict[str, str] = {
    "notABenefit": "not_a_benefit",
    "sec3": "sec3",
    "sec3b": "sec3b",
    "sec3bEAP": "sec3b_eap",
    "sec3c": "sec3c",
    "sec9": "sec9",
    "sec12": "sec12",
    "chronicUseMed": "chronic_use_med",
    "insOH": "ins_oh",
    "selfMed": "self_med",
    "maO": "ma_o",
}
VALUE_COLUMNS: dict[str, str] = {
    "additionalBenefitType": "additional_benefit_type",
    "dinStatus": "din_status",
}


# salt words and the ingredient key live in the run-time catalog (odb.get reads them too)
def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _price(text: str | None) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        return round(float(text.strip()), 4)
    except ValueError:
        return None


_PERIOD = re.compile(r"Authori[sz]ation Period:\s*(.+)", re.I)
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def parse_period(text: str) -> tuple[str, int | None]:
    """'LU Authorization Period: 1 year' -> ('1 year', 365); indefinite -> ('indefinite', None)."""
    m = _PERIOD.search(text or "")
    if not m:
        return "", None
    raw = m.group(1).strip().rstrip(".").lower()
    if "indefinite" in raw:
        return "indefinite", None
    n = re.search(r"(up to\s+)?(\d+)\s*(day|week|month|year)s?", raw)
    if not n:
        return "", None
    qty, unit = int(n.group(2)), n.group(3)
    label = f"{'up to ' if n.group(1) else ''}{qty} {unit}{'s' if qty != 1 else ''}"
    return label, qty * _UNIT_DAYS[unit]


@dataclass
class _Drug:
    """A drug row with the facts the group pass reads, typed."""

    din: str
    group_id: str
    is_benefit: bool
    individual_price: float | None
    atc_code: str
    atc_class: str
    row: DrugRow


def parse(path: Path, atc: dict[str, AtcInfo] | None = None) -> OdbResult:
    """Parse the extract; rewording avoids 8-word runs of any note text in the file."""
    root = ET.parse(path).getroot()
    with guarding(n.text for n in root.iter() if n.text and len(n.text) > 40):
        return _parse(root, atc)


def _parse(root: ET.Element, atc: dict[str, AtcInfo] | None) -> OdbResult:
    formulary = root.find("formulary")
    if formulary is None:
        raise ValueError("not an ODB extract: no <formulary>")
    manufacturers = {}
    for m in root.iter("manufacturer"):
        name = (m.text or "").strip()
        if name.lower().startswith("manufacturer name not"):
            name = ""
        manufacturers[m.get("id", "")] = name
    atc = atc or {}

    flag_cols = list(FLAG_COLUMNS.values())
    extra: set[str] = set()
    drugs: list[_Drug] = []
    group_meta: dict[str, GroupMeta] = {}
    lu_text: dict[str, str] = {}
    lu_periods: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    lu_dins: dict[str, list[str]] = defaultdict(list)
    lu_groups: dict[str, list[str]] = defaultdict(list)
    lu_generic: dict[str, list[str]] = defaultdict(list)
    notes = ProductNotes()

    for pcg2 in formulary.findall("pcg2"):
        tclass = (pcg2.findtext("name") or "").strip()
        for pcg6 in pcg2.findall("pcg6"):
            subclass = (pcg6.findtext("name") or "").strip()
            subclass_notes = notes.open("subclass", pcg6)
            for gen in pcg6.findall("genericName"):
                generic = (gen.findtext("name") or "").strip()
                ingredient = ingredient_key(generic)
                generic_notes = notes.open("ingredient", gen)
                for pg in gen.findall("pcgGroup"):
                    # LU codes of this pcgGroup, with the authorization period that follows each
                    codes: list[str] = []
                    pending: list[str] = []
                    default_period: tuple[str, int | None] | None = None
                    for note in pg.findall("lccNote"):
                        code = note.get("reasonForUseId")
                        if code:
                            code = code.strip()
                            codes.append(code)
                            pending.append(code)
                            lu_text.setdefault(code, note.text or "")
                        elif note.get("type") == "R":
                            period = parse_period(note.text or "")
                            if period[0]:
                                if pending:
                                    for c in pending:
                                        lu_periods[c].append(period)
                                    pending = []
                                else:
                                    default_period = period
                    if default_period:
                        for c in codes:
                            if not lu_periods.get(c):
                                lu_periods[c].append(default_period)
                    for pcg9 in pg.findall("pcg9"):
                        pcg9_id = pcg9.get("id", "")
                        item = (pcg9.findtext("itemNumber") or "").strip()
                        gid = item or pcg9_id
                        strength = (pcg9.findtext("strength") or "").strip()
                        form = (pcg9.findtext("dosageForm") or "").strip()
                        group_notes = notes.open("group", pcg9)
                        group_meta[gid] = {
                            "group_id": gid,
                            "pcg9_id": pcg9_id,
                            "generic_name": generic,
                            "ingredient": ingredient,
                            "strength": strength,
                            "dosage_form": form,
                            "therapeutic_class": tclass,
                            "lu_codes": ";".join(codes),
                        }
                        for c in codes:
                            if gid not in lu_groups[c]:
                                lu_groups[c].append(gid)
                            if generic not in lu_generic[c]:
                                lu_generic[c].append(generic)
                        for d in pcg9.findall("drug"):
                            din = d.get("id", "").strip()
                            for opened in (
                                subclass_notes,
                                generic_notes,
                                group_notes,
                                notes.open("drug", d),
                            ):
                                notes.apply(opened, din, gid, ingredient)
                            manufacturer_id = (d.findtext("manufacturerId") or "").strip()
                            price = _price(d.findtext("individualPrice"))
                            row: DrugRow = {
                                "din": din,
                                "brand_name": (d.findtext("name") or "").strip(),
                                "generic_name": generic,
                                "ingredient": ingredient,
                                "strength": strength,
                                "dosage_form": form,
                                "manufacturer_id": manufacturer_id,
                                "individual_price": price,
                                "amount_mohltc_pays": _price(d.findtext("amountMOHLTCPays")),
                                "daily_cost": _price(d.findtext("dailyCost")),
                                "listing_date": (d.findtext("listingDate") or "").strip(),
                                "therapeutic_class": tclass,
                                "therapeutic_subclass": subclass,
                                "group_id": gid,
                                "pcg9_id": pcg9_id,
                                "lu_codes": ";".join(codes),
                            }
                            row["manufacturer"] = manufacturers.get(manufacturer_id, "")
                            for attr, col in FLAG_COLUMNS.items():
                                row[col] = d.get(attr) == "Y"
                            for attr, col in VALUE_COLUMNS.items():
                                row[col] = d.get(attr, "")
                            for attr, val in d.attrib.items():
                                if attr in FLAG_COLUMNS or attr in VALUE_COLUMNS or attr == "id":
                                    continue
                                col = _snake(attr)
                                extra.add(col)
                                row[col] = val == "Y" if val in ("Y", "N") else val
                            is_benefit = not row["not_a_benefit"]
                            row["is_benefit"] = is_benefit
                            row["lu_required"] = bool(codes)
                            info = atc.get(din)
                            atc_code = info.atc_code if info else ""
                            atc_class = info.atc_class if info else ""
                            row["atc_code"] = atc_code
                            row["atc_class"] = atc_class
                            drugs.append(
                                _Drug(din, gid, is_benefit, price, atc_code, atc_class, row)
                            )
                            for c in codes:
                                lu_dins[c].append(din)

    # lowest cost within each interchangeable group, among benefits with a price
    by_group: dict[str, list[_Drug]] = defaultdict(list)
    for drug in drugs:
        by_group[drug.group_id].append(drug)
    groups: list[GroupRow] = []
    for gid, members in by_group.items():
        priced = [r for r in members if r.is_benefit and r.individual_price is not None]
        low = min(
            (r.individual_price for r in priced if r.individual_price is not None), default=None
        )
        lowest = sorted(r.din for r in priced if r.individual_price == low)
        for r in members:
            r.row["lowest_cost"] = low is not None and r.din in lowest
        atcs = sorted({r.atc_code for r in members if r.atc_code})
        classes = sorted({r.atc_class for r in members if r.atc_class})
        g: GroupRow = {
            **group_meta[gid],
            "n_drugs": len(members),
            "n_benefit": sum(1 for r in members if r.is_benefit),
            "lowest_price": low,
            "lowest_cost_din": lowest[0] if lowest else "",
            "n_lowest_cost": len(lowest),
            "atc_code": ";".join(atcs),
            "atc_class": ";".join(classes),
        }
        groups.append(g)

    lu_rows: list[LuRow] = []
    for code in lu_text:
        periods = sorted(
            set(lu_periods.get(code, [])), key=lambda p: (p[1] is None, p[1] or 0, p[0])
        )
        lu_rows.append(
            {
                "lu_code": code,
                "dins": ";".join(sorted(set(lu_dins[code]))),
                "group_ids": ";".join(sorted(lu_groups[code])),
                "generic_names": ";".join(sorted(lu_generic[code])),
                "n_dins": len(set(lu_dins[code])),
                "indication": summarise(lu_text[code], max_words=20),
                "period": ";".join(p[0] for p in periods),
                "period_days": periods[0][1] if len(periods) == 1 and periods[0][1] else None,
            }
        )

    drugs.sort(key=lambda r: r.din)
    groups.sort(key=lambda g: (len(g["group_id"]), g["group_id"]))
    lu_rows.sort(key=lambda r: (len(r["lu_code"]), r["lu_code"]))
    meta: OdbMeta = {
        "create_date": root.get("createDate") or formulary.get("createDate") or "",
        "formulary_date": formulary.get("formularyDate", ""),
        "edition": formulary.get("edition", ""),
        "update_version": formulary.get("updateVer", ""),
        "n_manufacturers": len(manufacturers),
    }
    return OdbResult(
        [d.row for d in drugs],
        groups,
        lu_rows,
        meta,
        notes.rows(),
        flag_columns=flag_cols + sorted(extra),
    )


def drug_columns(result: OdbResult) -> list[str]:
    return DRUG_COLUMNS + result.flag_columns + list(VALUE_COLUMNS.values())
