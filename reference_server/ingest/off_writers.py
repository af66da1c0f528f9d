"""How corpus/off files are written: deterministic CSV and JSONL (UTF-8, '\\n' line ends, rows
in the order given, booleans as 1/0, floats rounded to 4 places, lists joined by ';', empty = missing).

Kept apart from `off_cli.py`, which decides what goes in each file, so the byte format of the
corpus is stated once.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import act, adp_descriptive, adp_exclusions, adp_funding, odb_notes, odb_shapes, ohip_shapes
from .adp_manual_text import AdpSection


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(round(v, 4)) if not v.is_integer() else f"{v:.1f}"
    if isinstance(v, (list, tuple)):
        return ";".join(_cell(x) for x in v)
    return str(v)


# Every row kind written to a corpus CSV file.
CsvRow = (
    odb_shapes.DrugRow
    | odb_shapes.GroupRow
    | odb_shapes.LuRow
    | odb_notes.NoteRow
    | ohip_shapes.FeeRow
    | ohip_shapes.DroppedRow
    | ohip_shapes.SubsectionRow
    | adp_funding.FundingRow
    | adp_exclusions.ExclusionRow
    | adp_descriptive.DescriptiveRow
    | act.ActRow
)


def write_csv(path: Path, columns: list[str], rows: Sequence[CsvRow]) -> int:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in columns])
    return len(rows)


def write_jsonl(path: Path, rows: list[AdpSection]) -> int:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    return len(rows)
