"""What schedule.get says about a code's fee: every component column the Schedule lists, every
listing when the code has more than one, and a sentence that says both in words.

The extracted Schedule gives a fee per row and, for diagnostic and surgical tables, the
columns beside it. The item's `fee` is the listing's fee; alone it hides half of a diagnostic
service (the technical component sits in `fee`, the professional one only beside it) and a
code priced only in its professional column reads as "no fee". So each item carries the
columns as listed (`fee_components`) and, for a code listed with different fees (a specialty's
table against another, a premium against a flat fee), each listing (`fee_variants`).

What the columns mean was read from the extracted Schedule (section_*_extracted.json): rows
described as a "technical component" carry their amount in the H column, rows described as a
"professional component" in the P column, and the Schedule pays a technical component rendered
in a hospital as a percentage of the listed amount. T holds values only in a few surgical and
endoscopy tables, where it repeats the procedure fee or a unit count; the assistant, surgeon
and anaesthetist columns of the surgical tables mostly hold basic units. `COMPONENT_HELP`
says this to clients.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from reference_server.retrieval.ohip_schedule import FeeRow

Component = Literal["H", "P", "T", "assistant", "surgeon", "anaesthetist"]

# the components of `FeeRow.component_columns` (h_fee ... anae_fee), in the order the Schedule
# prints them
COLUMNS: tuple[Component, ...] = ("H", "P", "T", "assistant", "surgeon", "anaesthetist")
MEANING: dict[Component, str] = {
    "H": "technical component (H)",
    "P": "professional component (P)",
    "T": "T column",
    "assistant": "surgical assistant column",
    "surgeon": "surgeon column",
    "anaesthetist": "anaesthetist column",
}
# Columns that can price a row with no fee of its own; the surgical ones mostly hold unit counts.
DOLLAR_COMPONENTS = ("H", "P", "T")

COMPONENT_HELP = (
    "Fee components as the Schedule's columns list them, one entry per column present (0.0 "
    "kept). H = technical component (equipment, staff and supplies of a diagnostic or "
    "therapeutic service; rendered in a hospital it is paid at a percentage of this amount); P = "
    "professional component (the physician's performance and interpretation); T = a further "
    "column the extract carries for a few surgical and endoscopy codes (its value repeats the "
    "procedure fee or is a unit count: read it with the Schedule page); assistant, surgeon, "
    "anaesthetist = the surgical tables' columns, usually basic units rather than dollars. "
    "When the code has several listings, every listing's columns are here (see fee_variants)."
)


class FeeComponent(BaseModel):
    component: Component = Field(
        description="H (technical), P (professional), T, assistant, surgeon or anaesthetist."
    )
    fee: float = Field(description="The value in that column (dollars for H and P).")


class FeeVariant(BaseModel):
    fee: float | None = Field(description="This listing's fee in dollars (null if none).")
    fee_kind: str = Field(
        description=(
            "flat, per_unit, per_diem, add_on, percent, add_units, independent_consideration "
            "or missing (no fee in the fee column)."
        )
    )
    description: str = Field(description="The listing's service description.")
    page_ref: str = Field(description="Schedule page of the table that lists it, e.g. 'A1'.")
    table: str = Field(description="Title of the Schedule table (subsection) that lists it.")
    n_source_tables: int = Field(description="How many extracted tables give this fee.")
    fee_components: list[FeeComponent] = Field(description="This listing's component columns.")


def components(row: FeeRow) -> list[FeeComponent]:
    """One entry per component column the row carries, 0.0 included, in the Schedule's order."""
    return [
        FeeComponent(component=name, fee=float(value))
        for name, value in zip(COLUMNS, row.component_columns, strict=True)
        if value is not None
    ]


def listing_fee(row: FeeRow) -> tuple[float | None, str | None]:
    """The fee a listing answers, and a note when it is read from a component column.

    A row with no fee of its own but exactly one amount in H, P or T is priced by that
    component (a professional-only code is not 'no fee'); anything else keeps the fee column.
    """
    if row.fee is not None:
        return float(row.fee), None
    priced = [c for c in components(row) if c.component in DOLLAR_COMPONENTS]
    if len(priced) == 1:
        only = priced[0]
        return only.fee, f"The Schedule lists only the {MEANING[only.component]} for this code."
    return None, None


def all_components(rows: list[FeeRow]) -> list[FeeComponent]:
    """Every listing's component columns, each (component, value) once, main listing first."""
    out: list[FeeComponent] = []
    for row in rows:
        out += [c for c in components(row) if c not in out]
    return out


def variants(rows: list[FeeRow]) -> list[FeeVariant]:
    """Each listing of a code that has more than one (empty for a code listed once)."""
    if len(rows) < 2:
        return []
    return [
        FeeVariant(
            fee=listing_fee(r)[0],
            fee_kind=r.fee_kind or "missing",
            description=r.description or "",
            page_ref=r.page_ref or "",
            table=r.subsection_title or "",
            n_source_tables=int(r.n_source_rows or 0),
            fee_components=components(r),
        )
        for r in rows
    ]


KIND_WORDS = {"per_unit": " per unit", "per_diem": " per diem", "add_on": " add-on"}


def _listed(row: FeeRow) -> str:
    """A listing's fee as the Schedule states it: '$9.55 per unit', '+10% premium'."""
    kind = row.fee_kind or ""
    if kind == "percent" and row.fee_percent is not None:
        return f"+{float(row.fee_percent):g}% premium"
    if kind == "independent_consideration":
        return "independent consideration"
    value = listing_fee(row)[0]
    return "no fee listed" if value is None else f"${value:,.2f}{KIND_WORDS.get(kind, '')}"


def _columns(parts: list[FeeComponent]) -> str:
    return "; ".join(f"{MEANING[c.component]} {c.fee:g}" for c in parts)


def _tables(n: int) -> str:
    return f"{n} table" + ("" if n == 1 else "s")


def fee_note(code: str, rows: list[FeeRow]) -> str | None:
    """The components and listings in words, for readers of the text rather than the fields."""
    if not rows:
        return None
    sentences: list[str] = []
    main = rows[0]
    parts = components(main)
    priced = [c for c in parts if c.component in ("H", "P")]
    _, only = listing_fee(main)
    if len(priced) > 1:
        listed = " and ".join(f"{MEANING[c.component]} ${c.fee:,.2f}" for c in priced)
        sentences.append(f"{code} is priced by component: {listed}.")
    elif only:
        sentences.append(only)
    rest = [c for c in parts if len(priced) < 2 or c not in priced]
    if rest and not only:
        sentences.append(f"Columns listed beside the fee: {_columns(rest)}.")
    if any(c.component not in ("H", "P") for c in parts):
        sentences.append(
            "The T and surgical columns often hold unit counts, not dollars: read them with "
            "the Schedule page."
        )
    if len(rows) > 1:
        listed = "; ".join(
            f"{_listed(r)} in {r.page_ref or '?'} "
            f"{r.subsection_title or ''} ({_tables(int(r.n_source_rows or 0))})"
            for r in rows
        )
        sentences.append(
            f"The Schedule lists {code} {len(rows)} times, on different terms: {listed}. "
            "`fee` shows the first; confirm which applies to your specialty and setting."
        )
    return " ".join(sentences) or None
