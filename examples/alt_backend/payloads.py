"""The four tools' answers as this backend builds them: plain dicts, typed here with the shapes
``schemas.json`` publishes (keys in the order the answers write them)."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class Citation(TypedDict):
    """A public key in ``loc`` and this backend's passage id (``source.passages`` shows it)."""

    source: str
    loc: str
    chunk_id: str
    page: int | None


class Conflict(TypedDict):
    """Tables that disagree on a value: the values found, and which one was answered."""

    field: str
    sql_value: list[float]
    vector_value: None
    resolution: str


# ---------------------------------------------------------------------- odb.get


class ProductRow(TypedDict):
    din: str
    brand: str
    strength: str | None
    dosage_form: str | None
    group_id: str
    covered: bool
    lu_required: bool
    price: float | None


class Coverage(TypedDict):
    covered: bool
    din: str
    brand_name: str
    generic_name: str
    strength: str | None
    dosage_form: str | None
    group_id: str
    lu_required: bool
    lu_criteria: str | None
    lu_codes: list[str]
    notes: list[str]


class InterchangeableRow(TypedDict):
    din: str
    brand: str
    price: float | None
    lowest_cost: bool


class LowestCost(TypedDict):
    din: str
    brand: str
    price: float | None
    savings: float | None


class PriceComparison(TypedDict):
    requested_din: str
    requested_brand: str
    requested_price: float | None
    amount_odb_pays: float | None
    lowest_cost_din: str
    lowest_cost_brand: str
    lowest_cost_price: float | None
    savings_per_unit: float | None
    savings_percent: float | None


class Alternative(TypedDict):
    din: str
    brand: str
    generic_name: str
    strength: str | None
    price: float | None
    lu_required: bool
    reason: str


class NotListed(TypedDict):
    """The product is listed, but not at the strength or form asked."""

    name: str
    strength: str | None
    form: str | None
    message: str
    listed: list[ProductRow]


class OdbResult(TypedDict):
    provenance: list[str]
    confidence: float
    coverage: Coverage | None
    interchangeable: list[InterchangeableRow]
    lowest_cost: LowestCost | None
    context: list[str]
    alternatives: list[Alternative]
    price_comparison: PriceComparison | None
    needs_more_info: NotRequired[bool]  # left out by the seeded defect ``missing_field``
    citations: list[Citation]
    conflicts: list[Conflict]
    brands: list[ProductRow]
    other_strengths: list[ProductRow]
    not_listed: NotListed | None


# ---------------------------------------------------------------------- schedule.get


class FeeComponent(TypedDict):
    component: str
    fee: float


class FeeVariant(TypedDict):
    """One amount the tables give for a code, as its first table lists it."""

    fee: float | None
    fee_kind: str
    description: str
    page_ref: str
    table: str
    n_source_tables: int
    fee_components: list[FeeComponent]


class ScheduleItem(TypedDict):
    code: str
    description: str
    fee: float | None
    fee_components: list[FeeComponent]
    fee_variants: list[FeeVariant]
    fee_note: str | None
    requirements: str | None
    limits: str | None
    page_num: int | None


class ScheduleResult(TypedDict):
    provenance: list[str]
    confidence: float
    items: list[ScheduleItem]
    citations: list[Citation]
    conflicts: list[Conflict]
    needs_more_info: bool
    unknown_codes: list[str]


# ---------------------------------------------------------------------- adp.get


class OtherCriteria(TypedDict):
    category: str
    device: str
    location: NotRequired[str]
    independent_transfer: NotRequired[bool]
    concerns: NotRequired[list[str]]


class Eligibility(TypedDict):
    basic_mobility: bool | None
    ontario_resident: bool | None
    valid_prescription: bool | None
    other_criteria: OtherCriteria


class Funding(TypedDict):
    client_share_percent: float | None
    adp_contribution: float | None
    max_contribution: float | None
    repair_coverage: str | None
    client_share_paid_by: str | None


class CepCheck(TypedDict):
    """The income check for the client's share (the specification's thresholds)."""

    income_threshold: float
    eligible: bool
    client_share: float


class AdpResult(TypedDict):
    provenance: list[str]
    confidence: float
    summary: str
    interpretation_notes: dict[str, str]
    context: str
    eligibility: Eligibility | None
    exclusions: list[str]
    policy_rules: list[str]
    funding: Funding | None
    cep: CepCheck | None
    lead: str
    citations: list[Citation]
    conflicts: list[Conflict]


# ---------------------------------------------------------------------- source.passages


class PassageRow(TypedDict):
    chunk_id: str
    text: str
    source: str
    page: int | None
    section: str | None
    highlights: list[str]


class PassagesResult(TypedDict):
    passages: list[PassageRow]
    total_chunks: int
    missing_ids: list[str]


ToolAnswer = OdbResult | ScheduleResult | AdpResult | PassagesResult
