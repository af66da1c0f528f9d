"""odb.get's score step: which passages corroborate the SQL rows, where the group passages
disagree with them, and the citations of an answer (every one names its passage)."""

from __future__ import annotations

from reference_server.catalog import odb_group_id, odb_lu_id, odb_note_id
from reference_server.retrieval.odb_formulary import COVERAGE_TEXT, Product, SqlData
from reference_server.retrieval.vector import VectorHit
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.odb.wording import coverage_status, formulary_source


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
