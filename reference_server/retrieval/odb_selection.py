"""Which of the products a query names answer it: those at the strength and in the dosage form
asked (`select`), the one the answer is about (`pick_primary`), and the cheapest covered product
of each other ingredient (`cheapest_per_ingredient`)."""

from __future__ import annotations

import re

from reference_server.retrieval import drug_form, drug_strength
from reference_server.retrieval.odb_rows import Found, Product, Unmatched


def _filtered(rows: list[Product], found: Found) -> list[Product]:
    """The rows at the strength and in the form asked: the strength as the formulary writes it
    first, then written otherwise ('50 units' for '50U/Vial'), then close ('100 units/mL' for
    '1000U/10mL', '25 mcg' for a patch's '25mcg/hr')."""
    if found.strength:
        matched = [(r, drug_strength.same_strength(found.strength, r.strength)) for r in rows]
        asked = drug_strength.normal_text(found.strength)
        rows = (
            [r for r, m in matched if m and drug_strength.normal_text(r.strength) == asked]
            or [r for r, m in matched if m == "exact"]
            or [r for r, m in matched if m == "close"]
        )
    if found.form and rows:
        rows = [rows[i] for i in drug_form.matching(found.form, [form_of(r) for r in rows])]
    return rows


def form_of(r: Product) -> str | None:
    """The product's dosage form; a product listed without one whose strength cell states no
    amount but a form ('Strip', a test strip's cell shifted by a column) is in that form."""
    if r.dosage_form:
        return r.dosage_form
    cell = r.strength or ""
    return cell if cell and not re.search(r"\d", cell) and drug_form.kind_of(cell) else None


def select(found: Found) -> tuple[list[Product], Unmatched | None]:
    """The products answering the query: the first tier with one at the strength and in the
    form asked. None there: no product, and what the name is listed at."""
    tiers = found.tiers or ([found.rows] if found.rows else [])
    if not tiers:
        return [], None
    if not (found.strength or found.form) or found.kind == "din":
        return _said(found, tiers[0]), None
    for n, tier in enumerate(tiers):
        rows = _filtered(tier, found)
        if rows:
            if n and found.kind == "brand":  # a generic's product, not the brand of that name
                found.kind = "ingredient"
            return _said(found, rows), None
    if found.kind == "class":  # a class question's strength only narrows it
        return found.rows, None
    unmatched = Unmatched(
        name=found.name or "",
        strength=found.strength,
        form=found.form.word if found.form else None,
        listed=tiers[0],
    )
    return [], unmatched


def _said(found: Found, rows: list[Product]) -> list[Product]:
    """`rows`, with the reading of a name that is also a brand of other products said once."""
    if found.homonym is not None:
        if rows and all(r in found.homonym.rows for r in rows):  # only the brand is listed so
            found.kind, found.name = "brand", rows[0].brand_name
        reading = found.homonym.reading(rows)
        if reading not in found.readings:
            found.readings.append(reading)
    return rows


def pick_primary(found: Found, rows: list[Product] | None = None) -> Product | None:
    """The product the answer is about: the DIN; else one at the strength and form asked
    (`select`), a benefit first; for an ingredient its lowest-cost product, else the oldest DIN."""
    rows = select(found)[0] if rows is None else rows
    if not rows:
        return None
    if found.kind == "class":  # class rows come cheapest first (class_members)
        return next((r for r in rows if r.is_benefit), rows[0])
    if found.kind == "ingredient":
        return min(rows, key=lambda r: (not r.is_benefit, not r.lowest_cost, r.din))
    return min(rows, key=lambda r: (not r.is_benefit, r.din))


def cheapest_per_ingredient(
    rows: list[Product],
    skip_group: str | None,
    exclude_lu: bool,
    skip_ingredient: str | None = None,
) -> list[Product]:
    """The cheapest covered product of each ingredient, cheapest first.

    `rows` must come cheapest first (`price_order`): an ingredient's first qualifying row is
    then its cheapest, and the rows kept are already in order."""
    best: dict[str, Product] = {}
    for r in rows:
        ingredient = r.ingredient
        if (
            ingredient in best
            or ingredient == skip_ingredient
            or not r.is_benefit
            or r.group_id == skip_group
            or (exclude_lu and r.lu_required)
        ):
            continue
        best[ingredient] = r
    return list(best.values())
