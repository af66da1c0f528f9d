"""The rows `odb.py` writes to corpus/off (odb_drugs.csv, odb_interchangeable_groups.csv,
odb_lu_codes.csv), their column orders, and the result `odb.parse` returns.

Kept apart from the XML walk so the CSV writer (`off_cli.py`) reads the shapes without the
derivation rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from .odb_notes import NoteRow

# One odb_drugs.csv row: fixed facts plus one column per <drug> attribute (flags as booleans,
# other values as text), so its columns are only known once the extract is read.
DrugCell = str | float | bool | None
DrugRow = dict[str, DrugCell]


class GroupMeta(TypedDict):
    group_id: str
    pcg9_id: str
    generic_name: str
    ingredient: str
    strength: str
    dosage_form: str
    therapeutic_class: str
    lu_codes: str


class GroupRow(GroupMeta):
    """One odb_interchangeable_groups.csv row."""

    n_drugs: int
    n_benefit: int
    lowest_price: float | None
    lowest_cost_din: str
    n_lowest_cost: int
    atc_code: str
    atc_class: str


class LuRow(TypedDict):
    """One odb_lu_codes.csv row."""

    lu_code: str
    dins: str
    group_ids: str
    generic_names: str
    n_dins: int
    indication: str
    period: str
    period_days: int | None


class OdbMeta(TypedDict):
    create_date: str
    formulary_date: str
    edition: str
    update_version: str
    n_manufacturers: int


@dataclass
class OdbResult:
    drugs: list[DrugRow]
    groups: list[GroupRow]
    lu_codes: list[LuRow]
    meta: OdbMeta
    notes: list[NoteRow] = field(default_factory=list)
    flag_columns: list[str] = field(default_factory=list)


DRUG_COLUMNS = [
    "din",
    "brand_name",
    "generic_name",
    "ingredient",
    "strength",
    "dosage_form",
    "manufacturer_id",
    "manufacturer",
    "individual_price",
    "amount_mohltc_pays",
    "daily_cost",
    "listing_date",
    "is_benefit",
    "lu_required",
    "lu_codes",
    "lowest_cost",
    "group_id",
    "pcg9_id",
    "therapeutic_class",
    "therapeutic_subclass",
    "atc_code",
    "atc_class",
]
GROUP_COLUMNS = [
    "group_id",
    "pcg9_id",
    "generic_name",
    "ingredient",
    "strength",
    "dosage_form",
    "therapeutic_class",
    "n_drugs",
    "n_benefit",
    "lowest_price",
    "lowest_cost_din",
    "n_lowest_cost",
    "lu_codes",
    "atc_code",
    "atc_class",
]
LU_COLUMNS = [
    "lu_code",
    "indication",
    "period",
    "period_days",
    "n_dins",
    "dins",
    "group_ids",
    "generic_names",
]
