"""odb.get's merge helpers: the formulary's words for coverage and LU criteria, conflicts
between the SQL rows and the group passages, corroboration, citations and context snippets."""

from __future__ import annotations

import json
import re

from reference_server.catalog import odb_group_id, odb_lu_id, odb_note_id
from reference_server.config import CORPUS_DIR
from reference_server.retrieval.derived import PROCESS
from reference_server.retrieval.odb_formulary import COVERAGE_TEXT, LuCode, Product, SqlData
from reference_server.retrieval.vector import VectorHit
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict, compare


def edition() -> str:
    return PROCESS.get("odb_edition", _edition)


def _edition() -> str:
    """The formulary extract date, for citations (corpus MANIFEST, read once)."""
    try:
        manifest = json.loads((CORPUS_DIR / "off" / "MANIFEST.json").read_text(encoding="utf-8"))
        return str(manifest["files"]["odb_drugs.csv"]["create_date"])
    except (OSError, KeyError, ValueError):
        return ""


def formulary_source() -> str:
    return f"Ontario Drug Benefit Formulary (extract {edition()})" if edition() else "ODB Formulary"


def is_brand(r: Product) -> bool:
    """Heuristic: a product named without its ingredient is the brand (Januvia vs PMS-Sitagliptin)."""
    first = (r.ingredient or "").split(" ")[0]
    return bool(first) and first not in (r.brand_name or "").lower()


def coverage_status(lu: bool, benefit: bool) -> str:
    return "Limited Use benefit" if lu else ("general benefit" if benefit else "not a benefit")


def lu_text(lu: list[LuCode], condition: str | None) -> str | None:
    """'LU 665, 666: <indication> (authorization period: indefinite)', condition matches first."""
    if not lu:
        return None
    words = [w for w in re.findall(r"[a-z0-9]+", (condition or "").lower()) if len(w) > 3]
    groups: dict[tuple[str, str], list[str]] = {}
    for r in lu:
        groups.setdefault((r.indication, r.period or "not stated"), []).append(r.lu_code)
    items = sorted(groups.items(), key=lambda kv: not any(w in kv[0][0].lower() for w in words))
    text = "; ".join(
        f"LU {', '.join(codes)}: {ind} (authorization period: {period})"
        for (ind, period), codes in items
    )
    if words and not any(w in ind.lower() for (ind, _), _ in items for w in words):
        text += f". No LU indication mentions '{condition}'."
    return text


def no_lu(p: Product) -> str | None:
    if p.is_benefit and not p.lu_required:
        return "No Limited Use code required: general benefit in the formulary."
    return None


def corroborates(h: VectorHit, sql: SqlData) -> bool:
    m = h.metadata
    p = sql.primary
    groups = {p.group_id if p else None, *(a.group_id for a in sql.alternatives)}
    codes = {r.lu_code for r in sql.lu}
    if m.get("doc_type") == "group":
        return m.get("group_id") in groups or m.get("ingredient") == (p.ingredient if p else None)
    if m.get("doc_type") == "lu_code":
        return m.get("lu_code") in codes or (p.din if p else "-") in str(m.get("dins", ""))
    return False


def group_conflicts(sql: SqlData, hits: list[VectorHit]) -> list[Conflict]:
    g = sql.group
    if not g:
        return []
    out: list[Conflict | None] = []
    for h in hits:
        m = h.metadata
        if m.get("doc_type") != "group" or m.get("group_id") != g.group_id:
            continue
        status = coverage_status(bool(g.lu_codes), bool(g.n_benefit))
        text_status = COVERAGE_TEXT.search(h.text)
        why = "SQL formulary row used (structured data takes precedence)."
        out += [
            compare("coverage", status, text_status.group(1) if text_status else None, why),
            compare("lu_required", bool(g.lu_codes), m.get("lu_required"), why),
            compare("lowest_cost.price", g.lowest_price, m.get("lowest_price"), why),
            compare("lowest_cost.din", g.lowest_cost_din, m.get("lowest_cost_din"), why),
        ]
    return [c for c in out if c]


def citation(r: Product) -> Citation:
    return Citation(
        source=formulary_source(),
        loc=f"DIN: {r.din} - {r.brand_name} ({r.generic_name})",
        page=None,
        chunk_id=odb_group_id(r.group_id),
    )


def hit_citation(h: VectorHit) -> Citation:
    m = h.metadata
    if m.get("doc_type") == "group":
        loc = f"ODB interchangeable group {m.get('group_id')}: {m.get('generic_name')} {m.get('strength', '')}"
        return Citation(source=formulary_source(), loc=loc.strip(), page=None, chunk_id=h.id)
    if m.get("doc_type") == "lu_code":
        return Citation(
            source=formulary_source(),
            loc=f"LU code {m.get('lu_code')} ({m.get('generic_names')})",
            page=None,
            chunk_id=h.id,
        )
    return Citation(
        source="ODB program notes (project summary)",
        loc=str(m.get("title", h.id)),
        chunk_id=h.id,
    )


def snippets(hits: list[VectorHit], hybrid: bool) -> list[str]:
    """Hybrid: 3 snippets x 500 chars; vector-only: 5 x 800. Group chunks are kept whole."""
    n, size = (3, 500) if hybrid else (5, 800)
    out = []
    for h in hits[:n]:
        text = h.text
        if h.metadata.get("doc_type") != "group" and len(text) > size:
            text = text[:size].rstrip() + "..."
        out.append(text)
    return out


def citations_for(
    data: SqlData,
    products: list[Product],
    *,
    notes: bool,
    brand_groups: list[str],
    hits: list[VectorHit],
) -> list[Citation]:
    """The products answered, their LU codes and notes, other groups of the ingredient, then the
    top passages; every citation names its passage."""
    citations: list[Citation] = []
    for r in products:
        if all(c.loc != citation(r).loc for c in citations):
            citations.append(citation(r))
    for lu in data.lu[:3]:
        citations.append(
            Citation(
                source=formulary_source(),
                loc=f"LU code {lu.lu_code} ({lu.generic_names})",
                page=None,
                chunk_id=odb_lu_id(lu.lu_code),
            )
        )
    if notes:
        citations += [
            Citation(
                source="ODB formulary product notes (project summary)",
                loc=f"Note {n.note_id} ({n.scope})",
                chunk_id=odb_note_id(n.note_id),
            )
            for n in data.notes
        ]
    primary_group = data.primary.group_id if data.primary else None
    for group_id in dict.fromkeys(g for g in brand_groups if g != primary_group):
        citations.append(
            Citation(
                source=formulary_source(),
                loc=f"ODB interchangeable group {group_id}",
                chunk_id=odb_group_id(group_id),
            )
        )
    for h in hits[:3]:
        c = hit_citation(h)
        if all(x.loc != c.loc for x in citations):
            citations.append(c)
    return citations
