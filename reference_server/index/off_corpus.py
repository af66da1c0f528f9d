"""The Dr. OFF corpus files (`corpus/off/`) read as rows, and the two derivations both the
tables and the passages use: a drug's class by ATC prefix, and the OHIP passage a fee row is in.

One copy of each derivation keeps a fee row's `chunk_id` and a product's `drug_class` in SQL
equal to what the passages built from the same rows say.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from reference_server.catalog import OHIP_CODES_PER_PASSAGE


def read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def read_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None


def header(path: Path) -> list[str]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh), [])


def drug_classes(corpus_dir: Path) -> list[tuple[str, str, str, str]]:
    """(class_name, label, atc_prefix, synonyms) rows from drug_classes.yaml, longest prefix first."""
    data = read_yaml(corpus_dir / "drug_classes.yaml") or {}
    rows = []
    for name, spec in (data.get("classes") or {}).items():
        syn = ";".join(spec.get("synonyms") or [])
        for prefix in [
            *(spec.get("atc_prefixes") or []),
            *(spec.get("combination_prefixes") or []),
        ]:
            rows.append((name, spec.get("label") or name, str(prefix).upper(), syn))
    return sorted(rows, key=lambda r: (-len(r[2]), r[2], r[0]))


def class_of(atc_codes: str, classes: list[tuple[str, str, str, str]]) -> str:
    """Drug class for a (possibly ';'-joined) ATC code: longest matching prefix wins."""
    found: list[str] = []
    for code in (atc_codes or "").split(";"):
        code = code.strip().upper()
        for name, _, prefix, _ in classes:
            if code and code.startswith(prefix):
                if name not in found:
                    found.append(name)
                break
    return ";".join(found)


def ohip_passage_parts(rows: list[dict[str, Any]]) -> dict[str, list[list[dict[str, Any]]]]:
    """Fee rows by subsection, cut into passages of at most OHIP_CODES_PER_PASSAGE codes.

    One function for both the passages (vector documents) and each fee row's `chunk_id`, so a
    fee citation names the passage that lists it.
    """
    by_sub: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get("subsection_n"):
            by_sub[str(r["subsection_n"])].append(r)
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for n in sorted(by_sub, key=int):
        members = sorted(by_sub[n], key=lambda r: (r["code"], r.get("fee") or ""))
        out[n] = [
            members[i : i + OHIP_CODES_PER_PASSAGE]
            for i in range(0, len(members), OHIP_CODES_PER_PASSAGE)
        ]
    return out
