"""odb.get's answer: the response parts (coverage, interchangeable generics, lowest cost,
alternatives, price comparison, brands, what is listed instead) built from the merged
formulary rows. The request's reading (`Query`) is here too, since every part depends on it."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from reference_server.retrieval.odb_formulary import DrugQuery, Product, SqlData, Unmatched
from reference_server.retrieval.vector import VectorHit
from reference_server.tools.odb.wording import is_brand, lu_text, no_lu, snippets


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


@dataclass(frozen=True)
class Query:
    """What the request asks: the drug (in the store's query shape) and what to answer."""

    drug: DrugQuery
    checks: frozenset[str]  # the checks asked, plus those the question's words imply
    check_alternatives: bool
    include_lu: bool
    include_brand: bool
    exclude_lu: bool
    condition: str | None
    top_k: int

    def keep(self, r: Product) -> bool:
        """A product the lists may show (brands, LU products as asked)."""
        return (self.include_brand or not is_brand(r)) and not (self.exclude_lu and r.lu_required)


@dataclass(frozen=True)
class Answer:
    """The formulary rows (SQL, else rebuilt from a group passage) and what they answer."""

    data: SqlData
    hits: list[VectorHit]
    from_sql: bool
    coverage: Coverage | None
    interchangeable: list[Interchangeable]
    lowest_cost: LowestCost | None
    alternatives: list[Alternative]
    price_comparison: PriceComparison | None
    context: list[str]
    brands: list[Brand]
    others: list[Product]  # the brand's other listed products
    not_listed: NotListed | None
    answered: list[Product]  # the products cited first


def brand_of(r: Product) -> Brand:
    return Brand(
        din=r.din,
        brand=r.brand_name,
        strength=r.strength,
        dosage_form=r.dosage_form,
        group_id=r.group_id,
        covered=bool(r.is_benefit),
        lu_required=bool(r.lu_required),
        price=r.individual_price,
    )


def not_listed(u: Unmatched, top_k: int) -> NotListed:
    """What the name is listed at, one product per strength and form (covered first)."""
    seen: dict[tuple[str, str], Product] = {}
    for r in sorted(u.listed, key=lambda r: (not r.is_benefit, r.din)):
        seen.setdefault((r.strength or "", r.dosage_form or ""), r)
    shown = sorted(seen.values(), key=lambda r: (r.strength or "", r.din))
    asked = " ".join(x for x in (u.strength, u.form) if x)
    listed = "; ".join(
        " ".join(x for x in (r.strength, r.dosage_form) if x) or r.din for r in shown
    )
    return NotListed(
        name=u.name,
        strength=u.strength,
        form=u.form,
        message=f"{u.name} is not listed at {asked}; listed: {listed}.",
        listed=[brand_of(r) for r in shown[:top_k]],
    )


def coverage(q: Query, data: SqlData, p: Product) -> Coverage:
    return Coverage(
        covered=bool(p.is_benefit),
        din=p.din,
        brand_name=p.brand_name,
        generic_name=p.generic_name,
        strength=p.strength,
        dosage_form=p.dosage_form,
        group_id=p.group_id,
        lu_required=bool(p.lu_required or p.lu_codes),
        lu_codes=[r.lu_code for r in data.lu] if q.include_lu else [],
        lu_criteria=(lu_text(data.lu, q.condition) or no_lu(p)) if q.include_lu else None,
        notes=[n.summary for n in data.notes] if q.include_lu else [],
    )


def lowest_of(data: SqlData) -> Product | None:
    """The group's cheapest covered product (the group's own lowest-cost DIN breaks a tie)."""
    lowest_din = data.group.lowest_cost_din if data.group else None
    priced = [r for r in data.members if r.is_benefit and r.individual_price is not None]
    return min(
        priced, key=lambda r: (r.individual_price or 0.0, r.din != lowest_din, r.din), default=None
    )


def interchangeable(q: Query, data: SqlData, p: Product) -> list[Interchangeable]:
    """The group's products as the lists show them; the requested one stays in the top_k."""
    members = [r for r in data.members if q.keep(r)]
    top = members[: q.top_k]
    if p in members and p not in top:
        top = [*top[: q.top_k - 1], p]
    return [
        Interchangeable(
            din=r.din, brand=r.brand_name, price=r.individual_price, lowest_cost=bool(r.lowest_cost)
        )
        for r in top
    ]


def alternatives(q: Query, data: SqlData) -> list[Alternative]:
    return [
        Alternative(
            din=r.din,
            brand=r.brand_name,
            generic_name=r.generic_name,
            strength=r.strength,
            price=r.individual_price,
            lu_required=bool(r.lu_required),
            reason=data.alt_basis or "",
        )
        for r in data.alternatives
        if q.keep(r)
    ][: q.top_k]


def price_comparison(p: Product, lowest: Product, savings: float | None) -> PriceComparison:
    price = p.individual_price
    return PriceComparison(
        requested_din=p.din,
        requested_brand=p.brand_name,
        requested_price=price,
        amount_odb_pays=p.amount_mohltc_pays,
        lowest_cost_din=lowest.din,
        lowest_cost_brand=lowest.brand_name,
        lowest_cost_price=lowest.individual_price,
        savings_per_unit=savings,
        savings_percent=round(100 * savings / price, 1) if savings is not None and price else None,
    )


def full_criteria(data: SqlData) -> list[str]:
    """lu_criteria: each LU code and product note in full, for the context."""
    return [
        f"LU {r.lu_code}: {r.indication} (authorization period: {r.period or 'not stated'})"
        for r in data.lu
    ] + [f"Formulary note ({n.scope}): {n.summary}" for n in data.notes]


def other_strengths(data: SqlData) -> str:
    return "Other strengths: " + "; ".join(
        f"{g.strength} {g.dosage_form} (group {g.group_id}, lowest "
        f"{g.lowest_cost_din or 'n/a'} at {g.lowest_price})"
        for g in data.strengths
    )


def answer(q: Query, data: SqlData, hits: list[VectorHit], from_sql: bool) -> Answer:
    """Every part of the answer the checks ask for, from the formulary rows."""
    checks, p, found = q.checks, data.primary, data.found
    lowest = lowest_of(data)
    savings = None
    if p and lowest and p.individual_price is not None and found.kind != "class":
        savings = round(p.individual_price - (lowest.individual_price or 0.0), 4)
    shown_alternatives = (
        alternatives(q, data)
        if q.check_alternatives
        and p
        and ("alternatives" in checks or not p.is_benefit or found.kind == "class")
        else []
    )
    context = found.readings + snippets(hits, hybrid=from_sql and p is not None)
    if "lu_criteria" in checks:
        context += full_criteria(data)
    brands = (
        [brand_of(r) for r in data.same_ingredient if q.keep(r)]
        if "all_strengths" in checks
        else []
    )
    missing = not_listed(data.unmatched, q.top_k) if p is None and data.unmatched else None
    others = (
        [r for r in found.rows if r.brand_name == p.brand_name and r.din != p.din]
        if p and found.kind == "brand" and not (found.strength or found.form)
        else []
    )[: q.top_k]
    if "all_strengths" in checks and len(data.strengths) > 1:
        context.append(other_strengths(data))
    answered = [r for r in (p, lowest) if r] + (data.alternatives[:2] if shown_alternatives else [])
    answered += others
    if missing and data.unmatched:  # the evidence for what is listed instead
        listed = {b.din for b in missing.listed}
        answered += [r for r in data.unmatched.listed if r.din in listed][:3]
    return Answer(
        data=data,
        hits=hits,
        from_sql=from_sql,
        coverage=coverage(q, data, p) if p and checks & {"coverage", "lu_criteria"} else None,
        interchangeable=interchangeable(q, data, p)
        if q.check_alternatives and checks & {"interchangeable", "interchangeable_group"} and p
        else [],
        lowest_cost=LowestCost(
            din=lowest.din, brand=lowest.brand_name, price=lowest.individual_price, savings=savings
        )
        if lowest and (checks & {"lowest_cost", "price_comparison"} or found.kind == "class")
        else None,
        alternatives=shown_alternatives,
        price_comparison=price_comparison(p, lowest, savings)
        if p and lowest and found.kind != "class" and checks & {"price_comparison", "lowest_cost"}
        else None,
        context=context,
        brands=brands,
        others=others,
        not_listed=missing,
        answered=answered,
    )
