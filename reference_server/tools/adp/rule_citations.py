"""What adp.get cites: the SQL rows its answer rests on (the rule the split comes from, the
general rule, the manual's own terms, exclusions, device sections), then the corroborating
passages and the CEP thresholds, each once.
"""

from __future__ import annotations

from reference_server.catalog import ADP_CEP_ID
from reference_server.retrieval.adp_manuals import Passage, Row
from reference_server.scoring.citations import Citation
from reference_server.tools.adp.merge import Cep, loc, manual_of
from reference_server.tools.adp.select import SectionIndex, Selection
from reference_server.tools.adp.terms import GENERAL_MANUAL, Basis


def _manual_is(row: Row, index: SectionIndex, manuals: tuple[str | None, ...]) -> bool:
    name = manual_of(row, index)
    return any(m is not None and m in name for m in manuals)


def citations_of(
    sel: Selection, corroborating: list[Passage], cep: Cep | None, basis: Basis | None = None
) -> list[Citation]:
    """The SQL rows used (rules, the general rule when the device's manual states no split, the
    manual's own terms, flagged exclusions, device sections), then the top passages."""
    own = [s for _, s in basis.own_terms if s is not None] if basis else []
    shares = sel.share_rules[:3]
    general: list[Row] = []
    if basis is not None and basis.general_rule:
        # the general rule's own rows, not another manual's split (Orthotic Devices 115.01)
        shares = [r for r in shares if _manual_is(r, sel.index, (GENERAL_MANUAL, basis.manual))]
        cited = {loc(r) for r in shares}
        general = [s for s in basis.general if loc(s) not in cited]
    rows: list[Row] = [  # the rule the split comes from leads: a social-assistance client's
        *sel.assistance_rules[:3],
        *shares,
        *general,
        *own,
        *sel.descriptive,
        *sel.repair_rules[:2],
        *[r for r in sel.exclusions if r.exclusion in sel.flagged][:3],
        *sel.device_sections,
        *sel.requirement_sections[:1],
    ]
    out: list[Citation] = []
    seen: set[str] = set()
    for r in rows:
        if r.passage_id not in seen:
            seen.add(r.passage_id)
            out.append(
                Citation(
                    source=manual_of(r, sel.index),
                    loc=loc(r),
                    page=r.page_num,
                    chunk_id=r.passage_id,
                )
            )
    for h in corroborating[:3]:
        if h.id not in seen:
            seen.add(h.id)
            out.append(
                Citation(
                    source=f"ADP {h.manual}" if h.manual else f"ADP {h.adp_doc} manual",
                    loc=f"adp:{h.adp_doc}:Section {h.section}",
                    page=h.page,
                    chunk_id=h.id,
                )
            )
    if cep is not None:
        out.append(
            Citation(
                source="CEP income thresholds (project specification)",
                loc=ADP_CEP_ID,
                chunk_id=ADP_CEP_ID,
            )
        )
    return out
