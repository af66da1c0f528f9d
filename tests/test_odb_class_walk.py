"""odb.get's class answers walk the class's products cheapest first (read and sorted once per
process): the walk must give what comparing every product gives."""

from __future__ import annotations

import pytest

from reference_server.config import Settings
from reference_server.retrieval import odb_rows
from reference_server.retrieval.odb_classes import class_members
from reference_server.retrieval.odb_rows import Found, Product, price_order
from reference_server.retrieval.odb_selection import cheapest_per_ingredient, pick_primary
from reference_server.retrieval.sql import SqlClient


def _brute_cheapest(rows: list[Product], skip_group: str, skip_ingredient: str) -> list[str]:
    best: dict[str, Product] = {}
    for r in rows:
        if not r.is_benefit or r.group_id == skip_group or r.ingredient == skip_ingredient:
            continue
        if r.ingredient not in best or price_order(r) < price_order(best[r.ingredient]):
            best[r.ingredient] = r
    return [r.din for r in sorted(best.values(), key=price_order)]


@pytest.mark.parametrize("drug_class", ["statin", "ssri", "ppi"])
def test_the_walk_gives_the_brute_force_answer(settings: Settings, drug_class: str) -> None:
    db = SqlClient(settings.ohip_db)
    rows = class_members(db, drug_class)
    assert rows, f"no {drug_class} products in the index"
    assert rows == sorted(rows, key=price_order)
    found = Found("class", rows, class_name=drug_class)
    primary = pick_primary(found)
    covered = [r for r in rows if r.is_benefit]
    assert primary == min(covered or rows, key=price_order)
    assert primary is not None
    got = cheapest_per_ingredient(rows, primary.group_id, False, primary.ingredient)
    assert [r.din for r in got] == _brute_cheapest(rows, primary.group_id, primary.ingredient)
    assert got, "a class of several ingredients has alternatives"


def test_typed_rows_read_exactly_their_columns(settings: Settings) -> None:
    """A product row wraps the SQL client's dict: the SELECT list is the row type's fields."""
    db = SqlClient(settings.ohip_db)
    (row,) = odb_rows.products(db, "WHERE din = ?", ("02443937",))
    assert isinstance(row, Product) and row.din == "02443937"
    assert set(vars(row)) == {f for f in odb_rows.PRODUCT.split(", ")}
    assert row == Product(**vars(row))
