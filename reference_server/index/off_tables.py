"""The Dr. OFF tables of ohip.db: one table per corpus file (schedule.get, adp.get, odb.get and
coverage.answer query these) with indexes on the lookup keys, FTS5 tables for keyword search,
and `off_passages`, the SQL copy of every passage the vector store holds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reference_server.catalog import (
    FTS_TOKENIZER,
    OFF_PASSAGES_TABLE,
    OHIP_FEES_BM25,
    ohip_subsection_id,
)
from reference_server.index.bm25_impacts import write_impacts
from reference_server.index.off_corpus import (
    class_of,
    drug_classes,
    header,
    ohip_passage_parts,
    read_csv,
    read_jsonl,
    read_yaml,
)
from reference_server.index.off_vector_docs import vector_documents
from reference_server.index.types import VectorDoc

# table -> (csv file, {column: sql type}); columns not listed are TEXT
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "ohip_fee_schedule": (
        "ohip_fee_schedule.csv",
        {
            "fee": "REAL",
            "fee_percent": "REAL",
            "h_fee": "REAL",
            "p_fee": "REAL",
            "asst_fee": "REAL",
            "surg_fee": "REAL",
            "anae_fee": "REAL",
            "t_fee": "REAL",
            "subsection_n": "INTEGER",
            "n_source_rows": "INTEGER",
            "n_fee_variants": "INTEGER",
        },
    ),
    "ohip_subsections": (
        "ohip_subsections.csv",
        {
            "subsection_n": "INTEGER",
            "plausible_pages": "INTEGER",
            "n_source_rows": "INTEGER",
            "n_codes": "INTEGER",
        },
    ),
    "odb_drugs": (
        "odb_drugs.csv",
        {
            "individual_price": "REAL",
            "amount_mohltc_pays": "REAL",
            "daily_cost": "REAL",
            "is_benefit": "INTEGER",
            "lu_required": "INTEGER",
            "lowest_cost": "INTEGER",
            "not_a_benefit": "INTEGER",
            "sec3": "INTEGER",
            "sec3b": "INTEGER",
            "sec3b_eap": "INTEGER",
            "sec3c": "INTEGER",
            "sec9": "INTEGER",
            "sec12": "INTEGER",
            "chronic_use_med": "INTEGER",
            "ins_oh": "INTEGER",
            "self_med": "INTEGER",
            "ma_o": "INTEGER",
        },
    ),
    "odb_interchangeable_groups": (
        "odb_interchangeable_groups.csv",
        {
            "n_drugs": "INTEGER",
            "n_benefit": "INTEGER",
            "lowest_price": "REAL",
            "n_lowest_cost": "INTEGER",
        },
    ),
    "odb_lu_codes": ("odb_lu_codes.csv", {"period_days": "INTEGER", "n_dins": "INTEGER"}),
    "odb_notes": ("odb_notes.csv", {"n_dins": "INTEGER"}),
    "adp_funding_rule": (
        "adp_funding_rule.csv",
        {
            "page_num": "INTEGER",
            "client_share_percent": "REAL",
            "adp_share_percent": "REAL",
            "max_contribution": "REAL",
            "covered": "INTEGER",
        },
    ),
    "adp_exclusion": ("adp_exclusion.csv", {"page_num": "INTEGER"}),
    "adp_descriptive_rule": ("adp_descriptive_rule.csv", {"page_num": "INTEGER"}),
    "act_eligibility_rule": (
        "act_eligibility_rule.csv",
        {
            "rule_id": "INTEGER",
            "revoked": "INTEGER",
            "max_duration_months": "INTEGER",
            "repeatable": "INTEGER",
            "prior_presence_days": "INTEGER",
        },
    ),
    "act_health_card_rule": ("act_health_card_rule.csv", {"rule_id": "INTEGER"}),
    "act_status_extension": ("act_status_extension.csv", {"ext_id": "INTEGER"}),
    "act_dependant_carryover": (
        "act_dependant_carryover.csv",
        {"dep_id": "INTEGER", "prior_presence_days": "INTEGER"},
    ),
    "act_uninsured_reference": ("act_uninsured_reference.csv", {"ref_id": "INTEGER"}),
}
PRIMARY_KEYS = {
    "odb_drugs": "din",
    "odb_interchangeable_groups": "group_id",
    "odb_lu_codes": "lu_code",
    "odb_notes": "note_id",
    "ohip_subsections": "subsection_n",
    "adp_funding_rule": "rule_id",
    "adp_exclusion": "exclusion_id",
    "adp_descriptive_rule": "rule_id",
    "act_eligibility_rule": "rule_id",
    "act_health_card_rule": "rule_id",
}
INDEXES = [
    ("ohip_fee_schedule", "code"),
    ("ohip_fee_schedule", "section"),
    ("ohip_fee_schedule", "conflict_group"),
    ("odb_drugs", "group_id"),
    ("odb_drugs", "ingredient"),
    ("odb_drugs", "atc_code"),
    ("odb_drugs", "drug_class"),
    ("odb_drugs", "brand_name COLLATE NOCASE"),
    ("odb_interchangeable_groups", "ingredient"),
    ("odb_interchangeable_groups", "atc_code"),
    ("odb_drug_class", "atc_prefix"),
    ("adp_funding_rule", "adp_doc"),
    ("adp_funding_rule", "scenario"),
    ("adp_exclusion", "adp_doc"),
    ("adp_exclusion", "exclusion"),
    ("adp_descriptive_rule", "topic"),
    ("adp_sections", "adp_doc"),
    ("act_eligibility_rule", "section_ref"),
    ("act_eligibility_rule", "topic"),
]


def _convert(value: str | None, sql_type: str) -> Any:
    if value is None or value == "":
        return None
    if sql_type == "INTEGER":
        try:
            return int(float(value))
        except ValueError:
            return None
    if sql_type == "REAL":
        try:
            return float(value)
        except ValueError:
            return None
    return value


def _create_and_fill(
    conn: sqlite3.Connection,
    table: str,
    columns: list[str],
    types: dict[str, str],
    rows: Iterable[dict[str, Any]],
) -> int:
    pk = PRIMARY_KEYS.get(table)
    cols_sql = ", ".join(
        f'"{c}" {types.get(c, "TEXT")}{" PRIMARY KEY" if c == pk else ""}' for c in columns
    )
    conn.execute(f'CREATE TABLE "{table}" ({cols_sql})')
    placeholders = ", ".join("?" for _ in columns)
    n = 0
    batch = []
    for r in rows:
        batch.append(
            tuple(
                _convert(r.get(c), types.get(c, "TEXT"))
                if isinstance(r.get(c), (str, type(None)))
                else r.get(c)
                for c in columns
            )
        )
        n += 1
    conn.executemany(f'INSERT INTO "{table}" VALUES ({placeholders})', batch)
    return n


def build_sql(conn: sqlite3.Connection, corpus_dir: Path) -> dict[str, int]:
    """Create and fill the Dr. OFF tables; returns row counts per table."""
    counts: dict[str, int] = {}
    classes = drug_classes(corpus_dir)
    for table, (filename, types) in TABLES.items():
        rows: list[dict[str, Any]] = read_csv(corpus_dir / filename)
        columns = list(rows[0].keys()) if rows else header(corpus_dir / filename)
        if table == "ohip_fee_schedule":
            columns = [*columns, "chunk_id"]
            for n, parts in ohip_passage_parts(rows).items():
                for p, part in enumerate(parts, 1):
                    for r in part:
                        r["chunk_id"] = ohip_subsection_id(n, p)
        if table == "odb_drugs":
            columns = [*columns, "drug_class"]
            for r in rows:
                r["drug_class"] = class_of(r.get("atc_code", ""), classes)
        if table == "odb_interchangeable_groups":
            columns = [*columns, "drug_class"]
            for r in rows:
                r["drug_class"] = class_of(r.get("atc_code", ""), classes)
        if not columns:
            continue
        counts[table] = _create_and_fill(conn, table, columns, types, rows)

    # drug classes (hand-written)
    conn.execute(
        "CREATE TABLE odb_drug_class (class_name TEXT NOT NULL, label TEXT, atc_prefix TEXT NOT NULL, "
        "synonyms TEXT, PRIMARY KEY (class_name, atc_prefix))"
    )
    conn.executemany("INSERT INTO odb_drug_class VALUES (?,?,?,?)", classes)
    counts["odb_drug_class"] = len(classes)

    # ADP manual sections (JSONL) and CEP thresholds (hand-written)
    sections = read_jsonl(corpus_dir / "adp_sections.jsonl")
    conn.execute(
        "CREATE TABLE adp_sections (id TEXT PRIMARY KEY, policy_uid TEXT, adp_doc TEXT, "
        "device_category TEXT, manual TEXT, part TEXT, section_ref TEXT, heading TEXT, "
        "page_num INTEGER, topics TEXT, percentages TEXT, amounts TEXT, exclusions TEXT, "
        "kind TEXT, summary TEXT)"
    )
    conn.executemany(
        "INSERT INTO adp_sections VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                s["id"],
                s.get("policy_uid"),
                s.get("adp_doc"),
                s.get("device_category"),
                s.get("manual"),
                s.get("part"),
                s.get("section_ref"),
                s.get("heading"),
                s.get("page_num"),
                ";".join(s.get("topics") or []),
                ";".join(str(p) for p in s.get("percentages") or []),
                ";".join(s.get("amounts") or []),
                ";".join(s.get("exclusions") or []),
                s.get("kind"),
                s.get("summary"),
            )
            for s in sections
        ],
    )
    counts["adp_sections"] = len(sections)
    cep = read_yaml(corpus_dir / "adp_cep.yaml") or {}
    conn.execute(
        "CREATE TABLE adp_cep_threshold (household TEXT PRIMARY KEY, income_threshold REAL NOT NULL, "
        "client_share_percent_if_eligible REAL, source TEXT)"
    )
    thresholds = cep.get("thresholds") or {}
    conn.executemany(
        "INSERT INTO adp_cep_threshold VALUES (?,?,?,?)",
        [
            (k, float(v), cep.get("client_share_percent_if_eligible"), cep.get("source"))
            for k, v in sorted(thresholds.items())
        ],
    )
    counts["adp_cep_threshold"] = len(thresholds)

    # OHIP commentary (hand-written)
    commentary = (read_yaml(corpus_dir / "ohip_commentary.yaml") or {}).get("chunks") or []
    conn.execute(
        "CREATE TABLE ohip_commentary (id TEXT PRIMARY KEY, title TEXT NOT NULL, codes TEXT, "
        "section TEXT, text TEXT NOT NULL)"
    )
    conn.executemany(
        "INSERT INTO ohip_commentary VALUES (?,?,?,?,?)",
        [
            (
                c["id"],
                c["title"],
                ";".join(c.get("codes") or []),
                c.get("section"),
                c["text"].strip(),
            )
            for c in commentary
        ],
    )
    counts["ohip_commentary"] = len(commentary)

    # product notes by DIN (a note covers one product up to a whole therapeutic subclass)
    conn.execute("CREATE TABLE odb_note_din (note_id TEXT NOT NULL, din TEXT NOT NULL)")
    conn.executemany(
        "INSERT INTO odb_note_din VALUES (?,?)",
        [
            (n["note_id"], din)
            for n in read_csv(corpus_dir / "odb_notes.csv")
            for din in n["dins"].split(";")
            if din
        ],
    )
    conn.execute("CREATE INDEX idx_odb_note_din_din ON odb_note_din (din)")

    for table, column in INDEXES:
        if table in counts:
            name = f"idx_{table}_{column.split()[0]}"
            conn.execute(f'CREATE INDEX "{name}" ON "{table}" ({column})')

    # keyword search
    conn.execute(
        "CREATE VIRTUAL TABLE ohip_fee_fts USING fts5(code, description, requirements, "
        f"tokenize = '{FTS_TOKENIZER}')"
    )
    if "ohip_fee_schedule" in counts:
        conn.execute(
            "INSERT INTO ohip_fee_fts (rowid, code, description, requirements) "
            "SELECT rowid, code, coalesce(description, ''), "
            "trim(coalesce(requirements, '') || ' ' || coalesce(limits, '')) FROM ohip_fee_schedule"
        )
    conn.execute(
        "CREATE VIRTUAL TABLE odb_drugs_fts USING fts5(din, brand_name, generic_name, ingredient, "
        f"therapeutic_class, atc_class, tokenize = '{FTS_TOKENIZER}')"
    )
    if "odb_drugs" in counts:
        conn.execute(
            "INSERT INTO odb_drugs_fts (rowid, din, brand_name, generic_name, ingredient, "
            "therapeutic_class, atc_class) SELECT rowid, din, brand_name, generic_name, ingredient, "
            "therapeutic_class || ' ' || coalesce(therapeutic_subclass, ''), "
            "trim(coalesce(atc_class, '') || ' ' || replace(coalesce(drug_class, ''), ';', ' ')) "
            "FROM odb_drugs"
        )
    counts[OFF_PASSAGES_TABLE] = write_passages(conn, vector_documents(corpus_dir))
    counts["ohip_fee_fts"] = conn.execute("SELECT count(*) FROM ohip_fee_fts").fetchone()[0]
    counts["odb_drugs_fts"] = conn.execute("SELECT count(*) FROM odb_drugs_fts").fetchone()[0]
    write_impacts(conn, OHIP_FEES_BM25)
    return counts


def write_passages(conn: sqlite3.Connection, collections: dict[str, list[VectorDoc]]) -> int:
    """The SQL copy of every passage the vector store holds: same id, text and metadata, so
    source.passages shows any cited passage when Chroma is down and can compare both copies."""
    conn.execute(
        f"CREATE TABLE {OFF_PASSAGES_TABLE} (chunk_id TEXT PRIMARY KEY, collection TEXT NOT NULL, "
        "text TEXT NOT NULL, metadata TEXT NOT NULL)"
    )
    rows = [
        (d.id, name, d.text, json.dumps(d.metadata, sort_keys=True))
        for name, docs in collections.items()
        for d in docs
    ]
    conn.executemany(f"INSERT INTO {OFF_PASSAGES_TABLE} VALUES (?,?,?,?)", rows)
    return len(rows)
