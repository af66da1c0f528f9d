"""Passages by chunk id, from either store: the one contract behind "show source".

Every citation of every tool carries a chunk id (shapes in `reference_server.catalog`). The
vector store's payloads are the primary copy (what was embedded and cited). The SQL side holds
the same passages: Dr. OFF ones in the `off_passages` table (written by the index builder from
the very documents it embeds), OPA sections in `opa_sections`, and whole OPA documents (cited by
document id) rebuilt from their sections. Each lookup answers `{chunk_id: Passage}` for the ids
it found; ids it does not know are simply absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reference_server.catalog import (
    OFF_COLLECTIONS,
    OFF_PASSAGES_TABLE,
    collections_for,
    is_off_chunk,
)
from reference_server.retrieval.opa_sections import fetch_sections
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient

MAX_DOCUMENT_SECTIONS = 40  # a whole-document passage lists at most this many sections


@dataclass(frozen=True)
class Passage:
    text: str
    source: str
    page: int | None
    section: str | None


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def describe(collection: str, meta: dict[str, Any]) -> tuple[str, int | None, str | None]:
    """(source, page, section) for a passage from its collection and metadata."""
    if collection == OFF_COLLECTIONS["ohip"]:
        if meta.get("doc_type") == "commentary":
            return f"OHIP billing commentary: {meta.get('title', '')}", None, meta.get("section")
        edition = f" ({meta['edition']})" if meta.get("edition") else ""
        where = f"{meta.get('page', '')} {meta.get('subsection', '')}".strip()
        return f"OHIP Schedule of Benefits{edition}", _int(meta.get("pdf_page")), where or None
    if collection == OFF_COLLECTIONS["adp"]:
        manual = meta.get("manual") or meta.get("adp_doc") or "CEP"
        ref = " ".join(str(meta[k]) for k in ("section", "heading") if meta.get(k))
        return f"ADP {manual}", _int(meta.get("page")), ref or None
    if collection == OFF_COLLECTIONS["odb"]:
        kind = meta.get("doc_type")
        if kind == "policy":
            return "ODB policy notes", None, meta.get("title")
        if kind == "note":
            return (
                "ODB formulary product notes (project summary)",
                None,
                f"note {meta.get('note_id')}",
            )
        label = (
            f"LU code {meta['lu_code']}" if kind == "lu_code" else f"group {meta.get('group_id')}"
        )
        edition = f" ({meta['edition']})" if meta.get("edition") else ""
        return f"Ontario Drug Benefit Formulary{edition}", None, label
    return meta.get("title", ""), None, meta.get("section_heading")


def from_vectors(vectors: VectorClient, ids: list[str]) -> dict[str, Passage]:
    """Payloads by id; one failing collection does not stop the others."""
    wanted: dict[str, list[str]] = {}
    for chunk_id in ids:
        for collection in collections_for(chunk_id):
            wanted.setdefault(collection, []).append(chunk_id)
    found: dict[str, Passage] = {}
    errors: list[str] = []
    for collection, group in wanted.items():
        todo = [i for i in group if i not in found]
        if not todo:
            continue
        try:
            hits = vectors.get(collection, todo)
        except Exception as exc:  # recorded; the other collections still answer
            errors.append(f"{collection}: {exc}")
            continue
        for hit in hits:
            found[hit.id] = Passage(hit.text, *describe(collection, hit.metadata))
    if errors and not found:
        raise RuntimeError("; ".join(errors))
    return found


def from_sql(opa: SqlClient, off: SqlClient, ids: list[str]) -> dict[str, Passage]:
    """The SQL copy of each passage, in the text shape the index builders write."""
    found: dict[str, Passage] = {}
    off_ids = [i for i in ids if is_off_chunk(i)]
    if off_ids:
        for r in off.query(
            f"SELECT chunk_id, collection, text, metadata FROM {OFF_PASSAGES_TABLE} "
            f"WHERE chunk_id IN ({','.join('?' * len(off_ids))})",
            off_ids,
        ):
            found[r["chunk_id"]] = Passage(
                r["text"], *describe(r["collection"], json.loads(r["metadata"]))
            )
    opa_ids = [i for i in ids if not is_off_chunk(i)]
    for section_id, row in fetch_sections(opa, opa_ids).items():
        found[section_id] = Passage(
            f"{row['document_title']} - {row['section_heading']}\n{row['text']}",
            row["document_title"],
            None,
            row["section_heading"],
        )
    found.update(documents(opa, [i for i in opa_ids if i not in found]))
    return found


def documents(opa: SqlClient, ids: list[str]) -> dict[str, Passage]:
    """Whole OPA documents cited by document id: the title, then each section in order."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    docs = opa.query(
        f"SELECT document_id, title FROM opa_documents WHERE document_id IN ({marks})", ids
    )
    if not docs:
        return {}
    sections: dict[str, list[str]] = {}  # document id -> 'heading: text' in order
    for r in opa.query(
        "SELECT document_id, section_heading, text FROM opa_sections "
        f"WHERE document_id IN ({marks}) AND parent_id IS NULL ORDER BY document_id, section_idx",
        ids,
    ):
        shown = sections.setdefault(r["document_id"], [])
        if len(shown) < MAX_DOCUMENT_SECTIONS:
            shown.append(f"{r['section_heading']}: {r['text']}")
    out: dict[str, Passage] = {}
    for d in docs:
        body = sections.get(d["document_id"], [])
        out[d["document_id"]] = Passage("\n".join([d["title"], *body]), d["title"], None, None)
    return out
