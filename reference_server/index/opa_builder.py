"""Build the OPA tables and vector documents from `corpus/opa/**/*.yaml`.

Each document's sections become parent chunks; each blank-line-separated paragraph of a
section becomes a child chunk. SQL gets every chunk plus an FTS5 keyword index over title,
heading, topics and text; Chroma gets the same chunks in one collection per organisation.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from reference_server.catalog import (
    FTS_TOKENIZER,
    OPA_COLLECTIONS,
    OPA_SECTIONS_BM25,
    SECTION_TAGS_COLUMN,
    section_tags,
)
from reference_server.index import provenance
from reference_server.index.bm25_impacts import write_impacts
from reference_server.index.types import VectorDoc
from reference_server.ingest.opa_cpso import section_level

COLLECTIONS = OPA_COLLECTIONS

SCHEMA = f"""
CREATE TABLE opa_documents (
  document_id TEXT PRIMARY KEY, source_org TEXT NOT NULL, document_type TEXT NOT NULL,
  title TEXT NOT NULL, source_url TEXT NOT NULL, policy_number TEXT,
  published_date TEXT, effective_date TEXT, updated_date TEXT, review_date TEXT,
  topics TEXT NOT NULL, is_superseded INTEGER NOT NULL, superseded_by TEXT, companion_of TEXT,
  program TEXT, tool TEXT, facts TEXT
);
CREATE TABLE opa_sections (
  section_id TEXT PRIMARY KEY, document_id TEXT NOT NULL REFERENCES opa_documents(document_id),
  parent_id TEXT, chunk_type TEXT NOT NULL, section_idx INTEGER NOT NULL, chunk_idx INTEGER,
  section_heading TEXT NOT NULL, text TEXT NOT NULL, policy_level TEXT, ipac TEXT,
  source_org TEXT NOT NULL, document_type TEXT NOT NULL, is_superseded INTEGER NOT NULL
);
CREATE INDEX idx_sections_doc ON opa_sections(document_id);
CREATE INDEX idx_sections_parent ON opa_sections(parent_id);
CREATE INDEX idx_sections_org ON opa_sections(source_org, is_superseded);
CREATE VIRTUAL TABLE opa_sections_fts USING fts5(
  section_id UNINDEXED, title, section_heading, topics, text, {SECTION_TAGS_COLUMN},
  tokenize = '{FTS_TOKENIZER}'
);
CREATE TABLE ingestion_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT, built_at TEXT NOT NULL, corpus_hash TEXT NOT NULL,
  documents INTEGER NOT NULL, sections INTEGER NOT NULL, embedder TEXT NOT NULL, notes TEXT
);
CREATE TABLE query_cache (
  cache_key TEXT PRIMARY KEY, tool TEXT NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL
);
"""


def load_documents(corpus_dir: Path) -> list[dict[str, Any]]:
    """All OPA documents, sorted by id; files under `_skeletons/` are drafts and skipped."""
    docs = []
    for path in sorted((corpus_dir / "opa").rglob("*.yaml")):
        if "_skeletons" in path.parts:
            continue
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if (
            not doc
            or not doc.get("sections")
            or not any((s.get("text") or "").strip() for s in doc["sections"])
        ):
            continue
        docs.append(provenance.resolve(doc))
    ids = [d["document_id"] for d in docs]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"duplicate document ids in corpus: {sorted(dupes)}")
    return sorted(docs, key=lambda d: d["document_id"])


def _str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def policy_level(doc: dict[str, Any], section: dict[str, Any]) -> str | None:
    """Every CPSO section gets a level, so a level filter never drops one for lack of it.

    The authored level wins; otherwise a section of an Advice to the Profession document is
    advice (CPSO's advice explains the policy and binds no one, even where it quotes a legal
    duty); otherwise a policy section is read for regulatory language ('must'/'shall' ->
    expectation, 'should'/'advised' -> advice), and a policy section with neither (definitions,
    appendices) is part of the policy's binding text, so an expectation. Other organisations
    keep what the corpus says (usually nothing).
    """
    authored = section.get("policy_level")
    if authored or doc["source_org"] != "cpso":
        return authored or None
    if doc["document_type"] == "advice":
        return "advice"
    return section_level(section.get("text") or "") or "expectation"


def kept_sections(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The sections with text, in order: section ``sNN`` is the NN-th of these."""
    return [s for s in doc["sections"] if (s.get("text") or "").strip()]


def stored_program(doc: dict[str, Any]) -> str:
    """The program block as JSON, each recommendation with the heading of the section it is
    written in, so an answer can cite the section by its public name ("" when none)."""
    program = doc.get("program")
    if not program:
        return ""
    headings = [s["heading"] for s in kept_sections(doc)]
    recs = []
    for rec in program.get("recommendations") or ():
        idx = int(rec.get("section") or 1)
        heading = headings[idx - 1] if 0 < idx <= len(headings) else None
        recs.append({**rec, "section_heading": heading})
    return json.dumps({**program, "recommendations": recs} if recs else program)


def chunks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Parent and child chunk rows for one document."""
    rows = []
    for idx, section in enumerate(kept_sections(doc), start=1):
        parent_id = f"{doc['document_id']}:s{idx:02d}"
        text = section["text"].strip()
        common = {
            "document_id": doc["document_id"],
            "section_idx": idx,
            "section_heading": section["heading"],
            "policy_level": policy_level(doc, section),
            "ipac": json.dumps(section["ipac"]) if section.get("ipac") else None,
        }
        rows.append(
            {
                **common,
                "section_id": parent_id,
                "parent_id": None,
                "chunk_type": "parent",
                "chunk_idx": None,
                "text": text,
            }
        )
        paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
        if len(paragraphs) > 1:
            for j, para in enumerate(paragraphs, start=1):
                rows.append(
                    {
                        **common,
                        "section_id": f"{parent_id}:c{j}",
                        "parent_id": parent_id,
                        "chunk_type": "child",
                        "chunk_idx": j,
                        "text": para,
                    }
                )
    return rows


def build_sql(conn: sqlite3.Connection, corpus_dir: Path) -> dict[str, int]:
    conn.executescript(SCHEMA)
    n_docs = n_sections = 0
    for doc in load_documents(corpus_dir):
        superseded = int(bool(doc.get("is_superseded")))
        conn.execute(
            "INSERT INTO opa_documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                doc["document_id"],
                doc["source_org"],
                doc["document_type"],
                doc["title"],
                doc["source_url"],
                _str(doc.get("policy_number")),
                _str(doc.get("published_date")),
                _str(doc.get("effective_date")),
                _str(doc.get("updated_date")),
                _str(doc.get("review_date")),
                json.dumps(doc.get("topics") or []),
                superseded,
                _str(doc.get("superseded_by")),
                _str(doc.get("companion_of")),
                stored_program(doc) or None,
                json.dumps(doc["tool"]) if doc.get("tool") else None,
                json.dumps(doc["facts"]) if doc.get("facts") is not None else None,
            ),
        )
        n_docs += 1
        topics = " ".join(doc.get("topics") or [])
        for row in chunks(doc):
            inserted = conn.execute(
                "INSERT INTO opa_sections VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row["section_id"],
                    row["document_id"],
                    row["parent_id"],
                    row["chunk_type"],
                    row["section_idx"],
                    row["chunk_idx"],
                    row["section_heading"],
                    row["text"],
                    row["policy_level"],
                    row["ipac"],
                    doc["source_org"],
                    doc["document_type"],
                    superseded,
                ),
            )
            # Same rowid as the section row: the keyword search ranks on the FTS row alone
            # (filters are its tags) and reads the section by rowid for the top rows only.
            conn.execute(
                f"INSERT INTO opa_sections_fts(rowid, section_id, title, section_heading, topics,"
                f" text, {SECTION_TAGS_COLUMN}) VALUES (?,?,?,?,?,?,?)",
                (
                    inserted.lastrowid,
                    row["section_id"],
                    doc["title"],
                    row["section_heading"],
                    topics,
                    row["text"],
                    section_tags(
                        doc["source_org"],
                        doc["document_type"],
                        row["chunk_type"],
                        row["policy_level"],
                        bool(superseded),
                    ),
                ),
            )
            n_sections += 1
    write_impacts(conn, OPA_SECTIONS_BM25)
    return {"opa_documents": n_docs, "opa_sections": n_sections}


def vector_documents(corpus_dir: Path) -> dict[str, list[VectorDoc]]:
    out: dict[str, list[VectorDoc]] = {name: [] for name in COLLECTIONS.values()}
    for doc in load_documents(corpus_dir):
        for row in chunks(doc):
            # Embed the heading with the text: a paragraph alone often lacks its subject.
            text = f"{doc['title']} - {row['section_heading']}\n{row['text']}"
            out[COLLECTIONS[doc["source_org"]]].append(
                VectorDoc(
                    id=row["section_id"],
                    text=text,
                    metadata={
                        "document_id": doc["document_id"],
                        "source_org": doc["source_org"],
                        "document_type": doc["document_type"],
                        "chunk_type": row["chunk_type"],
                        "parent_id": row["parent_id"] or "",
                        "section_heading": row["section_heading"],
                        "title": doc["title"],
                        "updated_date": str(doc.get("updated_date") or ""),
                        "policy_level": row["policy_level"] or "",
                        "is_superseded": bool(doc.get("is_superseded")),
                        "topics": ";".join(doc.get("topics") or []),
                        "source_url": doc["source_url"],
                        "effective_date": str(doc.get("effective_date") or ""),
                        "published_date": str(doc.get("published_date") or ""),
                        "review_date": str(doc.get("review_date") or ""),
                        "policy_number": str(doc.get("policy_number") or ""),
                        "superseded_by": str(doc.get("superseded_by") or ""),
                        "section_idx": row["section_idx"],
                        "chunk_idx": row["chunk_idx"] or 0,
                        "ipac": row["ipac"] or "",
                        # The document's structured block, so the vector path can answer alone.
                        "program": stored_program(doc),
                        "tool": json.dumps(doc["tool"]) if doc.get("tool") else "",
                    },
                )
            )
    return out
