"""adp.get's selection: the funding, repair, assistance and who-does-what rules, exclusions and
manual sections that answer a request. The SQL step selects from the rule tables; when the SQL
path is down, the merge step selects the same way from the rules the passages state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reference_server.retrieval.adp_manuals import (
    CORE,
    CepThreshold,
    DescriptiveRule,
    Exclusion,
    FundingRule,
    Passage,
    Section,
    SqlData,
    rules_in,
)
from reference_server.tools.adp.language import FAST_TRACK, REQUIREMENT_HEADING, Parsed


def in_scope(adp_doc: str | None, category: str | None) -> bool:
    return adp_doc in {category, CORE}


def pick_funding(rows: Sequence[FundingRule], p: Parsed) -> list[FundingRule]:
    """The standard share rules for the device: its category's purchase/lease rules or grants,
    else the core manual's. The 0% rules of social-assistance recipients are `assistance_rules`."""
    rows = [r for r in rows if r.client_share_percent != 0]
    order = ("lease", "purchase") if p.lease else ("purchase", "lease")
    # A grant category states every client's grant and, apart, the higher one of clients on
    # OW/ODSP/ACSD (grants 230.01 / 230.02): the latter only for them, never for anyone else.
    grants = ("grant_social_assistance", "grant") if p.social_assistance else ("grant",)
    for doc in (p.category, CORE):
        for scenarios in ((order[0],), (order[1],), *((g,) for g in grants)):
            found = [
                r
                for r in rows
                if r.adp_doc == doc
                and r.scenario in scenarios
                and (r.client_share_percent or 0) < 100
            ]
            if found:
                # The manuals' funding parts (Part 7; core policy 305) state the split most directly.
                return sorted(found, key=lambda r: not str(r.section_ref).startswith(("7", "305")))
    return []


def assistance_rules(rows: Sequence[FundingRule], p: Parsed) -> list[FundingRule]:
    """The share rules of clients on Ontario Works, ODSP or ACSD: the category's own (only where
    its rule names this device, e.g. comm_aids 710 for speaking valves), then the core manual's
    (310.00: program funding at 100%, so the client pays no co-payment)."""
    found = [r for r in rows if r.scenario == "social_assistance"]
    own = [
        r
        for r in found
        if r.adp_doc == p.category != CORE and any(k in r.summary.lower() for k in p.keywords)
    ]
    return own + [r for r in found if r.adp_doc == CORE]


def descriptive_rules(rows: Sequence[DescriptiveRule], p: Parsed) -> list[DescriptiveRule]:
    """The who-does-what rules the question asks about (its topics; the category's co-payment
    section for a client on social assistance), in the device's manual, or any manual when the
    question names no device."""
    topics = set(p.topics) | ({"social_assistance_copay"} if p.social_assistance else set())
    return [
        r
        for r in rows
        if r.topic in topics and (p.category in (None, CORE) or r.adp_doc == p.category)
    ]


@dataclass(frozen=True)
class SectionIndex:
    """The manual sections arranged the ways adp.get reads them, built once per SQL read (once
    per process): scanning every section per call grew with the corpus (10x: a third of
    adp.get's time went to the fast-track scan, manual lookups and keyword filters)."""

    by_doc: dict[str, list[tuple[Section, str]]]  # manual -> (section, lowered text)
    by_uid: dict[str | None, list[Section]]
    by_id: dict[str, Section]  # passage id -> section
    manuals: dict[str, set[str | None]]  # adp_doc -> its manuals' names
    requirements: dict[str, list[Section]]  # manual -> requirement sections
    fast_track: list[Section]

    @staticmethod
    def of(sections: list[Section]) -> SectionIndex:
        index = SectionIndex({}, {}, {}, {}, {}, [])
        for s in sections:
            index.by_id[s.id] = s
            text = f"{s.heading} {s.summary}"
            index.by_doc.setdefault(s.adp_doc, []).append((s, text.lower()))
            index.by_uid.setdefault(s.policy_uid, []).append(s)
            index.manuals.setdefault(s.adp_doc, set()).add(s.manual)
            if REQUIREMENT_HEADING.search(s.heading):
                index.requirements.setdefault(s.adp_doc, []).append(s)
            if FAST_TRACK.search(text):
                index.fast_track.append(s)
        return index


NO_SECTIONS = SectionIndex.of([])


def section_index(sql: SqlData) -> SectionIndex:
    return sql.derived.get("section_index", lambda: SectionIndex.of(sql.sections))


@dataclass(frozen=True)
class Selection:
    """The rows of either path that answer this request (SQL rows, or the rules the passages
    state if SQL failed)."""

    share_rules: list[FundingRule]
    assistance_rules: list[FundingRule]  # OW/ODSP/ACSD share rules (when the client is on one)
    descriptive: list[DescriptiveRule]  # who-does-what rules the question asks about
    repair_rules: list[FundingRule]
    scoped_funding: list[FundingRule]
    exclusions: list[Exclusion]
    flagged: list[str]
    device_sections: list[Section]
    requirement_sections: list[Section]
    index: SectionIndex


def select(
    p: Parsed,
    funding_rows: Sequence[FundingRule],
    excl_rows: Sequence[Exclusion],
    desc_rows: Sequence[DescriptiveRule],
    index: SectionIndex,
) -> Selection:
    """The rules that answer this request, from either path's rows."""
    scoped = [r for r in funding_rows if in_scope(r.adp_doc, p.category)]
    excl = sorted(
        (r for r in excl_rows if in_scope(r.adp_doc, p.category)),
        key=lambda r: (r.adp_doc == CORE, str(r.exclusion_id)),
    )
    not_paid = [r for r in scoped if r.scenario in ("repair", "batteries") and not r.covered]
    asked = {"repair"} if "repairs_maintenance" in p.flags else set()
    asked |= {"batteries"} if "batteries" in p.flags else set()
    share_rules = pick_funding(scoped, p)
    # A grant category's rules for OW/ODSP/ACSD clients are its grants; percentage splits have
    # the recipients' own rule.
    with_percent = bool(share_rules) and share_rules[0].client_share_percent is not None
    cat_sections = index.by_doc.get(p.category or "", [])
    return Selection(
        share_rules=share_rules,
        assistance_rules=assistance_rules(scoped, p)
        if p.social_assistance and with_percent
        else [],
        descriptive=descriptive_rules(desc_rows, p)[:6],
        repair_rules=sorted(
            not_paid,
            key=lambda r: (r.scenario not in asked, r.adp_doc == CORE, r.scenario),
        ),
        scoped_funding=scoped,
        exclusions=excl,
        flagged=[k for k in p.flags if any(r.exclusion == k for r in excl)],
        device_sections=[s for s, text in cat_sections if any(k in text for k in p.keywords)][:3],
        requirement_sections=index.requirements.get(p.category or "", [])[:3],
        index=index,
    )


@dataclass(frozen=True)
class SqlSelection:
    """The SQL path's answer: the rules selected from the SQL rows, and the household's CEP
    income threshold."""

    selection: Selection
    cep_threshold: CepThreshold | None


def select_sql(p: Parsed, sql: SqlData) -> SqlSelection:
    """The SQL step's selection: the request's rules out of the rule tables."""
    return SqlSelection(
        select(p, sql.funding, sql.exclusions, sql.descriptive, section_index(sql)),
        sql.cep.get(p.household),
    )


def select_passages(p: Parsed, passages: list[Passage]) -> Selection:
    """With the SQL path down: the same selection from the rules the passages state."""
    return select(
        p,
        rules_in(passages, FundingRule),
        rules_in(passages, Exclusion),
        rules_in(passages, DescriptiveRule),
        NO_SECTIONS,
    )
