"""adp.get's merge: pick the funding, repair and exclusion rules for the device, check CEP,
compare the SQL rules with the passages, and word the eligibility, funding, citations, summary
and context. Rules come from the SQL rows, or from rule passages when the SQL path is down."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from reference_server.catalog import ADP_CEP_ID, adp_rule_id
from reference_server.retrieval import adp_manuals as adp
from reference_server.retrieval.adp_manuals import CORE, SqlData
from reference_server.retrieval.vector import VectorHit
from reference_server.scoring.citations import Citation
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.adp_language import (
    EXCLUSION_LABELS,
    FAST_TRACK,
    REQUIREMENT_HEADING,
    Parsed,
)


class Eligibility(BaseModel):
    basic_mobility: bool | None = Field(description="null = not determined from the request.")
    ontario_resident: bool | None
    valid_prescription: bool | None
    other_criteria: dict[str, Any]


class Funding(BaseModel):
    client_share_percent: float | None = Field(description="Typically 25%; 0% when CEP-eligible.")
    adp_contribution: float | None = Field(description="ADP share in percent, typically 75%.")
    max_contribution: float | None = Field(description="Dollar cap where the manual sets one.")
    repair_coverage: str | None


class Cep(BaseModel):
    income_threshold: float
    eligible: bool
    client_share: float = Field(description="Client share in percent under the CEP check.")


def in_scope(row: dict[str, Any], category: str | None) -> bool:
    return row.get("adp_doc") in {category, CORE}


def pick_funding(rows: list[dict[str, Any]], p: Parsed) -> list[dict[str, Any]]:
    """The share rules for the device: its category's purchase/lease rules, else the core manual's."""
    # The 0% share (comm_aids 710: ADP pays 100% of the valve price) sits in the manual's section on
    # social-assistance recipients (OW/ODSP/ACSD); everyone else pays the standard 25% (115.03).
    valve_for_assistance = p.device_type == "voice_restoration_valve" and p.social_assistance
    if valve_for_assistance:
        found = [r for r in rows if r["adp_doc"] == "comm_aids" and r["client_share_percent"] == 0]
        if found:
            return found
    rows = [r for r in rows if r.get("client_share_percent") != 0]
    for doc in (p.category, CORE):
        for scenarios in (("purchase",), ("lease",), ("grant_social_assistance",)):
            found = [
                r
                for r in rows
                if r["adp_doc"] == doc
                and r["scenario"] in scenarios
                and (r.get("client_share_percent") or 0) < 100
            ]
            if found:
                # The manuals' funding parts (Part 7; core policy 305) state the split most directly.
                return sorted(
                    found, key=lambda r: not str(r["section_ref"]).startswith(("7", "305"))
                )
    return []


def manual_of(row: dict[str, Any], index: SectionIndex) -> str:
    uid, page = row.get("policy_uid"), row.get("page_num")
    same = index.by_uid.get(uid, [])
    best = next((s for s in same if s["page_num"] == page), same[0] if same else None)
    if best is None:  # no section for this rule: use the category's manual when it has only one
        manuals = index.manuals.get(row.get("adp_doc"), set())
        best = {"manual": next(iter(manuals))} if len(manuals) == 1 else None
    if best and best.get("manual"):
        return f"ADP {best['manual']}"
    return f"ADP {row.get('adp_doc', '')} manual"


def loc(row: dict[str, Any]) -> str:
    return f"adp:{row['adp_doc']}:Section {row['section_ref']}"


def passage_id(row: dict[str, Any]) -> str:
    """The passage a funding rule, exclusion or manual section row came from (section numbers
    collide inside a manual, so sections keep their own ids: 'adp:prosthesis:205-2')."""
    for kind, key in (("funding", "rule_id"), ("exclusion", "exclusion_id")):
        if row.get(key):
            return adp_rule_id(row["adp_doc"], row["section_ref"], kind, row[key])
    return str(row["id"])


def ref(row: dict[str, Any]) -> str:
    page = f", p.{row['page_num']}" if row.get("page_num") else ""
    return f"{loc(row)}{page}"


def device_label(p: Parsed) -> str:
    return p.device_type.replace("_", " ") if p.device_type else "device"


def exclusion_lines(rows: list[dict[str, Any]], flagged: list[str]) -> list[str]:
    """One line per exclusion kind (category before core manual), flagged kinds first."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_kind.setdefault(r["exclusion"], []).append(r)
    kinds = sorted(by_kind, key=lambda k: (k not in flagged, list(by_kind).index(k)))
    lines = []
    for kind in kinds:
        refs = list(dict.fromkeys(ref(r) for r in by_kind[kind]))
        label = EXCLUSION_LABELS.get(kind, kind.replace("_", " "))
        lines.append(f"{label} ({'; '.join(refs[:3])})")
    return lines


@dataclass(frozen=True)
class SectionIndex:
    """The manual sections arranged the ways adp.get reads them, built once per SQL read (once
    per process): scanning every section per call grew with the corpus (10x: a third of
    adp.get's time went to the fast-track scan, manual lookups and keyword filters)."""

    by_doc: dict[str, list[tuple[dict[str, Any], str]]]  # manual -> (section, lowered text)
    by_uid: dict[Any, list[dict[str, Any]]]
    manuals: dict[Any, set[str]]  # adp_doc -> its manuals' names
    requirements: dict[str, list[dict[str, Any]]]  # manual -> requirement sections
    fast_track: list[dict[str, Any]]

    @staticmethod
    def of(sections: list[dict[str, Any]]) -> SectionIndex:
        index = SectionIndex({}, {}, {}, {}, [])
        for s in sections:
            text = f"{s['heading']} {s['summary']}"
            index.by_doc.setdefault(s["adp_doc"], []).append((s, text.lower()))
            index.by_uid.setdefault(s["policy_uid"], []).append(s)
            index.manuals.setdefault(s["adp_doc"], set()).add(s["manual"])
            if REQUIREMENT_HEADING.search(s["heading"]):
                index.requirements.setdefault(s["adp_doc"], []).append(s)
            if FAST_TRACK.search(text):
                index.fast_track.append(s)
        return index


NO_SECTIONS = SectionIndex.of([])


@lru_cache(maxsize=4)
def section_index(sql: SqlData) -> SectionIndex:
    return SectionIndex.of(sql.sections)


@dataclass
class Selection:
    """The rows of either path that answer this request (SQL rows, or chunk metadata if SQL failed)."""

    share_rules: list[dict[str, Any]]
    repair_rules: list[dict[str, Any]]
    scoped_funding: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    flagged: list[str]
    device_sections: list[dict[str, Any]]
    requirement_sections: list[dict[str, Any]]
    index: SectionIndex


def select(p: Parsed, sql: SqlData | None, passages: list[VectorHit]) -> Selection:
    funding_rows = sql.funding if sql else adp.rows_from_passages(passages, "funding_rule")
    excl_rows = sql.exclusions if sql else adp.rows_from_passages(passages, "exclusion")
    index = section_index(sql) if sql else NO_SECTIONS
    scoped = [r for r in funding_rows if in_scope(r, p.category)]
    excl = sorted(
        (r for r in excl_rows if in_scope(r, p.category)),
        key=lambda r: (r["adp_doc"] == CORE, str(r.get("exclusion_id"))),
    )
    not_paid = [r for r in scoped if r["scenario"] in ("repair", "batteries") and not r["covered"]]
    cat_sections = index.by_doc.get(p.category or "", [])
    return Selection(
        share_rules=pick_funding(scoped, p),
        repair_rules=sorted(not_paid, key=lambda r: (r["adp_doc"] == CORE, r["scenario"])),
        scoped_funding=scoped,
        exclusions=excl,
        flagged=[k for k in p.flags if any(r["exclusion"] == k for r in excl)],
        device_sections=[s for s, text in cat_sections if any(k in text for k in p.keywords)][:3],
        requirement_sections=index.requirements.get(p.category or "", [])[:3],
        index=index,
    )


def cep_check(
    p: Parsed, sql: SqlData | None, cep_hit: VectorHit | None, standard_client: float | None
) -> tuple[Cep | None, list[Conflict]]:
    """Income at or below the household threshold -> client share 0% (thresholds: project spec)."""
    if p.income is None:
        return None, []
    threshold = (
        float(sql.cep[p.household]["income_threshold"]) if sql and p.household in sql.cep else None
    )
    vec_threshold = cep_hit.metadata.get(p.household) if cep_hit else None
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


def share_conflicts(p: Parsed, sel: Selection, passages: list[VectorHit]) -> list[Conflict]:
    """The split the passages give for this device (same selection rule) versus SQL's."""
    if not sel.share_rules:
        return []
    top = sel.share_rules[0]
    out = []
    for m in pick_funding(adp.rows_from_passages(passages, "funding_rule"), p):
        if m["adp_doc"] == top["adp_doc"] and m["scenario"] == top["scenario"]:
            c = compare(
                "funding.client_share_percent",
                top["client_share_percent"],
                m.get("client_share_percent"),
                "SQL funding rule used; structured values take precedence.",
            )
            out += [c] if c else []
    return out


def funding_of(sel: Selection, cep: Cep | None) -> Funding:
    top = sel.share_rules[0] if sel.share_rules else {}
    repair_note = None
    if sel.repair_rules:
        refs = ", ".join(dict.fromkeys(loc(r) for r in sel.repair_rules[:3]))
        repair_note = (
            "Not covered: ADP does not pay for repairs, maintenance or batteries; "
            f"the client pays the full cost ({refs})."
        )
    maxes = [
        float(r["max_contribution"])
        for r in sel.share_rules
        if r.get("max_contribution") and r["section_ref"] == top.get("section_ref")
    ]
    client = top.get("client_share_percent")
    return Funding(
        client_share_percent=0.0 if cep and cep.eligible else client,
        adp_contribution=top.get("adp_share_percent"),
        max_contribution=max(maxes) if maxes else None,
        repair_coverage=repair_note,
    )


def eligibility_of(
    p: Parsed, sel: Selection, independent_transfer: bool | None = None
) -> Eligibility:
    basic: bool | None = None
    if p.category == "mobility":
        basic = False if "alternative_transport" in sel.flagged else (True if p.daily else None)
    other: dict[str, Any] = {
        "device_type": p.device_type,
        "category": p.category,
        "flagged_exclusions": sel.flagged,
        "requirements": [
            f"{ref(s)}: {s['heading']} - {s['summary'][:200]}" for s in sel.requirement_sections
        ],
    }
    lease = [r for r in sel.scoped_funding if r["scenario"] == "lease"]
    if lease:
        other["lease"] = f"{lease[0].get('summary', '')} ({loc(lease[0])})"
    if independent_transfer is not None:
        other["independent_transfer"] = independent_transfer
    if p.fast_track:
        found = sel.index.fast_track
        other["fast_track"] = (
            f"Described in {', '.join(ref(s) for s in found[:3])}."
            if found
            else "No fast-track or expedited process is described in the indexed ADP manual "
            "sections; the standard authorizer assessment and application apply."
        )
    return Eligibility(
        basic_mobility=basic,
        ontario_resident=p.resident,
        valid_prescription=p.prescription,
        other_criteria=other,
    )


def citations_of(
    p: Parsed, sel: Selection, corroborating: list[VectorHit], cep: Cep | None
) -> list[Citation]:
    """The SQL rows used (rules, flagged exclusions, device sections), then the top passages."""
    rows = [
        *sel.share_rules[:2],
        *sel.repair_rules[:2],
        *[r for r in sel.exclusions if r["exclusion"] in sel.flagged][:3],
        *sel.device_sections,
        *sel.requirement_sections[:1],
    ]
    out: list[Citation] = []
    seen: set[str] = set()
    for r in rows:
        chunk_id = passage_id(r)
        if chunk_id not in seen:
            seen.add(chunk_id)
            out.append(
                Citation(
                    source=manual_of(r, sel.index),
                    loc=loc(r),
                    page=r.get("page_num"),
                    chunk_id=chunk_id,
                )
            )
    for h in corroborating[:3]:
        m = h.metadata
        if h.id not in seen:
            seen.add(h.id)
            source = f"ADP {m['manual']}" if m.get("manual") else f"ADP {m.get('adp_doc')} manual"
            out.append(
                Citation(
                    source=source,
                    loc=f"adp:{m.get('adp_doc')}:Section {m.get('section')}",
                    page=m.get("page"),
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


def summary(p: Parsed, sel: Selection, cep: Cep | None, eligibility: Eligibility | None) -> str:
    share_rules, flagged, not_covered = sel.share_rules, sel.flagged, sel.repair_rules
    device = device_label(p)
    if p.category is None:
        return (
            "Could not tell which device is meant; name it (e.g. walker, power wheelchair, CPAP, "
            "hearing aid) or give device.category."
        )
    parts: list[str] = []
    if "alternative_transport" in flagged:
        parts.append(
            f"Not eligible: ADP does not fund a {device} used as a car substitute or only "
            "intermittently/outdoors; it must meet a basic daily mobility need."
        )
    uncovered = [k for k in ("batteries", "repairs_maintenance") if k in flagged]
    if uncovered:
        what = " and ".join("batteries" if k == "batteries" else "repairs" for k in uncovered)
        ref = loc(not_covered[0]) if not_covered else "the ADP manual"
        parts.append(f"ADP does not cover {what} for a {device}; the client pays ({ref}).")
    others = [k for k in flagged if k not in ("alternative_transport", *uncovered)]
    if others:
        parts.append("Flagged exclusions: " + ", ".join(k.replace("_", " ") for k in others) + ".")
    if share_rules and "alternative_transport" not in flagged:
        top = share_rules[0]
        if top.get("client_share_percent") is not None:
            parts.append(
                f"ADP funds a {device}: ADP pays {top['adp_share_percent']:g}% of the approved price "
                f"and the client {top['client_share_percent']:g}% ({loc(top)})."
            )
        elif top.get("max_contribution"):
            parts.append(f"ADP pays a grant towards a {device} ({loc(top)}).")
    if cep is not None:
        if cep.eligible:
            parts.append(
                f"Income ${p.income:,.0f} is at or below the ${cep.income_threshold:,.0f} "
                f"{p.household} CEP threshold: CEP-eligible, client share 0%."
            )
        else:
            parts.append(
                f"Income ${p.income:,.0f} is above the ${cep.income_threshold:,.0f} {p.household} "
                f"CEP threshold: standard client share {cep.client_share:g}%."
            )
    if eligibility and "fast_track" in eligibility.other_criteria:
        parts.append(str(eligibility.other_criteria["fast_track"]))
    return " ".join(parts) or f"No ADP funding rule found for a {device}."


def context(
    passages: list[VectorHit], share_rules: list[dict[str, Any]], exclusions: list[str], n: int
) -> str:
    lines = [
        f"[{h.id}] {h.text[:500]}" for h in passages[:n] if h.metadata.get("doc_type") == "section"
    ]
    lines += [f"Funding rule {loc(r)}: {r.get('summary', '')}" for r in share_rules[:2]]
    if exclusions:
        lines.append("Exclusions: " + "; ".join(exclusions[:5]))
    return "\n".join(lines)
