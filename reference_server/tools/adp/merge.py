"""adp.get's merge and score helpers: check CEP, compare the SQL rules with the passages, and word
the eligibility, funding and context from the selected rules (`select`). What the answer cites
is `rule_citations`; its one-line answer is `summary`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ocm_common.json_types import JsonObject
from reference_server.retrieval.adp_manuals import (
    CepThreshold,
    DescriptiveRule,
    Exclusion,
    FundingRule,
    Passage,
    Row,
    Section,
    rules_in,
)
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.adp.language import EXCLUSION_LABELS, Parsed
from reference_server.tools.adp.select import SectionIndex, Selection, pick_funding
from reference_server.tools.adp.terms import (
    Basis,
    basis_of,
)
from reference_server.tools.common import OpenObject


class Eligibility(BaseModel):
    basic_mobility: bool | None = Field(description="null = not determined from the request.")
    ontario_resident: bool | None
    valid_prescription: bool | None
    other_criteria: OpenObject


PaidBy = Literal["client", "social_assistance"]


class Funding(BaseModel):
    client_share_percent: float | None = Field(
        description="The client's own share in percent: typically 25%; 0% when social assistance "
        "covers the co-payment (Ontario Works, ODSP, ACSD) or when CEP-eligible."
    )
    adp_contribution: float | None = Field(
        description="ADP share in percent: typically 75%; the rule for OW/ODSP/ACSD recipients "
        "(core manual 310.00) sets program funding at 100%."
    )
    max_contribution: float | None = Field(description="Dollar cap where the manual sets one.")
    repair_coverage: str | None
    client_share_paid_by: PaidBy | None = Field(
        description="Who pays the client's share (co-payment): 'client', or 'social_assistance' "
        "when the client receives Ontario Works, ODSP or ACSD (core manual 310.00 and the "
        "category's co-payment section 710); null when no client share applies or none was found."
    )
    general_rule: bool | None = Field(
        default=None,
        description="True: the device's own manual states no split and the shares are the core "
        "manual's general rule (305.01, 'unless noted otherwise'; funding models in 305.00); "
        "false: the device's manual states them; null: no device manual known.",
    )


class Cep(BaseModel):
    income_threshold: float
    eligible: bool
    client_share: float = Field(description="Client share in percent under the CEP check.")


def manual_of(row: Row, index: SectionIndex) -> str:
    same = index.by_uid.get(row.policy_uid, [])
    best = next((s for s in same if s.page_num == row.page_num), same[0] if same else None)
    if best is not None:
        name = best.manual
    else:  # no section for this rule: use the category's manual when it has only one
        manuals = index.manuals.get(row.adp_doc, set())
        name = next(iter(manuals)) if len(manuals) == 1 else None
    return f"ADP {name}" if name else f"ADP {row.adp_doc} manual"


def loc(row: Row) -> str:
    return f"adp:{row.adp_doc}:Section {row.section_ref}"


def ref(row: Row) -> str:
    page = f", p.{row.page_num}" if row.page_num else ""
    return f"{loc(row)}{page}"


def device_label(p: Parsed) -> str:
    return p.device_type.replace("_", " ") if p.device_type else "device"


def exclusion_lines(rows: list[Exclusion], flagged: list[str]) -> list[str]:
    """One line per exclusion kind (category before core manual), flagged kinds first; a kind
    the question asks about lists every section that states it, the others their first three."""
    by_kind: dict[str, list[Exclusion]] = {}
    for r in rows:
        by_kind.setdefault(r.exclusion, []).append(r)
    kinds = sorted(by_kind, key=lambda k: (k not in flagged, list(by_kind).index(k)))
    lines = []
    for kind in kinds:
        refs = list(dict.fromkeys(ref(r) for r in by_kind[kind]))
        label = EXCLUSION_LABELS.get(kind, kind.replace("_", " "))
        lines.append(f"{label} ({'; '.join(refs if kind in flagged else refs[:3])})")
    return lines


def cep_check(
    p: Parsed,
    row: CepThreshold | None,
    cep_hit: Passage | None,
    standard_client: float | None,
) -> tuple[Cep | None, list[Conflict]]:
    """Income at or below the household threshold -> client share 0% (thresholds: project spec)."""
    if p.income is None:
        return None, []
    threshold = row.income_threshold if row else None
    vec_threshold = cep_hit.cep_thresholds.get(p.household) if cep_hit else None
    conflicts: list[Conflict] = []
    if threshold is None and vec_threshold is not None:
        threshold = float(vec_threshold)
    elif threshold is not None:
        c = compare(
            f"cep.income_threshold.{p.household}",
            threshold,
            vec_threshold,
            "SQL table value used (adp_cep_threshold).",
        )
        conflicts += [c] if c else []
    if threshold is None:
        return None, conflicts
    eligible = p.income <= threshold
    client = 0.0 if eligible else float(standard_client if standard_client is not None else 25.0)
    return Cep(income_threshold=threshold, eligible=eligible, client_share=client), conflicts


def share_conflicts(p: Parsed, sel: Selection, passages: list[Passage]) -> list[Conflict]:
    """The split the passages give for this device (same selection rule) versus SQL's."""
    if not sel.share_rules:
        return []
    top = sel.share_rules[0]
    out = []
    for m in pick_funding(rules_in(passages, FundingRule), p):
        if m.adp_doc == top.adp_doc and m.scenario == top.scenario:
            c = compare(
                "funding.client_share_percent",
                top.client_share_percent,
                m.client_share_percent,
                "SQL funding rule used; structured values take precedence.",
            )
            out += [c] if c else []
    return out


def split_basis(p: Parsed, sel: Selection) -> Basis:
    """Whether the device's manual states the split the answer gives (`terms`)."""
    rules = [(r, manual_of(r, sel.index)) for r in sel.share_rules]
    return basis_of(p, rules, sel.index.by_id)


def funding_of(sel: Selection, cep: Cep | None, basis: Basis | None = None) -> Funding:
    """The device's split; for a client on social assistance, their rule (client share 0%, the
    co-payment not the client's); a CEP-eligible income also takes the client share to 0%."""
    top = sel.share_rules[0] if sel.share_rules else None
    repair_note = None
    if sel.repair_rules:
        refs = ", ".join(dict.fromkeys(loc(r) for r in sel.repair_rules[:3]))
        repair_note = (
            "Not covered: ADP does not pay for repairs, maintenance or batteries; "
            f"the client pays the full cost ({refs})."
        )
    maxes = [
        float(r.max_contribution)
        for r in sel.share_rules
        if r.max_contribution and top and r.section_ref == top.section_ref
    ]
    client = top.client_share_percent if top else None
    if sel.assistance_rules:
        rule = sel.assistance_rules[0]
        return Funding(
            client_share_percent=rule.client_share_percent,
            adp_contribution=rule.adp_share_percent,
            max_contribution=max(maxes) if maxes else None,
            repair_coverage=repair_note,
            client_share_paid_by="social_assistance",
            general_rule=_general(basis),
        )
    cep_eligible = bool(cep and cep.eligible)
    return Funding(
        client_share_percent=0.0 if cep_eligible else client,
        adp_contribution=top.adp_share_percent if top else None,
        max_contribution=max(maxes) if maxes else None,
        repair_coverage=repair_note,
        client_share_paid_by="client" if client and not cep_eligible else None,
        general_rule=_general(basis),
    )


def _general(basis: Basis | None) -> bool | None:
    return None if basis is None or basis.manual is None else basis.general_rule


def eligibility_of(
    p: Parsed, sel: Selection, independent_transfer: bool | None = None
) -> Eligibility:
    basic: bool | None = None
    if p.category == "mobility":
        basic = False if "alternative_transport" in sel.flagged else (True if p.daily else None)
    other: JsonObject = {  # the published free-form criteria
        "device_type": p.device_type,
        "category": p.category,
        "flagged_exclusions": list(sel.flagged),
        "requirements": [
            f"{ref(s)}: {s.heading} - {s.summary[:200]}" for s in sel.requirement_sections
        ],
    }
    lease = [r for r in sel.scoped_funding if r.scenario == "lease"]
    if lease:
        other["lease"] = f"{lease[0].summary} ({loc(lease[0])})"
    if independent_transfer is not None:
        other["independent_transfer"] = independent_transfer
    if p.fast_track:
        found = sel.index.fast_track
        other["fast_track"] = fast_track_note(found)
    return Eligibility(
        basic_mobility=basic,
        ontario_resident=p.resident,
        valid_prescription=p.prescription,
        other_criteria=other,
    )


def fast_track_note(found: list[Section]) -> str:
    if found:
        return f"Described in {', '.join(ref(s) for s in found[:3])}."
    return (
        "No fast-track or expedited process is described in the indexed ADP manual "
        "sections; the standard authorizer assessment and application apply."
    )


def context(
    passages: list[Passage],
    rules: Sequence[FundingRule | DescriptiveRule],
    exclusions: list[str],
    n: int,
) -> str:
    lines = [f"[{h.id}] {h.text[:500]}" for h in passages[:n] if h.doc_type == "section"]
    lines += [
        f"{'Rule' if isinstance(r, DescriptiveRule) else 'Funding rule'} {loc(r)}: {r.summary}"
        for r in rules
    ]
    if exclusions:
        lines.append("Exclusions: " + "; ".join(exclusions[:5]))
    return "\n".join(lines)
