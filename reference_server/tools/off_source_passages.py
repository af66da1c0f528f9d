"""source.passages: the exact text behind a citation ('show source'), with highlighted terms.

Chunk ids are resolved across every collection: Dr. OFF ids by prefix ('ohip:' -> ohip_chunks,
'adp:' -> adp_v1, 'odb:' -> odb_documents) and OPA section ids by organisation prefix
('cpso-virtual-care:s01' -> opa_cpso_corpus); an id with no known prefix is tried everywhere.
The vector store's payloads are the primary copy (what was embedded and cited). SQL rebuilds
the same passage from its tables (opa_sections, ohip_commentary, adp_sections, adp rules, ODB
LU codes) to corroborate it, and stands in when the vector path fails. Ids found nowhere are
listed in `missing_ids`; if none resolve, the call is a not-found error naming them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastmcp.exceptions import ToolError
from pydantic import BaseModel, Field, StringConstraints

from reference_server.errors import NotFoundError
from reference_server.index.off_builder import adp_exclusion_text, adp_funding_text
from reference_server.index.opa_builder import COLLECTIONS as OPA_COLLECTIONS
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.opa_sections import fetch_sections
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient
from reference_server.runtime import Runtime
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec

NAME = "source.passages"
OFF_COLLECTIONS = {"ohip": "ohip_chunks", "adp": "adp_v1", "odb": "odb_documents"}
OPA_PREFIXES = {
    "ontario-health-": "ontario_health",
    "cpso-": "cpso",
    "cep-": "cep",
    "pho-": "pho",
    "moh-": "moh",
}
ALL_COLLECTIONS = [*OFF_COLLECTIONS.values(), *OPA_COLLECTIONS.values()]
# ADP rule chunk kind ('adp:<doc>:<section>:<kind>:<id>') -> (table, id column, passage text)
ADP_RULES: dict[str, tuple[str, str, Callable[[Mapping[str, Any]], str]]] = {
    "funding": ("adp_funding_rule", "rule_id", adp_funding_text),
    "exclusion": ("adp_exclusion", "exclusion_id", adp_exclusion_text),
}
CONTEXT_CHARS = 50
MAX_HIGHLIGHTS = 5

ChunkId = Annotated[str, StringConstraints(min_length=1, max_length=300, pattern=NON_BLANK)]
Term = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=NON_BLANK)]


class Request(StrictModel):
    chunk_ids: list[ChunkId] = Field(
        min_length=1,
        max_length=50,
        description=(
            "Chunk ids from citations, 1 to 50: 'ohip:commentary:mrp-discharge-day', "
            "'adp:mobility:110.01', 'odb:lu:414', or an OPA section id 'cpso-virtual-care:s01'."
        ),
    )
    highlight_terms: list[Term] | None = Field(
        default=None, max_length=20, description="Terms to highlight (case-insensitive)."
    )


class Passage(BaseModel):
    chunk_id: str
    text: str = Field(description="Full passage text.")
    source: str = Field(description="Source document.")
    page: int | None = Field(description="Page number if available.")
    section: str | None = Field(description="Section reference.")
    highlights: list[str] = Field(
        description="Up to 5 snippets, ~50 characters either side of a term marked **term**."
    )


class Response(BaseModel):
    passages: list[Passage]
    total_chunks: int = Field(description="Number of passages returned.")
    missing_ids: list[str] = Field(
        default_factory=list, description="Requested ids found in no collection."
    )


@dataclass
class Found:
    text: str
    source: str
    page: int | None
    section: str | None


# ------------------------------------------------------------------------------ resolution
def collections_for(chunk_id: str) -> list[str]:
    """The collection(s) an id can live in, from its prefix; unknown prefixes try them all."""
    head = chunk_id.split(":", 1)[0]
    if head in OFF_COLLECTIONS and ":" in chunk_id:
        return [OFF_COLLECTIONS[head]]
    for prefix, org in OPA_PREFIXES.items():
        if chunk_id.startswith(prefix):
            return [OPA_COLLECTIONS[org]]
    return ALL_COLLECTIONS


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def describe(collection: str, meta: dict[str, Any]) -> tuple[str, int | None, str | None]:
    """(source, page, section) for a passage from its collection and metadata."""
    if collection == "ohip_chunks":
        if meta.get("doc_type") == "commentary":
            return f"OHIP billing commentary: {meta.get('title', '')}", None, meta.get("section")
        edition = f" ({meta['edition']})" if meta.get("edition") else ""
        where = f"{meta.get('page', '')} {meta.get('subsection', '')}".strip()
        return f"OHIP Schedule of Benefits{edition}", _int(meta.get("pdf_page")), where or None
    if collection == "adp_v1":
        manual = meta.get("manual") or meta.get("adp_doc") or "CEP"
        ref = " ".join(str(meta[k]) for k in ("section", "heading") if meta.get(k))
        return f"ADP {manual}", _int(meta.get("page")), ref or None
    if collection == "odb_documents":
        kind = meta.get("doc_type")
        if kind == "policy":
            return "ODB policy notes", None, meta.get("title")
        label = (
            f"LU code {meta['lu_code']}" if kind == "lu_code" else f"group {meta.get('group_id')}"
        )
        edition = f" ({meta['edition']})" if meta.get("edition") else ""
        return f"Ontario Drug Benefit Formulary{edition}", None, label
    return meta.get("title", ""), None, meta.get("section_heading")


def vector_lookup(vectors: VectorClient, ids: list[str]) -> dict[str, Found]:
    """Payloads by id; one failing collection does not stop the others."""
    wanted: dict[str, list[str]] = {}
    for chunk_id in ids:
        for collection in collections_for(chunk_id):
            wanted.setdefault(collection, []).append(chunk_id)
    found: dict[str, Found] = {}
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
            found[hit.id] = Found(hit.text, *describe(collection, hit.metadata))
    if errors and not found:
        raise RuntimeError("; ".join(errors))
    return found


def _split(value: str | None) -> list[str]:
    return [v for v in (value or "").split(";") if v]


def sql_lookup(opa: SqlClient, off: SqlClient, ids: list[str]) -> dict[str, Found]:
    """Each passage rebuilt from its SQL tables, in the text shape the index builders write."""
    found: dict[str, Found] = {}
    opa_ids = [i for i in ids if i.split(":", 1)[0] not in OFF_COLLECTIONS]
    for section_id, row in fetch_sections(opa, opa_ids).items():
        found[section_id] = Found(
            f"{row['document_title']} - {row['section_heading']}\n{row['text']}",
            row["document_title"],
            None,
            row["section_heading"],
        )
    for chunk_id in ids:
        parts = chunk_id.split(":")
        if parts[:2] == ["ohip", "commentary"] and len(parts) == 3:
            r = off.one("SELECT * FROM ohip_commentary WHERE id = ?", (parts[2],))
            if r:
                text = f"{r['title']}\nCodes: {', '.join(_split(r['codes']))}\n{r['text']}"
                found[chunk_id] = Found(
                    text, f"OHIP billing commentary: {r['title']}", None, r["section"]
                )
        elif parts[0] == "adp" and len(parts) == 5 and parts[3] in ADP_RULES:
            table, key, text_of = ADP_RULES[parts[3]]
            r = off.one(f"SELECT * FROM {table} WHERE {key} = ?", (parts[4],))
            if r:
                found[chunk_id] = Found(
                    text_of(r), f"ADP {r['adp_doc']}", r["page_num"], r["section_ref"]
                )
        elif parts[0] == "adp":
            r = off.one("SELECT * FROM adp_sections WHERE id = ?", (chunk_id,))
            if r and r["kind"] == "policy" and r["summary"]:
                found[chunk_id] = _adp_section(r)
        elif parts[:2] == ["odb", "lu"] and len(parts) == 3:
            r = off.one("SELECT * FROM odb_lu_codes WHERE lu_code = ?", (parts[2],))
            if r:
                text = (
                    f"ODB Limited Use code {r['lu_code']} ({', '.join(_split(r['generic_names']))}): "
                    f"{r['indication']}. Authorization period: {r['period'] or 'not stated'}. "
                    f"Applies to DIN(s) {', '.join(_split(r['dins']))} "
                    f"(group {', '.join(_split(r['group_ids']))})."
                )
                found[chunk_id] = Found(
                    text, "Ontario Drug Benefit Formulary", None, f"LU code {r['lu_code']}"
                )
    return found


def _adp_section(r: dict[str, Any]) -> Found:
    facts = []
    if r["amounts"]:
        facts.append("Amounts: " + ", ".join(_split(r["amounts"])))
    if r["percentages"]:
        facts.append("Percentages: " + ", ".join(f"{p}%" for p in _split(r["percentages"])))
    if r["exclusions"]:
        facts.append(
            "Not funded: " + ", ".join(x.replace("_", " ") for x in _split(r["exclusions"]))
        )
    manual = r["manual"] or r["adp_doc"]
    text = (
        f"ADP {manual} - section {r['section_ref']} (page {r['page_num']}): {r['heading']}\n"
        f"{r['summary']}"
    )
    if facts:
        text += "\n" + "; ".join(facts)
    return Found(text, f"ADP {manual}", r["page_num"], f"{r['section_ref']} {r['heading']}")


# ------------------------------------------------------------------------------ highlights
def _pattern(term: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive; a plural 's'/'es' still matches ('premium' -> 'premiums')."""
    return re.compile(rf"(?<!\w){re.escape(term.strip())}(?:s|es)?(?!\w)", re.I)


def highlight(text: str, terms: list[str]) -> list[str]:
    """Snippets of about 50 characters either side of each term, cut at word boundaries."""
    patterns = [_pattern(t) for t in dict.fromkeys(t.strip() for t in terms) if t]
    text = " ".join(text.split())  # snippets read as one line
    matches = sorted((m.start(), m.end()) for p in patterns for m in p.finditer(text))
    snippets: list[str] = []
    covered_until = -1
    for start, end in matches:
        if start < covered_until:
            continue  # already inside the previous snippet
        left = max(0, start - CONTEXT_CHARS)
        right = min(len(text), end + CONTEXT_CHARS)
        if left > 0 and not text[left - 1].isspace():
            space = text.find(" ", left, start)
            left = space + 1 if space != -1 else start
        if right < len(text) and not text[right].isspace():
            space = text.rfind(" ", end, right)
            right = space if space != -1 else end
        window = text[left:right].strip()
        for p in patterns:
            window = p.sub(lambda m: f"**{m.group(0)}**", window)
        snippets.append(("..." if left > 0 else "") + window + ("..." if right < len(text) else ""))
        covered_until = right
        if len(snippets) == MAX_HIGHLIGHTS:
            break
    return snippets


# ------------------------------------------------------------------------------ tool
async def run(rt: Runtime, req: Request) -> ToolOutput:
    ids = list(dict.fromkeys(i.strip() for i in req.chunk_ids))
    dual = await run_dual(
        rt.settings,
        sql=lambda: sql_lookup(rt.opa_sql, rt.ohip_sql, ids),
        vector=lambda: vector_lookup(rt.vectors, ids),
    )
    sql, vec = dual.sql.value or {}, dual.vector.value or {}
    passages: list[Passage] = []
    conflicts: list[Conflict] = []
    for chunk_id in ids:
        primary, copy = vec.get(chunk_id), sql.get(chunk_id)
        chosen = primary or copy
        if chosen is None:
            continue
        if primary and copy:
            c = compare(
                f"{chunk_id}.text",
                " ".join(copy.text.split()),
                " ".join(primary.text.split()),
                "Vector payload shown (the indexed, cited copy); the SQL copy differs.",
            )
            if c:
                conflicts.append(c)
        passages.append(
            Passage(
                chunk_id=chunk_id,
                text=chosen.text,
                source=chosen.source,
                page=chosen.page if chosen.page is not None else (copy.page if copy else None),
                section=chosen.section or (copy.section if copy else None),
                highlights=highlight(chosen.text, req.highlight_terms or []),
            )
        )
    missing = [i for i in ids if i not in vec and i not in sql]
    if not passages:
        if dual.errors:
            raise ToolError(
                "The passages could not be retrieved right now (retrieval failed: "
                f"{', '.join(sorted(dual.errors))}); try again."
            )
        raise NotFoundError(
            "chunk",
            ", ".join(missing),
            "Use the chunk ids given in citations, e.g. 'ohip:commentary:mrp-discharge-day' or "
            "'cpso-virtual-care:s01'.",
        )
    meta: dict[str, Any] = {"provenance": dual.provenance}
    if conflicts:
        meta["conflicts"] = [c.model_dump(mode="json") for c in conflicts]
    response = Response(passages=passages, total_chunks=len(passages), missing_ids=missing)
    return ToolOutput(response, dual, extra_meta=meta)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Show source: the full text of cited passages by chunk id, from any collection (OHIP schedule "
        "and commentary, ADP manuals, ODB formulary, OPA guidance sections), with source, page, "
        "section and up to 5 highlighted snippets per passage for the given terms."
    ),
    request=Request,
    response=Response,
    run=run,
)
