"""The rows `ohip.py` writes to corpus/off (ohip_fee_schedule.csv, ohip_dropped.csv,
ohip_subsections.csv), their column orders, and the result `ohip.load` returns.

Kept apart from the loader so the CSV writer (`off_cli.py`) reads the shapes without the
fee-parsing rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


class FeeRow(TypedDict):
    """One ohip_fee_schedule.csv row: one (code, fee)."""

    code: str
    description: str
    fee: float | None
    fee_kind: str
    fee_percent: float | None
    h_fee: float | None
    p_fee: float | None
    asst_fee: float | None
    surg_fee: float | None
    anae_fee: float | None
    t_fee: float | None
    units: str
    requirements: str
    limits: str
    special_prefix: str
    section: str
    subsection_title: str
    subsection_n: int | None
    page_ref: str
    pdf_pages: str
    n_source_rows: int
    conflict_group: str
    n_fee_variants: int


class DroppedRow(TypedDict):
    """One ohip_dropped.csv row: source rows dropped for one (code, raw fee, reason)."""

    code: str
    fee_raw: str
    reason: str
    n_rows: int
    page_refs: str


class SubsectionRow(TypedDict):
    """One ohip_subsections.csv row."""

    subsection_n: int
    section: str
    subsection_title: str
    page_ref: str
    pdf_pages: str
    plausible_pages: bool
    n_source_rows: int
    n_codes: int


class OhipMeta(TypedDict):
    source_pdf: list[str]
    edition: str
    rows_in: int
    unique_codes_in: int


@dataclass
class OhipResult:
    rows: list[FeeRow]
    dropped: list[DroppedRow]
    subsections: list[SubsectionRow]
    meta: OhipMeta


FEE_COLUMNS = [
    "code",
    "description",
    "fee",
    "fee_kind",
    "fee_percent",
    "h_fee",
    "p_fee",
    "asst_fee",
    "surg_fee",
    "anae_fee",
    "t_fee",
    "units",
    "requirements",
    "limits",
    "special_prefix",
    "section",
    "subsection_title",
    "subsection_n",
    "page_ref",
    "pdf_pages",
    "n_source_rows",
    "conflict_group",
    "n_fee_variants",
]
DROPPED_COLUMNS = ["code", "fee_raw", "reason", "n_rows", "page_refs"]
SUBSECTION_COLUMNS = [
    "subsection_n",
    "section",
    "subsection_title",
    "page_ref",
    "pdf_pages",
    "plausible_pages",
    "n_source_rows",
    "n_codes",
]
