"""Build the Dr. OFF tables (ohip.db) and vector documents from `corpus/off/`.

Everything comes from the committed corpus files written by `python -m reference_server.ingest
off` plus the hand-written YAML files; nothing under ../shared is read. SQL keeps one table per
corpus file (schedule.get, adp.get, odb.get and coverage.answer query these) with indexes on the
lookup keys and FTS5 tables for keyword search. Chroma gets three collections:
`ohip_chunks` (commentary + one document per schedule subsection), `adp_v1` (manual section
summaries + funding/exclusion rules) and `odb_documents` (one document per interchangeable
group, one per LU code, and the ODB policy notes).
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from reference_server.catalog import (
    ADP_CEP_ID,
    FTS_TOKENIZER,
    OFF_COLLECTIONS,
    OFF_PASSAGES_TABLE,
    OHIP_CODES_PER_PASSAGE,
    OHIP_FEES_BM25,
    adp_rule_id,
    odb_group_id,
    odb_lu_id,
    odb_note_id,
    odb_policy_id,
    ohip_commentary_id,
    ohip_line_extra,
    ohip_subsection_id,
)
from reference_server.index.bm25_impacts import write_impacts
from reference_server.index.types import MetaValue, VectorDoc

GROUP_DRUGS_PER_DOC = 30

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


# ---------------------------------------------------------------------------------- loading
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


# ---------------------------------------------------------------------------------- SQL
def build_sql(conn: sqlite3.Connection, corpus_dir: Path) -> dict[str, int]:
    """Create and fill the Dr. OFF tables; returns row counts per table."""
    counts: dict[str, int] = {}
    classes = drug_classes(corpus_dir)
    for table, (filename, types) in TABLES.items():
        rows: list[dict[str, Any]] = read_csv(corpus_dir / filename)
        columns = list(rows[0].keys()) if rows else _header(corpus_dir / filename)
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


def _header(path: Path) -> list[str]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return next(csv.reader(fh), [])


# ---------------------------------------------------------------------------------- vectors
def _meta(**kw: Any) -> dict[str, MetaValue]:
    """Chroma metadata: drop None/empty, join lists with ';', keep str/int/float/bool."""
    out: dict[str, MetaValue] = {}
    for k, v in kw.items():
        if v is None or v == "" or v == []:
            continue
        if isinstance(v, (list, tuple, set)):
            v = ";".join(str(x) for x in v)
        if not isinstance(v, (str, int, float, bool)):
            v = str(v)
        out[k] = v
    return out


_N = TypeVar("_N", int, float)


def _number(value: str | None, cast: Callable[[str], _N]) -> _N | None:
    """`cast(value)` for a filled CSV cell, None for an empty one."""
    return cast(value) if value else None


def _money(v: str | float | None) -> str:
    if v in (None, ""):
        return "n/a"
    return f"${float(v):,.2f}" if float(v) >= 1 else f"${float(v):.4f}"


def _fee_text(r: dict[str, str]) -> str:
    kind = r.get("fee_kind")
    if kind == "percent":
        return f"+{float(r['fee_percent']):g}% premium"
    if kind == "independent_consideration":
        return "independent consideration"
    if not r.get("fee"):
        return "fee not listed"
    suffix = {"per_unit": " per unit", "per_diem": " per diem", "add_on": " add-on"}.get(
        kind or "", ""
    )
    return f"${float(r['fee']):,.2f}{suffix}"


def ohip_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    mpath = corpus_dir / "MANIFEST.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8")) if mpath.exists() else {}
    edition = ((manifest.get("files") or {}).get("ohip_fee_schedule.csv") or {}).get("edition", "")
    for c in (read_yaml(corpus_dir / "ohip_commentary.yaml") or {}).get("chunks") or []:
        codes = c.get("codes") or []
        text = f"{c['title']}\nCodes: {', '.join(codes)}\n{c['text'].strip()}"
        docs.append(
            VectorDoc(
                id=ohip_commentary_id(c["id"]),
                text=text,
                metadata=_meta(
                    source="ohip_commentary",
                    doc_type="commentary",
                    title=c["title"],
                    codes=codes,
                    section=c.get("section"),
                    edition=edition,
                ),
            )
        )
    rows = read_csv(corpus_dir / "ohip_fee_schedule.csv")
    subs = {s["subsection_n"]: s for s in read_csv(corpus_dir / "ohip_subsections.csv")}
    for n, parts in ohip_passage_parts(rows).items():
        sub = subs.get(n, {})
        for p, chunk in enumerate(parts, 1):
            head = (
                f"OHIP Schedule of Benefits {edition}: section {sub.get('section', '')}, "
                f"{sub.get('subsection_title', '')} (page {sub.get('page_ref', '')})"
            )
            if len(parts) > 1:
                head += f", part {p} of {len(parts)}"
            lines = []
            for r in chunk:
                line = f"{r['code']} {r['description']}: {_fee_text(r)}"
                extra = ohip_line_extra(r.get("limits"), r.get("requirements"))
                if extra:
                    line += f" ({extra})"
                if r.get("conflict_group"):
                    line += " [fee differs between tables]"
                lines.append(line)
            pdf = (sub.get("pdf_pages") or "").split("-")[0]
            docs.append(
                VectorDoc(
                    id=ohip_subsection_id(n, p),
                    text=head + "\n" + "\n".join(lines),
                    metadata=_meta(
                        source="ohip_fee_schedule",
                        doc_type="subsection",
                        section=sub.get("section"),
                        subsection=sub.get("subsection_title"),
                        page=sub.get("page_ref"),
                        pdf_page=int(pdf) if pdf.isdigit() else None,
                        part=p,
                        n_parts=len(parts),
                        codes=[r["code"] for r in chunk],
                        n_codes=len(chunk),
                        edition=edition,
                    ),
                )
            )
    return docs


def adp_funding_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP funding rule (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP funding rule ({r['adp_doc']}, section {r['section_ref']}, {r['scenario']}): "
        f"{r['summary']}"
    )


def adp_exclusion_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP exclusion (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP exclusion ({r['adp_doc']}, section {r['section_ref']}): "
        f"{r['exclusion'].replace('_', ' ')}. {r['description']}"
    )


def adp_descriptive_text(r: Mapping[str, Any]) -> str:
    """Passage text of one ADP descriptive rule (source.passages rebuilds it from the SQL row)."""
    return (
        f"ADP rule ({r['adp_doc']}, section {r['section_ref']}, "
        f"{r['topic'].replace('_', ' ')}): {r['summary']}"
    )


def _adp_rule_meta(r: dict[str, str]) -> dict[str, Any]:
    """Where an ADP funding rule or exclusion stands: manual, category, section, page, policy."""
    return {
        "adp_doc": r["adp_doc"],
        "device_category": r["device_category"],
        "section": r["section_ref"],
        "page": _number(r.get("page_num"), int),
        "policy_uid": r["policy_uid"],
    }


def adp_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    funding = read_csv(corpus_dir / "adp_funding_rule.csv")
    excl = read_csv(corpus_dir / "adp_exclusion.csv")
    f_count: dict[str, int] = defaultdict(int)
    e_count: dict[str, int] = defaultdict(int)
    for r in funding:
        f_count[r["policy_uid"]] += 1
    for r in excl:
        e_count[r["policy_uid"]] += 1
    for s in read_jsonl(corpus_dir / "adp_sections.jsonl"):
        if s.get("kind") != "policy" or not s.get("summary"):
            continue
        facts = []
        if s.get("amounts"):
            facts.append("Amounts: " + ", ".join(s["amounts"]))
        if s.get("percentages"):
            facts.append("Percentages: " + ", ".join(f"{p}%" for p in s["percentages"]))
        if s.get("exclusions"):
            facts.append("Not funded: " + ", ".join(x.replace("_", " ") for x in s["exclusions"]))
        text = (
            f"ADP {s.get('manual') or s['adp_doc']} - section {s['section_ref']}"
            f" (page {s.get('page_num')}): {s.get('heading')}\n{s['summary']}"
        )
        if facts:
            text += "\n" + "; ".join(facts)
        docs.append(
            VectorDoc(
                id=s["id"],
                text=text,
                metadata=_meta(
                    source="adp_manual",
                    doc_type="section",
                    adp_doc=s["adp_doc"],
                    device_category=s.get("device_category"),
                    manual=s.get("manual"),
                    section=s["section_ref"],
                    part=s.get("part"),
                    page=s.get("page_num"),
                    policy_uid=s.get("policy_uid"),
                    heading=s.get("heading"),
                    topics=s.get("topics"),
                    funding_count=f_count.get(s["id"], 0),
                    exclusion_count=e_count.get(s["id"], 0),
                ),
            )
        )
    for r in funding:
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "funding", r["rule_id"]),
                text=adp_funding_text(r),
                metadata=_meta(
                    source="adp_funding_rule",
                    doc_type="funding_rule",
                    **_adp_rule_meta(r),
                    scenario=r["scenario"],
                    client_share_percent=_number(r.get("client_share_percent"), float),
                    adp_share_percent=_number(r.get("adp_share_percent"), float),
                    max_contribution=_number(r.get("max_contribution"), float),
                    covered=r.get("covered") == "1",
                    rule_id=r["rule_id"],
                ),
            )
        )
    for r in excl:
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "exclusion", r["exclusion_id"]),
                text=adp_exclusion_text(r),
                metadata=_meta(
                    source="adp_exclusion",
                    doc_type="exclusion",
                    **_adp_rule_meta(r),
                    exclusion=r["exclusion"],
                    exclusion_id=r["exclusion_id"],
                ),
            )
        )
    for r in read_csv(corpus_dir / "adp_descriptive_rule.csv"):
        docs.append(
            VectorDoc(
                id=adp_rule_id(r["adp_doc"], r["section_ref"], "descriptive", r["rule_id"]),
                text=adp_descriptive_text(r),
                metadata=_meta(
                    source="adp_descriptive_rule",
                    doc_type="descriptive_rule",
                    **_adp_rule_meta(r),
                    topic=r["topic"],
                    rule_id=r["rule_id"],
                ),
            )
        )
    cep = read_yaml(corpus_dir / "adp_cep.yaml")
    if cep:
        t = cep.get("thresholds") or {}
        docs.append(
            VectorDoc(
                id=ADP_CEP_ID,
                text=(
                    f"CEP income check: single ${t.get('single', 0):,}, family ${t.get('family', 0):,}. "
                    f"{cep.get('rule', '')}"
                ),
                metadata=_meta(
                    source="adp_cep",
                    doc_type="cep",
                    single=t.get("single"),
                    family=t.get("family"),
                    origin=cep.get("source"),
                ),
            )
        )
    return docs


def odb_documents(corpus_dir: Path) -> list[VectorDoc]:
    docs: list[VectorDoc] = []
    manifest = (
        json.loads((corpus_dir / "MANIFEST.json").read_text())
        if (corpus_dir / "MANIFEST.json").exists()
        else {}
    )
    odb_meta = (manifest.get("files") or {}).get("odb_drugs.csv") or {}
    edition = odb_meta.get("create_date", "")
    classes = drug_classes(corpus_dir)
    drugs = read_csv(corpus_dir / "odb_drugs.csv")
    by_group: dict[str, list[dict[str, str]]] = defaultdict(list)
    for d in drugs:
        by_group[d["group_id"]].append(d)
    lu_rows = {r["lu_code"]: r for r in read_csv(corpus_dir / "odb_lu_codes.csv")}
    for g in read_csv(corpus_dir / "odb_interchangeable_groups.csv"):
        members = sorted(
            by_group.get(g["group_id"], []),
            key=lambda d: (d["is_benefit"] != "1", float(d["individual_price"] or 1e9), d["din"]),
        )
        dclass = class_of(g.get("atc_code", ""), classes)
        lu = [c for c in (g.get("lu_codes") or "").split(";") if c]
        status = (
            "Limited Use benefit"
            if lu
            else ("general benefit" if g["n_benefit"] != "0" else "not a benefit")
        )
        # brand (usually the dearest product) first, so its name leads the document
        by_price = sorted(members, key=lambda d: -float(d["individual_price"] or 0))
        brands = list(dict.fromkeys(d["brand_name"] for d in by_price))
        alt = (
            f"{len(members)} interchangeable products (generic alternatives available)"
            if len(members) > 1
            else "single product, no interchangeable alternative"
        )
        head = (
            f"{', '.join(brands[:8])}{' ...' if len(brands) > 8 else ''} - {g['ingredient']} "
            f"{g['strength']} {g['dosage_form']}. ODB interchangeable group {g['group_id']}: "
            f"{g['generic_name']} ({g['therapeutic_class']}); {alt}. "
            f"ATC {g.get('atc_code') or 'n/a'}{' ' + g['atc_class'] if g.get('atc_class') else ''}"
            f"{'; class: ' + dclass if dclass else ''}. Coverage: {status}."
        )
        if g.get("lowest_cost_din"):
            low = next((d for d in members if d["din"] == g["lowest_cost_din"]), None)
            head += (
                f" Lowest cost: {low['brand_name'] if low else ''} DIN {g['lowest_cost_din']} at "
                f"{_money(g['lowest_price'])} per unit ({g['n_lowest_cost']} product(s) at that price)."
            )
        if lu:
            head += (
                " LU codes: "
                + "; ".join(
                    f"{c} ({lu_rows[c]['indication']}; period {lu_rows[c]['period'] or 'n/a'})"
                    if c in lu_rows
                    else c
                    for c in lu
                )
                + "."
            )
        lines = []
        for d in members[:GROUP_DRUGS_PER_DOC]:
            flags = []
            if d["is_benefit"] != "1":
                flags.append("not a benefit")
            if d["lowest_cost"] == "1":
                flags.append("lowest cost")
            pays = (
                f", ODB pays {_money(d['amount_mohltc_pays'])}"
                if d.get("amount_mohltc_pays")
                else ""
            )
            lines.append(
                f"- {d['brand_name']} (DIN {d['din']}, {d['manufacturer'] or d['manufacturer_id']}): "
                f"{_money(d['individual_price'])}{pays}{'; ' + ', '.join(flags) if flags else ''}"
            )
        if len(members) > GROUP_DRUGS_PER_DOC:
            lines.append(f"- ... and {len(members) - GROUP_DRUGS_PER_DOC} more products")
        docs.append(
            VectorDoc(
                id=odb_group_id(g["group_id"]),
                text=head + "\n" + "\n".join(lines),
                metadata=_meta(
                    source="odb_formulary",
                    doc_type="group",
                    group_id=g["group_id"],
                    generic_name=g["generic_name"],
                    ingredient=g["ingredient"],
                    strength=g["strength"],
                    dosage_form=g["dosage_form"],
                    therapeutic_class=g["therapeutic_class"],
                    atc_code=g.get("atc_code"),
                    drug_class=dclass,
                    dins=[d["din"] for d in members],
                    brands=sorted({d["brand_name"] for d in members}),
                    lowest_cost_din=g.get("lowest_cost_din"),
                    lowest_price=_number(g.get("lowest_price"), float),
                    lu_codes=lu,
                    lu_required=bool(lu),
                    n_drugs=int(g["n_drugs"]),
                    edition=edition,
                ),
            )
        )
    for code, r in lu_rows.items():
        text = (
            f"ODB Limited Use code {code} ({r['generic_names'].replace(';', ', ')}): "
            f"{r['indication']}. Authorization period: {r['period'] or 'not stated'}. "
            f"Applies to DIN(s) {r['dins'].replace(';', ', ')} (group {r['group_ids'].replace(';', ', ')})."
        )
        docs.append(
            VectorDoc(
                id=odb_lu_id(code),
                text=text,
                metadata=_meta(
                    source="odb_formulary",
                    doc_type="lu_code",
                    lu_code=code,
                    generic_names=r["generic_names"],
                    dins=r["dins"],
                    group_ids=r["group_ids"],
                    period=r["period"],
                    period_days=_number(r.get("period_days"), int),
                    edition=edition,
                ),
            )
        )
    for n in read_csv(corpus_dir / "odb_notes.csv"):
        ingredients = n["ingredients"].replace(";", ", ")
        docs.append(
            VectorDoc(
                id=odb_note_id(n["note_id"]),
                text=f"ODB formulary note on {ingredients} ({n['scope']}): {n['summary']}",
                metadata=_meta(
                    source="odb_formulary",
                    doc_type="note",
                    note_id=n["note_id"],
                    scope=n["scope"],
                    ingredients=n["ingredients"].split(";"),
                    group_ids=n["group_ids"].split(";"),
                    n_dins=_number(n.get("n_dins"), int),
                    edition=edition,
                ),
            )
        )
    for c in (read_yaml(corpus_dir / "odb_policy.yaml") or {}).get("chunks") or []:
        docs.append(
            VectorDoc(
                id=odb_policy_id(c["n"]),
                text=f"{c['title']}\n{c['text'].strip()}",
                metadata=_meta(
                    source="odb_policy", doc_type="policy", title=c["title"], topics=c.get("topics")
                ),
            )
        )
    return docs


def vector_documents(corpus_dir: Path) -> dict[str, list[VectorDoc]]:
    """The three Dr. OFF Chroma collections (names in `catalog.OFF_COLLECTIONS`)."""
    return {
        OFF_COLLECTIONS["ohip"]: ohip_documents(corpus_dir),
        OFF_COLLECTIONS["adp"]: adp_documents(corpus_dir),
        OFF_COLLECTIONS["odb"]: odb_documents(corpus_dir),
    }
