"""Health Canada Drug Product Database (DPD): DIN -> ATC code/class.

The ODB extract has no ATC codes, so drug-class questions ("which statins are covered?")
need the DPD. We read the official marketed-products zip as published (header-less CSV
files): `drug.txt` maps DRUG_CODE -> DIN (column 4) and `ther.txt` maps DRUG_CODE -> ATC
code and ATC name. Only those two files are needed.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class AtcInfo:
    din: str
    drug_code: str
    brand_name: str
    atc_code: str  # several distinct codes (combination products) are joined with ';'
    atc_class: str


def _rows(zf: zipfile.ZipFile, name: str) -> list[list[str]]:
    member = next((n for n in zf.namelist() if n.lower().endswith(name)), None)
    if member is None:
        raise FileNotFoundError(f"{name} not found in DPD zip")
    raw = zf.read(member)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # older DPD extracts are Latin-1
        text = raw.decode("latin-1")
    return list(csv.reader(io.StringIO(text)))


def source_date(path: Path) -> str:
    """Edition date from the official file name (dpd-...-YYYY-MM-DD.zip)."""
    m = re.search(r"(\d{4}-\d{2}-\d{2})", path.name)
    return m.group(1) if m else ""


def load_atc(path: Path) -> tuple[dict[str, AtcInfo], dict[str, int]]:
    """Return DIN -> AtcInfo plus input counts (drug rows, ther rows)."""
    with zipfile.ZipFile(path) as zf:
        drugs = _rows(zf, "drug.txt")
        ther = _rows(zf, "ther.txt")
    code_to_din: dict[str, tuple[str, str]] = {}
    for r in drugs:
        if len(r) > 4 and r[3].strip():
            code_to_din[r[0].strip()] = (r[3].strip().zfill(8), r[4].strip())
    atc: dict[str, list[tuple[str, str]]] = {}
    for r in ther:
        if len(r) < 3 or not r[1].strip():
            continue
        pair = (r[1].strip().upper(), r[2].strip())
        lst = atc.setdefault(r[0].strip(), [])
        if pair not in lst:
            lst.append(pair)
    out: dict[str, AtcInfo] = {}
    for code, (din, brand) in code_to_din.items():
        pairs = atc.get(code)
        if not pairs:
            continue
        info = AtcInfo(
            din=din,
            drug_code=code,
            brand_name=brand,
            atc_code=";".join(p[0] for p in pairs),
            atc_class=";".join(p[1] for p in pairs),
        )
        prev = out.get(din)
        if prev is None or int(code) > int(prev.drug_code):  # newest DPD record wins
            out[din] = info
    return out, {"drug_rows": len(drugs), "ther_rows": len(ther)}
