"""`ocm ingest off`: rebuild corpus/off from the official files.

Runs each Dr. OFF ingester on whichever inputs exist, writes compact deterministic CSV/JSONL
(UTF-8, '\\n' line ends, stable row order, booleans as 1/0, empty = missing) and records per
output file its source, edition, row counts and what was dropped in `MANIFEST.json`.
Hand-written files in the same folder (`*_commentary.yaml`, `drug_classes.yaml`,
`adp_cep.yaml`) are never touched; they are only listed in the manifest and, for the OHIP
commentary, checked against the fee schedule (every code it mentions must exist).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import NotRequired, TypedDict

import yaml

from ocm_common.json_types import JsonObject

from . import (
    act,
    adp,
    adp_descriptive,
    adp_exclusions,
    adp_funding,
    dpd,
    odb,
    odb_notes,
    odb_shapes,
    ohip,
    ohip_shapes,
)
from .off_writers import write_csv, write_jsonl

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "reference_server" / "corpus" / "off"
HAND_WRITTEN = {
    "drug_classes.yaml": "Drug class -> ATC prefixes and synonyms, written by hand for odb.get class queries.",
    "ohip_commentary.yaml": "Billing commentary in our own words; fees quoted from ohip_fee_schedule.csv.",
    "adp_cep.yaml": "CEP income thresholds from the project specification, written by hand.",
    "odb_policy.yaml": "How ODB interchangeability, lowest cost and Limited Use work, in our own words.",
}


class CommentaryChunk(TypedDict, total=False):
    """One chunk of `ohip_commentary.yaml` (corpus/FORMAT.md): the keys the check reads."""

    id: str
    title: str
    codes: list[str]
    section: str
    text: str


class CommentaryCheck(TypedDict):
    unknown_codes: list[str]
    fee_mismatches: list[str]


class HandWrittenEntry(TypedDict):
    """The manifest entry of a hand-written corpus file."""

    source: str
    notes: str
    rows_out: NotRequired[int]
    unknown_codes: NotRequired[list[str]]
    fee_mismatches: NotRequired[list[str]]


class OffManifest(TypedDict, total=False):
    """corpus/off/MANIFEST.json: what wrote it, its rules, and one note per file written (a
    source file's counts and provenance as JSON, or a hand-written file's entry)."""

    files: dict[str, JsonObject | HandWrittenEntry]
    generated_by: str
    rules: str


def _first(folder: Path, pattern: str) -> Path | None:
    hits = sorted(folder.glob(pattern)) if folder.is_dir() else []
    return hits[-1] if hits else None


def run(args: argparse.Namespace) -> OffManifest:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "MANIFEST.json"
    manifest: OffManifest = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    )
    files = manifest.setdefault("files", {})
    manifest["generated_by"] = "ocm ingest off"
    manifest["rules"] = (
        "Facts only (codes, fees, DINs, prices, groups, dates, names, thresholds, percentages). "
        "Prose fields are re-expressed by reference_server/ingest/textrules.py; no 8-word run "
        "of a source text is kept."
    )

    atc: dict[str, dpd.AtcInfo] = {}
    if args.dpd and args.dpd.exists():
        atc, dpd_counts = dpd.load_atc(args.dpd)
        print(f"dpd: {len(atc)} DINs with ATC codes from {args.dpd.name}")
        dpd_note = {
            "file": args.dpd.name,
            "date": dpd.source_date(args.dpd),
            **dpd_counts,
            "dins_with_atc": len(atc),
        }
    else:
        dpd_note = None

    if args.odb and args.odb.exists():
        res = odb.parse(args.odb, atc)
        src_odb = {
            "source": f"odb/{args.odb.name}",
            "publisher": "Ontario Ministry of Health",
            "create_date": res.meta["create_date"],
            "formulary_date": res.meta["formulary_date"],
            "edition": res.meta["edition"],
            "update_version": res.meta["update_version"],
        }
        n = write_csv(out / "odb_drugs.csv", odb.drug_columns(res), res.drugs)
        matched = sum(1 for d in res.drugs if d["atc_code"])
        files["odb_drugs.csv"] = {
            **src_odb,
            "joined_with": dpd_note,
            "rows_in": len(res.drugs),
            "rows_out": n,
            "dpd_matched": matched,
            "dpd_unmatched": n - matched,
            "dropped": {},
            "notes": "One row per <drug>. atc_code/atc_class empty when the DIN/PIN is not in the DPD "
            "marketed extract. lowest_cost = benefit drug at the group's minimum individual_price.",
        }
        n = write_csv(out / "odb_interchangeable_groups.csv", odb_shapes.GROUP_COLUMNS, res.groups)
        files["odb_interchangeable_groups.csv"] = {
            **src_odb,
            "rows_in": n,
            "rows_out": n,
            "dropped": {},
            "groups_without_itemNumber": sum(
                1 for g in res.groups if g["group_id"] == g["pcg9_id"]
            ),
            "groups_without_priced_benefit": sum(1 for g in res.groups if not g["lowest_cost_din"]),
            "notes": "One row per <pcg9>; group_id = itemNumber, else the pcg9 id.",
        }
        n = write_csv(out / "odb_lu_codes.csv", odb_shapes.LU_COLUMNS, res.lu_codes)
        files["odb_lu_codes.csv"] = {
            **src_odb,
            "rows_in": n,
            "rows_out": n,
            "dropped": {"criteria_text": "not copied; see indication rule"},
            "notes": "indication = textrules.summarise(first clause of the criteria, 20 words); "
            "period from the 'LU Authorization Period' note.",
        }
        n = write_csv(out / "odb_notes.csv", odb_notes.NOTE_COLUMNS, res.notes)
        files["odb_notes.csv"] = {
            **src_odb,
            "rows_in": n,
            "rows_out": n,
            "dropped": {"note_text": "not copied; see summary rule"},
            "notes": "One row per distinct <note> text (any level: drug, group, ingredient, "
            "subclass) with the DINs, groups and ingredients under it; summary = "
            "textrules.summarise(note, 30 words).",
        }
        print(
            f"odb: {len(res.drugs)} drugs, {len(res.groups)} groups, {len(res.lu_codes)} LU codes, "
            f"{len(res.notes)} product notes"
        )

    if args.ohip_dir and args.ohip_dir.is_dir():
        paths = sorted(args.ohip_dir.glob("section_*_extracted.json"))
        res_o = ohip.load(paths)
        src_ohip: JsonObject = {
            "source": [f"ohip/{p.name}" for p in paths],
            "schedule_pdf": list(res_o.meta["source_pdf"]),
            "edition": res_o.meta["edition"],
        }
        n = write_csv(out / "ohip_fee_schedule.csv", ohip_shapes.FEE_COLUMNS, res_o.rows)
        reasons: Counter[str] = Counter()
        for d in res_o.dropped:
            reasons[d["reason"]] += d["n_rows"]
        files["ohip_fee_schedule.csv"] = {
            **src_ohip,
            "rows_in": res_o.meta["rows_in"],
            "unique_codes_in": res_o.meta["unique_codes_in"],
            "rows_out": n,
            "unique_codes_out": len({r["code"] for r in res_o.rows}),
            "codes_with_fee_conflict": len({r["code"] for r in res_o.rows if r["conflict_group"]}),
            "dropped": dict(sorted(reasons.items())),
            "notes": "One row per (code, fee); details of dropped rows in ohip_dropped.csv.",
        }
        n = write_csv(out / "ohip_dropped.csv", ohip_shapes.DROPPED_COLUMNS, res_o.dropped)
        files["ohip_dropped.csv"] = {
            **src_ohip,
            "rows_in": sum(reasons.values()),
            "rows_out": n,
            "dropped": {},
            "notes": "Aggregated per (code, raw fee, reason).",
        }
        n = write_csv(
            out / "ohip_subsections.csv", ohip_shapes.SUBSECTION_COLUMNS, res_o.subsections
        )
        files["ohip_subsections.csv"] = {
            **src_ohip,
            "rows_in": n,
            "rows_out": n,
            "dropped": {},
            "notes": "Distinct (section, page_ref, title) with fee rows; "
            "plausible_pages = page span <= 100.",
        }
        print(
            f"ohip: {res_o.meta['rows_in']} rows -> {len(res_o.rows)} canonical, {sum(reasons.values())} dropped"
        )

    if args.adp_dir and args.adp_dir.is_dir() and (args.adp_dir / "adp_extraction.json").exists():
        res_a = adp.load(
            args.adp_dir / "adp_extraction.json",
            args.adp_dir / "adp_funding_rule.csv",
            args.adp_dir / "adp_exclusion.csv",
        )
        src_adp: JsonObject = {
            "source": [
                "adp/adp_extraction.json",
                "adp/adp_funding_rule.csv",
                "adp/adp_exclusion.csv",
            ],
            "extraction_date": res_a.meta["extraction_date"],
            "manuals": {doc: list(names) for doc, names in res_a.meta["manuals"].items()},
        }
        n = write_csv(out / "adp_funding_rule.csv", adp_funding.FUNDING_COLUMNS, res_a.funding)
        files["adp_funding_rule.csv"] = {
            **src_adp,
            "rows_in": {
                "csv_rows": res_a.counts.get("csv_funding_rows", 0),
                "extraction_items": res_a.counts.get("plain_funding_items", 0)
                + res_a.counts.get("llm_funding_items", 0),
                "sections": res_a.meta["sections_in"],
            },
            "rows_out": n,
            "dropped": {
                "llm_extracted_items_not_used": res_a.counts.get("llm_funding_items", 0),
                "of_which_percent_found_in_section_text": res_a.counts.get(
                    "llm_funding_items_percent_in_text", 0
                ),
                "source_rows_without_a_share_amount_or_no_funding_statement": "not turned into rules",
            },
            "notes": "Rules re-derived by pattern from manual text, plain extraction items and the CSV details.",
        }
        n = write_csv(out / "adp_exclusion.csv", adp_exclusions.EXCLUSION_COLUMNS, res_a.exclusions)
        files["adp_exclusion.csv"] = {
            **src_adp,
            "rows_in": {
                "csv_rows": res_a.counts.get("csv_exclusion_rows", 0),
                "llm_extracted_items": res_a.counts.get("llm_exclusion_items", 0),
            },
            "rows_out": n,
            "dropped": {
                "llm_extracted_items_not_used": res_a.counts.get("llm_exclusion_items", 0),
                "csv_rows_unmapped": res_a.counts.get("csv_exclusion_rows_unmapped", 0),
            },
            "notes": "Fixed exclusion vocabulary matched in not-funded contexts, plus the CSV rows "
            "(merged on adp_doc, section, exclusion).",
        }
        n = write_csv(
            out / "adp_descriptive_rule.csv", adp_descriptive.DESCRIPTIVE_COLUMNS, res_a.descriptive
        )
        files["adp_descriptive_rule.csv"] = {
            **src_adp,
            "rows_in": {"csv_rows": res_a.counts.get("csv_funding_rows", 0)},
            "rows_out": n,
            "dropped": {
                "csv_rows_without_a_topic": res_a.counts.get("csv_rows_without_a_topic", 0),
            },
            "notes": "Rows of the official rule table that say who does what (equipment pool, "
            "leases, suppliers, repairs, service agreements, social-assistance co-payment): one "
            "sentence per topic in our own words; source_rule is the official rule_id.",
        }
        n = write_jsonl(out / "adp_sections.jsonl", res_a.sections)
        files["adp_sections.jsonl"] = {
            **src_adp,
            "rows_in": res_a.meta["sections_in"],
            "rows_out": n,
            "dropped": {},
            "toc_fragments": sum(1 for s in res_a.sections if s["kind"] == "toc"),
            "notes": "Duplicate policy_uids get -2, -3 suffixes in id; summaries via textrules.summarise.",
        }
        print(
            f"adp: {len(res_a.funding)} funding rules, {len(res_a.exclusions)} exclusions, {len(res_a.sections)} sections"
        )

    if args.act_dir and args.act_dir.is_dir():
        res_c = act.load(args.act_dir)
        for table, rows in res_c.tables.items():
            n = write_csv(out / f"{table}.csv", res_c.columns[table], rows)
            files[f"{table}.csv"] = {
                "source": f"ohip_act/{table}.csv",
                "source_note": "rules extracted from the Health Insurance Act and Reg. 552",
                "extracted": list(res_c.meta["extracted"]),
                "rows_in": res_c.meta["rows_in"].get(table, 0),
                "rows_out": n,
                "dropped": {
                    "created_at": "column not kept",
                    "prose": "re-expressed (textrules.summarise)",
                },
            }
        print(f"act: {', '.join(f'{k}={len(v)}' for k, v in res_c.tables.items())}")

    for name, note in HAND_WRITTEN.items():
        p = out / name
        if not p.exists():
            continue
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        entry: HandWrittenEntry = {"source": "hand-written (own words)", "notes": note}
        if name in ("ohip_commentary.yaml", "odb_policy.yaml"):
            chunks = data.get("chunks", []) if isinstance(data, dict) else []
            entry["rows_out"] = len(chunks)
            if name == "ohip_commentary.yaml":
                check = check_commentary(chunks, out / "ohip_fee_schedule.csv")
                entry["unknown_codes"] = check["unknown_codes"]
                entry["fee_mismatches"] = check["fee_mismatches"]
        elif name == "drug_classes.yaml":
            entry["rows_out"] = len((data or {}).get("classes", {}))
        else:
            entry["rows_out"] = len(data or {})
        files[name] = entry

    manifest["files"] = dict(sorted(files.items()))
    manifest_path.write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return manifest


def check_commentary(chunks: list[CommentaryChunk], schedule: Path) -> CommentaryCheck:
    """Codes the commentary names that the fee schedule lacks, and quoted fees ('A135
    (164.90)') that differ from every fee the schedule gives for that code."""
    if not schedule.exists():
        return {"unknown_codes": [], "fee_mismatches": []}
    fees: dict[str, set[float]] = {}
    with schedule.open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            fees.setdefault(r["code"], set())
            if r["fee"]:
                fees[r["code"]].add(round(float(r["fee"]), 2))
    missing: set[str] = set()
    mismatches: set[str] = set()
    for ch in chunks:
        text = ch.get("text", "")
        for code in [*ch.get("codes", []), *re.findall(r"\b[A-Z]\d{3}[A-Z]?\b", text)]:
            if code not in fees:
                missing.add(code)
        for code, amount in re.findall(r"\b([A-Z]\d{3}[A-Z]?)\b[^()]{0,40}?\((\d+\.\d{2})", text):
            if code in fees and round(float(amount), 2) not in fees[code]:
                mismatches.add(f"{ch.get('id')}:{code}={amount}")
    if missing or mismatches:
        print(
            f"warning: commentary codes not in schedule {sorted(missing)}; fee mismatches "
            f"{sorted(mismatches)}",
            file=sys.stderr,
        )
    return {"unknown_codes": sorted(missing), "fee_mismatches": sorted(mismatches)}


def build_parser(p: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    p = p or argparse.ArgumentParser(prog="ocm ingest off")
    p.description = "Rebuild reference_server/corpus/off from the official Dr. OFF source files."
    p.add_argument(
        "--odb",
        type=Path,
        default=_first(SHARED / "odb", "odb-formulary-extract-*.xml"),
        help="ODB formulary XML extract",
    )
    p.add_argument(
        "--dpd",
        type=Path,
        default=_first(SHARED / "dpd", "dpd-*allfiles*.zip"),
        help="Health Canada DPD all-files zip (for ATC codes)",
    )
    p.add_argument(
        "--ohip-dir",
        type=Path,
        default=SHARED / "ohip",
        help="folder with section_*_extracted.json",
    )
    p.add_argument(
        "--adp-dir",
        type=Path,
        default=SHARED / "adp",
        help="folder with adp_extraction.json and the ADP rule CSVs",
    )
    p.add_argument(
        "--act-dir",
        type=Path,
        default=SHARED / "ohip_act",
        help="folder with the Health Insurance Act act_*.csv files",
    )
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (corpus/off)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run(args)
    return 0
