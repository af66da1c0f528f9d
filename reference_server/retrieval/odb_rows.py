"""The ODB formulary's typed rows (products, interchangeable groups, LU codes, product notes) and
what the formulary searches return: the products a query names (`Found`) and everything odb.get
answers from (`SqlData`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reference_server.retrieval.drug_form import FormWord
from reference_server.retrieval.sql import SqlClient, as_rows, select_list


@dataclass(frozen=True)
class DrugQuery:
    """What odb.get looks up, whichever request form named it."""

    drug: str | None = None
    q: str | None = None
    din: str | None = None
    ingredient: str | None = None
    strength: str | None = None
    drug_class: str | None = None
    condition: str | None = None
    exclude_lu: bool = False
    form: str | None = None


@dataclass(frozen=True)
class Product:
    """A formulary product: the `odb_drugs` columns odb.get reads (flags are the table's 0/1)."""

    din: str
    brand_name: str
    generic_name: str
    ingredient: str
    group_id: str
    is_benefit: int
    lu_required: int
    lowest_cost: int
    strength: str | None = None
    dosage_form: str | None = None
    individual_price: float | None = None
    amount_mohltc_pays: float | None = None
    lu_codes: str | None = None  # 'code;code'
    atc_code: str | None = None
    drug_class: str | None = None  # 'class;class'


@dataclass(frozen=True)
class Group:
    """An interchangeable group (`odb_interchangeable_groups`)."""

    group_id: str
    lowest_cost_din: str | None = None
    lowest_price: float | None = None
    strength: str | None = None
    dosage_form: str | None = None
    n_benefit: int = 0
    lu_codes: str | None = None


@dataclass(frozen=True)
class LuCode:
    lu_code: str
    indication: str
    period: str | None
    generic_names: str


@dataclass(frozen=True)
class Note:
    """A formulary product note (project summary)."""

    note_id: str
    scope: str
    summary: str


PRODUCT = select_list(Product)
SELECT_PRODUCTS = f"SELECT {PRODUCT} FROM odb_drugs"
GROUP = select_list(Group)


def products(db: SqlClient, where: str, params: tuple[Any, ...] | list[Any] = ()) -> list[Product]:
    return as_rows(Product, db.query(f"{SELECT_PRODUCTS} {where}", params))


@dataclass
class Found:
    """The products a query names. `tiers` orders them for the strength and form asked: the
    brand's own products, then products whose generic name is the name as written, then every
    product of its ingredient (only when no generic name is the name written, and a brand's
    name only when it is the ingredient's own name)."""

    kind: Literal["din", "brand", "ingredient", "class", "none"] = "none"
    rows: list[Product] = field(default_factory=list)
    class_name: str | None = None
    strength: str | None = None
    name: str | None = None
    tiers: list[list[Product]] = field(default_factory=list)
    form: FormWord | None = None
    readings: list[str] = field(default_factory=list)  # how the request's words were read
    homonym: Homonym | None = None  # the name is also a brand of other products


@dataclass(frozen=True)
class Unmatched:
    """The name was found, but not at the strength or in the form asked: what is listed."""

    name: str
    strength: str | None
    form: str | None
    listed: list[Product]


@dataclass(frozen=True)
class SqlData:
    found: Found
    primary: Product | None = None
    group: Group | None = None
    members: list[Product] = field(default_factory=list)
    lu: list[LuCode] = field(default_factory=list)
    strengths: list[Group] = field(default_factory=list)
    same_ingredient: list[Product] = field(default_factory=list)  # every group
    notes: list[Note] = field(default_factory=list)  # the primary product's notes
    alternatives: list[Product] = field(default_factory=list)
    alt_basis: str | None = None
    unmatched: Unmatched | None = None

    @property
    def records(self) -> int:
        return int(self.primary is not None) + len(self.members) + len(self.lu)


@dataclass(frozen=True)
class Homonym:
    """The name written is also a brand of other products than the generic name it answers."""

    written: str
    brand: str  # 'Clindamycin (CLINDAMYCIN HCL 150mg, 300mg)'
    rows: list[Product]

    def reading(self, answered: list[Product]) -> str:
        if answered and all(r in self.rows for r in answered):
            return f"'{self.written}' read as the brand {self.brand}: it is also a generic name."
        return (
            f"'{self.written}' read as the generic name; it is also the brand {self.brand}, "
            "not answered here (ask with its strength)."
        )


def price_order(r: Product) -> tuple[float, str]:
    """Cheapest first, the DIN breaking ties: the order every price ranking here uses."""
    price = r.individual_price
    return (price if price is not None else float("inf"), r.din)
