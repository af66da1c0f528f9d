"""odb.get: Ontario Drug Benefit coverage, interchangeable generics, lowest cost and Limited Use.

One request model takes the simple form (`drug`, `check_alternatives`, `include_lu`, `top_k`) and
the enhanced form (`q`, `din`, `ingredient`, `strength`, `drug_class`, `check`, ...). Drugs are
resolved by rules: DIN, brand, salt-stripped ingredient key, drug class (ATC prefixes), FTS5.
SQL answers from `odb_drugs`/groups/LU codes; the vector path searches `odb_documents` (group,
LU-code and policy chunks) for context and corroboration. SQL takes precedence for the formulary.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.retrieval import odb_formulary as formulary
from reference_server.retrieval.drug_form import FORM_WORDS
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.odb_formulary import DrugQuery, SqlData, Unmatched
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OFF, calculate_confidence
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Evidence
from reference_server.tools.odb_intents import INTENTS, Check
from reference_server.tools.odb_merge import (
    citations_for,
    corroborates,
    group_conflicts,
    is_brand,
    lu_text,
    no_lu,
    snippets,
)

NAME = "odb.get"
DEFAULT_CHECKS: list[Check] = ["coverage", "interchangeable", "lowest_cost"]


FormWordLiteral = Literal[FORM_WORDS]  # type: ignore[valid-type]


class Request(StrictModel):
    required_any_of = (("drug",), ("din",), ("ingredient",), ("drug_class",), ("q",))

    drug: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Brand, generic or ingredient name.",
    )
    q: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        pattern=NON_BLANK,
        description="Question text, e.g. 'Is Ozempic covered for diabetes?'.",
    )
    din: str | None = Field(
        default=None, pattern=r"^\d{1,8}$", description="Drug Identification Number (8 digits)."
    )
    ingredient: str | None = Field(default=None, min_length=1, max_length=200, pattern=NON_BLANK)
    strength: str | None = Field(
        default=None,
        min_length=1,
        max_length=50,
        pattern=NON_BLANK,
        description=(
            "As prescribed: '10mg', '160 mg', '5%', '50 units', '100 units/mL', '5/160 mg', "
            "'50mg & 850mg'. Only products at this strength are answered."
        ),
    )
    form: FormWordLiteral | None = Field(
        default=None,
        description="Dosage form in words; only products in this form are answered.",
    )
    drug_class: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        pattern=NON_BLANK,
        description="e.g. 'statin', 'glp-1 agonist', 'sglt2 inhibitor', 'ace inhibitor', 'ppi'.",
    )
    check: list[Check] = Field(
        default_factory=lambda: list(DEFAULT_CHECKS),
        max_length=9,
        description=(
            "What to check (default coverage, interchangeable, lowest_cost). coverage: the "
            "coverage object; lu_criteria: it too, plus every LU code and product note in full "
            "in context; all_strengths: every product of the ingredient in any group (brands)."
        ),
    )
    check_alternatives: bool = Field(
        default=True, description="Return interchangeables and alternatives."
    )
    include_lu: bool = Field(default=True, description="Include Limited Use criteria.")
    condition: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Medical condition, matched to LU indications.",
    )
    include_brand: bool = Field(default=True, description="Include brand-name products in lists.")
    exclude_lu: bool = Field(default=False, description="Leave Limited Use products out of lists.")
    top_k: int = Field(default=5, ge=1, le=10, description="Results per list (default 5, max 10).")


class Coverage(BaseModel):
    covered: bool = Field(description="True when the product is an ODB benefit.")
    din: str
    brand_name: str
    generic_name: str
    strength: str | None
    dosage_form: str | None = Field(default=None, description="The formulary's dosage form.")
    group_id: str | None = Field(
        default=None, description="Interchangeable group; its passage is cited first."
    )
    lu_required: bool = Field(description="A Limited Use code is needed.")
    lu_codes: list[str] = Field(
        default_factory=list, description="The LU codes lu_criteria states (cited as 'LU code N')."
    )
    lu_criteria: str | None = Field(description="LU codes, indications and periods.")
    notes: list[str] = Field(
        default_factory=list,
        description=(
            "Formulary notes on the product (clinical criteria, availability, interactions), "
            "summarised; given with the lu_criteria check."
        ),
    )


class Brand(BaseModel):
    din: str
    brand: str
    strength: str | None
    dosage_form: str | None
    group_id: str = Field(description="Interchangeable group (biosimilars have their own).")
    covered: bool
    lu_required: bool
    price: float | None


class Interchangeable(BaseModel):
    din: str
    brand: str
    price: float | None = Field(description="Listed unit price.")
    lowest_cost: bool


class LowestCost(BaseModel):
    din: str
    brand: str
    price: float | None
    savings: float | None = Field(description="Per-unit saving versus the requested product.")


class Alternative(BaseModel):
    din: str
    brand: str
    generic_name: str
    strength: str | None
    price: float | None
    lu_required: bool
    reason: str


class PriceComparison(BaseModel):
    requested_din: str
    requested_brand: str
    requested_price: float | None
    amount_odb_pays: float | None = Field(description="Most the ministry pays per unit.")
    lowest_cost_din: str
    lowest_cost_brand: str
    lowest_cost_price: float | None
    savings_per_unit: float | None
    savings_percent: float | None


class NotListed(BaseModel):
    """The drug was found, but not at the strength or in the form asked."""

    name: str = Field(description="The brand or ingredient the request names.")
    strength: str | None = Field(description="The strength asked for.")
    form: str | None = Field(description="The dosage form asked for.")
    message: str = Field(description="'X is not listed at Y; listed: ...'.")
    listed: list[Brand] = Field(description="What the name is listed at (first top_k).")


class Response(Evidence):
    coverage: Coverage | None
    interchangeable: list[Interchangeable]
    lowest_cost: LowestCost | None
    context: list[str] = Field(description="Text snippets from the formulary passages.")
    alternatives: list[Alternative] = Field(description="Covered alternatives by drug/ATC class.")
    price_comparison: PriceComparison | None
    brands: list[Brand] = Field(
        default_factory=list,
        description=(
            "all_strengths: every product of the ingredient in any interchangeable group "
            "(brands, generics and biosimilars), covered first."
        ),
    )
    needs_more_info: bool
    other_strengths: list[Brand] = Field(
        default_factory=list,
        description=(
            "When no strength or form was asked: the brand's other listed products (coverage "
            "answers one of them; each can differ in coverage and Limited Use)."
        ),
    )
    not_listed: NotListed | None = Field(
        default=None,
        description=(
            "Set when the drug is listed, but not at the strength or in the form asked: no "
            "product is answered (coverage is null) and needs_more_info is true."
        ),
    )


def parse(req: Request) -> DrugQuery:
    """The drug the request names, in the store's query shape (both request forms)."""
    return DrugQuery(
        drug=req.drug,
        q=req.q,
        din=req.din,
        ingredient=req.ingredient,
        strength=req.strength,
        drug_class=req.drug_class,
        condition=req.condition,
        exclude_lu=req.exclude_lu,
        form=req.form,
    )


def _brand(r: dict[str, Any]) -> Brand:
    return Brand(
        din=r["din"],
        brand=r["brand_name"],
        strength=r.get("strength"),
        dosage_form=r.get("dosage_form"),
        group_id=r["group_id"],
        covered=bool(r["is_benefit"]),
        lu_required=bool(r["lu_required"]),
        price=r.get("individual_price"),
    )


def not_listed(u: Unmatched, top_k: int) -> NotListed:
    """What the name is listed at, one product per strength and form (covered first)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(u.listed, key=lambda r: (not r["is_benefit"], r["din"])):
        seen.setdefault((r.get("strength") or "", r.get("dosage_form") or ""), r)
    shown = sorted(seen.values(), key=lambda r: (r.get("strength") or "", r["din"]))
    asked = " ".join(x for x in (u.strength, u.form) if x)
    listed = "; ".join(
        " ".join(x for x in (r.get("strength"), r.get("dosage_form")) if x) or r["din"]
        for r in shown
    )
    return NotListed(
        name=u.name,
        strength=u.strength,
        form=u.form,
        message=f"{u.name} is not listed at {asked}; listed: {listed}.",
        listed=[_brand(r) for r in shown[:top_k]],
    )


def _checks(req: Request) -> set[str]:
    checks: set[str] = set(req.check)
    for check, pattern in INTENTS.items():
        if req.q and re.search(pattern, req.q, re.I):
            checks.add(check)
    return checks


async def run(rt: Runtime, req: Request) -> ToolOutput:
    query = parse(req)
    dual = await run_dual(
        rt.settings,
        sql=lambda: formulary.keyword_search(rt.ohip_sql, query),
        vector=lambda: formulary.vector_search(rt.vectors, query),
    )
    hits: list[VectorHit] = dual.vector.value or []
    sql: SqlData | None = dual.sql.value
    data = sql if sql is not None else formulary.from_passages(query, hits)
    checks = _checks(req)
    p, found = data.primary, data.found
    conflicts = group_conflicts(data, hits) if sql else []
    corroborating = [h for h in hits if corroborates(h, data)] if p else []

    coverage: Coverage | None = None
    if p and checks & {"coverage", "lu_criteria"}:
        coverage = Coverage(
            covered=bool(p["is_benefit"]),
            din=p["din"],
            brand_name=p["brand_name"],
            generic_name=p["generic_name"],
            strength=p.get("strength"),
            dosage_form=p.get("dosage_form"),
            group_id=p.get("group_id"),
            lu_required=bool(p["lu_required"] or p.get("lu_codes")),
            lu_codes=[r["lu_code"] for r in data.lu] if req.include_lu else [],
            lu_criteria=(lu_text(data.lu, req.condition) or no_lu(p)) if req.include_lu else None,
            notes=[n["summary"] for n in data.notes] if req.include_lu else [],
        )

    def keep(r: dict[str, Any]) -> bool:
        return (req.include_brand or not is_brand(r)) and not (req.exclude_lu and r["lu_required"])

    lowest = min(
        (r for r in data.members if r["is_benefit"] and r.get("individual_price") is not None),
        key=lambda r: (
            r["individual_price"],
            r["din"] != (data.group or {}).get("lowest_cost_din"),
            r["din"],
        ),
        default=None,
    )
    savings = None
    if p and lowest and p.get("individual_price") is not None and found.kind != "class":
        savings = round(p["individual_price"] - lowest["individual_price"], 4)

    interchangeable: list[Interchangeable] = []
    if req.check_alternatives and checks & {"interchangeable", "interchangeable_group"} and p:
        members = [r for r in data.members if keep(r)]
        top = members[: req.top_k]
        if p in members and p not in top:
            top = [*top[: req.top_k - 1], p]
        interchangeable = [
            Interchangeable(
                din=r["din"],
                brand=r["brand_name"],
                price=r.get("individual_price"),
                lowest_cost=bool(r["lowest_cost"]),
            )
            for r in top
        ]

    lowest_cost = None
    if lowest and (checks & {"lowest_cost", "price_comparison"} or found.kind == "class"):
        lowest_cost = LowestCost(
            din=lowest["din"],
            brand=lowest["brand_name"],
            price=lowest["individual_price"],
            savings=savings,
        )

    alternatives: list[Alternative] = []
    if (
        req.check_alternatives
        and p
        and ("alternatives" in checks or not p["is_benefit"] or found.kind == "class")
    ):
        alternatives = [
            Alternative(
                din=r["din"],
                brand=r["brand_name"],
                generic_name=r["generic_name"],
                strength=r.get("strength"),
                price=r.get("individual_price"),
                lu_required=bool(r["lu_required"]),
                reason=data.alt_basis or "",
            )
            for r in data.alternatives
            if keep(r)
        ][: req.top_k]

    price_comparison = None
    if p and lowest and found.kind != "class" and checks & {"price_comparison", "lowest_cost"}:
        price = p.get("individual_price")
        price_comparison = PriceComparison(
            requested_din=p["din"],
            requested_brand=p["brand_name"],
            requested_price=price,
            amount_odb_pays=p.get("amount_mohltc_pays"),
            lowest_cost_din=lowest["din"],
            lowest_cost_brand=lowest["brand_name"],
            lowest_cost_price=lowest["individual_price"],
            savings_per_unit=savings,
            savings_percent=round(100 * savings / price, 1)
            if savings is not None and price
            else None,
        )

    context = snippets(hits, hybrid=sql is not None and p is not None)
    if "lu_criteria" in checks:  # the criteria in full: each LU code and product note
        context += [
            f"LU {r['lu_code']}: {r['indication']} (authorization period: {r['period'] or 'not stated'})"
            for r in data.lu
        ] + [f"Formulary note ({n['scope']}): {n['summary']}" for n in data.notes]
    brands = (
        [_brand(r) for r in data.same_ingredient if keep(r)] if "all_strengths" in checks else []
    )
    missing = not_listed(data.unmatched, req.top_k) if p is None and data.unmatched else None
    found = data.found
    others = (
        [r for r in found.rows if r["brand_name"] == p["brand_name"] and r["din"] != p["din"]]
        if p and found.kind == "brand" and not (found.strength or found.form)
        else []
    )[: req.top_k]
    if "all_strengths" in checks and len(data.strengths) > 1:
        context.append(
            "Other strengths: "
            + "; ".join(
                f"{g['strength']} {g['dosage_form']} (group {g['group_id']}, lowest "
                f"{g['lowest_cost_din'] or 'n/a'} at {g['lowest_price']})"
                for g in data.strengths
            )
        )

    answered = [r for r in (p, lowest) if r] + (data.alternatives[:2] if alternatives else [])
    answered += others
    if missing and data.unmatched:  # the evidence for what is listed instead
        shown = {b.din for b in missing.listed}
        answered += [r for r in data.unmatched.listed if r["din"] in shown][:3]
    citations = citations_for(
        data,
        answered,
        notes=bool(coverage and coverage.notes),
        brand_groups=[b.group_id for b in brands],
        hits=hits,
    )
    n_sql = data.records if sql is not None else 0
    response = Response(
        provenance=dual.provenance,
        confidence=calculate_confidence(n_sql, len(corroborating), len(conflicts), OFF),
        coverage=coverage,
        interchangeable=interchangeable,
        lowest_cost=lowest_cost,
        citations=citations,
        conflicts=conflicts,
        context=context,
        alternatives=alternatives,
        price_comparison=price_comparison,
        brands=brands,
        needs_more_info=p is None,
        other_strengths=[_brand(r) for r in others],
        not_listed=missing,
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Drug Benefit (ODB) formulary: is a drug covered, does it need a Limited Use (LU) code, "
        "which interchangeable generics exist, which is lowest cost and how much is saved, and covered "
        "alternatives in the same drug class. Look up by `drug` (brand/generic), `din`, `ingredient`, "
        "`drug_class` (e.g. statin, glp-1 agonist) or a question `q`. A strength or dosage form "
        "(`strength`, `form`, or written in `drug` or `q`) selects the product; when the drug is "
        "not listed at it, no product is answered: needs_more_info is true and not_listed says "
        "what is listed."
    ),
    request=Request,
    response=Response,
    run=run,
    warm_up={"q": "is atorvastatin covered"},
)
