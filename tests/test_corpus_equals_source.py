"""The committed corpus equals the official files it was derived from.

Two ways: the project's ingestion, re-run on ``../shared/data``, writes the committed files byte
for byte (the corpus is not stale or hand-edited); and an independent reading of the official
formulary and fee schedule, written here without the ingestion code, finds the same facts for
every DIN and every fee code (the ingestion does not misread them). Both need the official
files, which are not part of the repository: without them the tests skip and say so.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reference_server.ingest import off_cli

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "reference_server" / "corpus" / "off"
SHARED = REPO.parent / "shared" / "data"
ODB_XML = sorted((SHARED / "odb").glob("odb-formulary-extract-*.xml")) if SHARED.is_dir() else []
OHIP_JSON = sorted((SHARED / "ohip").glob("section_*_extracted.json")) if SHARED.is_dir() else []

CODE = r"[A-Z]{1,2}\d{3}[A-Z]?"

needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"the official source files are not beside the project ({SHARED} is absent); "
    "the corpus cannot be re-derived here",
)


def _rows(name: str) -> list[dict[str, str]]:
    with (CORPUS / name).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@needs_shared
def test_ingestion_rewrites_the_committed_corpus(tmp_path: Path) -> None:
    assert off_cli.main(["--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".csv", ".jsonl"))
    assert written, "ingestion wrote nothing"
    differ = [
        name for name in written if (tmp_path / name).read_bytes() != (CORPUS / name).read_bytes()
    ]
    assert not differ, (
        f"corpus files differ from a fresh ingestion of {SHARED}: {differ}; run "
        "`ocm ingest off` and review the diff"
    )


@needs_shared
@pytest.mark.skipif(not ODB_XML, reason="no ODB formulary extract in ../shared/data/odb")
def test_every_din_matches_the_formulary_extract() -> None:
    official: dict[str, dict[str, object]] = {}
    for pcg9 in ET.parse(ODB_XML[-1]).getroot().iter("pcg9"):
        strength = (pcg9.findtext("strength") or "").strip()
        form = (pcg9.findtext("dosageForm") or "").strip()
        for drug in pcg9.iter("drug"):
            price = drug.findtext("individualPrice")
            official[drug.get("id", "")] = {
                "brand_name": (drug.findtext("name") or "").strip(),
                "strength": strength,
                "dosage_form": form,
                "is_benefit": drug.get("notABenefit") != "Y",
                "individual_price": round(float(price), 4) if price else None,
            }
    corpus = {row["din"]: row for row in _rows("odb_drugs.csv")}
    assert set(corpus) == set(official), "DINs differ between the corpus and the extract"
    wrong = []
    for din, fact in official.items():
        row = corpus[din]
        got = {
            "brand_name": row["brand_name"],
            "strength": row["strength"],
            "dosage_form": row["dosage_form"],
            "is_benefit": row["is_benefit"] == "1",
            "individual_price": round(float(row["individual_price"]), 4)
            if row["individual_price"]
            else None,
        }
        if got != fact:
            wrong.append((din, {k: (got[k], v) for k, v in fact.items() if got[k] != v}))
    assert not wrong, f"{len(wrong)} DINs differ (corpus, extract): {wrong[:5]}"
    assert len(official) >= 8000


@needs_shared
@pytest.mark.skipif(not OHIP_JSON, reason="no OHIP schedule extraction in ../shared/data/ohip")
def test_every_fee_code_is_in_the_corpus_with_a_fee_the_schedule_lists() -> None:
    fees: dict[str, set[float]] = {}
    for path in OHIP_JSON:
        for sub in json.loads(path.read_text(encoding="utf-8")).get("subsections", []):
            for entry in sub.get("fee_codes") or []:
                code = str(entry.get("code") or "").strip().upper()
                if not code:
                    continue
                fee = entry.get("fee")
                listed = fees.setdefault(code, set())
                if isinstance(fee, int | float):
                    listed.add(round(float(fee), 2))
    corpus = {row["code"].upper(): row for row in _rows("ohip_fee_schedule.csv")}
    # Codes that are not fee codes (the extraction's misreads) are dropped with a stated reason.
    malformed = {
        row["code"].upper()
        for row in _rows("ohip_dropped.csv")
        if row["reason"] == "malformed code" and not re.fullmatch(CODE, row["code"])
    }
    missing = sorted(set(fees) - set(corpus) - malformed)
    assert not missing, (
        f"{len(missing)} fee codes of the schedule are not in the corpus: {missing[:10]}"
    )
    assert len(corpus) >= 4400
    wrong = [
        (code, corpus[code]["fee"], sorted(listed))
        for code, listed in fees.items()
        if listed
        and corpus[code]["fee_kind"] == "flat"
        and round(float(corpus[code]["fee"]), 2) not in listed
    ]
    assert not wrong, f"{len(wrong)} codes carry a fee the schedule does not list: {wrong[:5]}"
