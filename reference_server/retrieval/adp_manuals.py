"""The ADP store: funding rules, exclusions, CEP thresholds and manual sections (SQL), manual and
rule passages (vector).

The ADP tables are small (tens of rules, ~500 sections), so `keyword_search` reads them whole
and adp.get filters in its merge; `vector_search` ranks passages of the device's manual and the
core manual. A rule passage carries its rule in the SQL row's type, so answers can be given from
the passages when the SQL path is down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from reference_server.catalog import ADP_CEP_ID, OFF_COLLECTIONS, adp_rule_id
from reference_server.retrieval.derived import DerivedValues
from reference_server.retrieval.sql import SqlClient
from reference_server.retrieval.vector import VectorClient, VectorHit, Where

COLLECTION = OFF_COLLECTIONS["adp"]
CORE = "core_manual"  # the Policies and Procedures manual every category shares
VECTOR_CANDIDATES = 8


@dataclass(frozen=True)
class Placed:
    """Where a rule or section stands in the manuals (what a citation and `loc` need)."""

    adp_doc: str
    section_ref: str
    policy_uid: str | None
    page_num: int | None


@dataclass(frozen=True)
class FundingRule(Placed):
    rule_id: str
    scenario: str  # purchase | lease | repair | batteries | social_assistance | grant_...
    client_share_percent: float | None
    adp_share_percent: float | None
    max_contribution: float | None
    covered: bool
    summary: str  # '' when rebuilt from a passage (the passage states it in words)

    @property
    def passage_id(self) -> str:
        return adp_rule_id(self.adp_doc, self.section_ref, "funding", self.rule_id)


@dataclass(frozen=True)
class Exclusion(Placed):
    exclusion_id: str
    exclusion: str  # the exclusion kind, e.g. 'batteries', 'alternative_transport'

    @property
    def passage_id(self) -> str:
        return adp_rule_id(self.adp_doc, self.section_ref, "exclusion", self.exclusion_id)


@dataclass(frozen=True)
class DescriptiveRule(Placed):
    """A who-does-what rule (equipment pool, leases, suppliers, repairs, co-payment)."""

    rule_id: str
    topic: str
    summary: str

    @property
    def passage_id(self) -> str:
        return adp_rule_id(self.adp_doc, self.section_ref, "descriptive", self.rule_id)


@dataclass(frozen=True)
class Section(Placed):
    """A summarised policy section of a manual (section numbers collide inside a manual, so
    a section keeps its own id: 'adp:prosthesis:205-2')."""

    id: str
    manual: str | None
    heading: str
    summary: str

    @property
    def passage_id(self) -> str:
        return self.id


@dataclass(frozen=True)
class CepThreshold:
    household: str  # single | family
    income_threshold: float


@dataclass(eq=False)  # one per process, shared read-only between calls
class SqlData:
    funding: list[FundingRule]
    exclusions: list[Exclusion]
    cep: dict[str, CepThreshold]  # by household
    sections: list[Section]
    descriptive: list[DescriptiveRule]
    # what callers derive from these rows (the sections' index), built once like the rows
    derived: DerivedValues = field(default_factory=DerivedValues)


def keyword_search(db: SqlClient) -> SqlData:
    """SQL path: every rule (share, exclusion, descriptive), CEP threshold and summarised
    manual section. The index is read-only, so they are read once per process and shared
    (readers never edit a row): re-reading them cost ~6.5 ms of each adp.get at 1x and 63 ms
    at 10x, copying them ~9% of its time at 10x."""
    return db.derived.get("adp_sql_data", lambda: _sql_data(db))


PLACE = "adp_doc, section_ref, policy_uid, page_num"


def _sql_data(db: SqlClient) -> SqlData:
    """The rows in their types (each SELECT names its type's fields)."""
    return SqlData(
        funding=[
            FundingRule(**{**r, "covered": bool(r["covered"]), "summary": r["summary"] or ""})
            for r in db.query(
                f"SELECT {PLACE}, rule_id, scenario, client_share_percent, adp_share_percent, "
                "max_contribution, covered, summary FROM adp_funding_rule ORDER BY rule_id"
            )
        ],
        exclusions=[
            Exclusion(**r)
            for r in db.query(
                f"SELECT {PLACE}, exclusion_id, exclusion FROM adp_exclusion ORDER BY exclusion_id"
            )
        ],
        cep={
            r["household"]: CepThreshold(**r)
            for r in db.query("SELECT household, income_threshold FROM adp_cep_threshold")
        },
        sections=[
            Section(**r)
            for r in db.query(
                f"SELECT {PLACE}, id, manual, heading, summary FROM adp_sections "
                "WHERE kind = 'policy' AND summary != '' ORDER BY id"
            )
        ],
        descriptive=[
            DescriptiveRule(**r)
            for r in db.query(
                f"SELECT {PLACE}, rule_id, topic, summary FROM adp_descriptive_rule ORDER BY rule_id"
            )
        ],
    )


# ----------------------------------------------------------------------------- vector path

Rule = FundingRule | Exclusion | DescriptiveRule
Row = Rule | Section  # anything adp.get cites: each has `passage_id`


@dataclass(frozen=True)
class Passage:
    """A passage of the ADP collection: a manual section, a rule (with the rule it states, in
    the SQL row's type) or the CEP thresholds."""

    id: str
    text: str
    doc_type: str  # section | funding_rule | exclusion | descriptive_rule | cep
    adp_doc: str | None
    manual: str | None
    section: str | None
    page: int | None
    topic: str | None  # a descriptive rule's topic
    rule: Rule | None
    cep_thresholds: Mapping[str, float]  # household -> income threshold (the CEP passage)


def _rule_of(h: VectorHit) -> Rule | None:
    """The rule a rule passage states, in the SQL row's shape (its metadata are the row's)."""
    m = h.metadata
    kind = m.get("doc_type")
    if kind not in ("funding_rule", "exclusion", "descriptive_rule"):
        return None
    at = {
        "adp_doc": m.get("adp_doc", ""),
        "section_ref": m.get("section"),
        "policy_uid": m.get("policy_uid"),
        "page_num": m.get("page"),
    }
    if kind == "funding_rule":
        return FundingRule(
            **at,
            rule_id=m["rule_id"],
            scenario=m["scenario"],
            client_share_percent=m.get("client_share_percent"),
            adp_share_percent=m.get("adp_share_percent"),
            max_contribution=m.get("max_contribution"),
            covered=m["covered"],
            summary=m.get("summary", ""),
        )
    if kind == "exclusion":
        return Exclusion(**at, exclusion_id=m["exclusion_id"], exclusion=m["exclusion"])
    # a descriptive rule's sentence is the passage after its label
    return DescriptiveRule(
        **at, rule_id=m["rule_id"], topic=m["topic"], summary=h.text.split("): ", 1)[-1]
    )


def passage(h: VectorHit) -> Passage:
    m = h.metadata
    return Passage(
        id=h.id,
        text=h.text,
        doc_type=m.get("doc_type", ""),
        adp_doc=m.get("adp_doc"),
        manual=m.get("manual"),
        section=m.get("section"),
        page=m.get("page"),
        topic=m.get("topic"),
        rule=_rule_of(h),
        cep_thresholds={k: m[k] for k in ("single", "family") if m.get(k) is not None},
    )


def vector_search(
    vectors: VectorClient,
    query: str,
    category: str | None,
    with_cep: bool,
    limit: int = VECTOR_CANDIDATES,
) -> list[Passage]:
    """Vector path: passages of the category's manual and the core manual (+ the CEP passage)."""
    where: Where | None = {"adp_doc": {"$in": [category, CORE]}} if category else None
    hits = vectors.search(COLLECTION, query, n_results=limit, where=where)
    if with_cep:
        hits += vectors.get(COLLECTION, [ADP_CEP_ID])
    return [passage(h) for h in hits]


R = TypeVar("R", FundingRule, Exclusion, DescriptiveRule)


def rules_in(passages: list[Passage], kind: type[R]) -> list[R]:
    """The rules of one kind the passages state (answers when the SQL path is down)."""
    return [r for h in passages if isinstance(r := h.rule, kind)]
