"""Drug classes of the ODB formulary: which class a text names (class name, label or synonym,
drug_classes.yaml via odb_drug_class) and a class's member products, cheapest first.

Both are read once per index and process (`db.derived`): the class names would be compiled, and
a class's members copied and sorted, on every call otherwise.
"""

from __future__ import annotations

import re

from reference_server.retrieval.odb_rows import Product, price_order, products
from reference_server.retrieval.sql import SqlClient

NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def class_named_in(db: SqlClient, text: str) -> str | None:
    """A drug class named by class name, label or synonym (drug_classes.yaml via odb_drug_class):
    the longest name found as whole words (a trailing plural 's' allowed)."""
    t = " " + NOT_ALNUM.sub(" ", text.lower()) + " "
    best: tuple[int, str] | None = None
    for name, class_name in db.derived.get("odb_class_names", lambda: _class_names(db)):
        if (f" {name} " in t or f" {name}s " in t) and (best is None or len(name) > best[0]):
            best = (len(name), class_name)
    return best[1] if best else None


def _class_names(db: SqlClient) -> tuple[tuple[str, str], ...]:
    """(normalised name, class) for every class name, label and synonym, read once per index:
    compiling a pattern per name on every call cost 10% of odb.get at 10x (more names than
    Python's pattern cache holds)."""
    out = []
    for r in db.query("SELECT DISTINCT class_name, label, synonyms FROM odb_drug_class"):
        for n in [r["class_name"], r["label"] or "", *(r["synonyms"] or "").split(";")]:
            name = re.sub(r"[^a-z0-9]+", " ", n.lower()).strip()
            if len(name) > 2:
                out.append((name, r["class_name"]))
    return tuple(out)


def class_members(db: SqlClient, name: str) -> list[Product]:
    """Products whose ATC code is in the class, plus same-ingredient products without an ATC
    code, cheapest first (`price_order`).

    A class's members are reference data of a read-only index, and they grow with the
    formulary (statins: 304 products at 1x, 30,400 at 100x): they are read and sorted once per
    class and process, so a call walks them from the cheapest instead of copying and comparing
    them all (the cheapest-statin question: 158 ms at 100x before). Callers share the rows and
    must not edit them.
    """
    return db.derived.get(
        f"odb_formulary.class_members:{name}",
        lambda: sorted(_read_class_members(db, name), key=price_order),
    )


def _read_class_members(db: SqlClient, name: str) -> list[Product]:
    """The class is matched against the few distinct `drug_class` values (an index scan) and
    rows are then fetched through the `drug_class` and `ingredient` indexes, not by scanning
    every product with LIKE."""
    values = [
        r["drug_class"]
        for r in db.query("SELECT DISTINCT drug_class FROM odb_drugs WHERE drug_class != ''")
        if name in r["drug_class"].split(";")
    ]
    if not values:
        return []
    marks = ",".join("?" * len(values))
    members = products(db, f"WHERE drug_class IN ({marks})", values)
    ingredients = sorted({r.ingredient for r in members})
    marks = ",".join("?" * len(ingredients))
    # coalesce() keeps the planner on the ingredient index: with `atc_code IS NULL OR
    # atc_code = ''` it read every product without an ATC code through the atc_code index
    # (6.3 ms at 1x, 18.9 ms at 10x; now 0.3 and 0.5 ms, same rows).
    unclassified = products(
        db, f"WHERE ingredient IN ({marks}) AND coalesce(atc_code, '') = ''", ingredients
    )
    return members + unclassified
