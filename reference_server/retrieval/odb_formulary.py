"""The ODB formulary store's two searches: the SQL path (`keyword_search`) and the vector path
(`vector_search`, `from_passages`).

`keyword_search` resolves the drug a query names (`odb_names`), chooses the products at the
strength and form asked (`odb_selection`) and reads everything odb.get answers from: the
product, its interchangeable group, its LU codes and product notes, every product of the same
ingredient in any group (biosimilars are listed in groups of their own), and covered
alternatives of the same class. `vector_search` returns the group passages naming the drug, the
nearest group and LU passages, and the best policy notes; `from_passages` rebuilds the product
and its group from a group passage when the SQL path is down. The rows and results the tools
read (`odb_rows`) are exported from here too, so a tool imports the store it asks.
"""

from __future__ import annotations

import re

from reference_server.catalog import OFF_COLLECTIONS
from reference_server.retrieval import drug_strength
from reference_server.retrieval.odb_classes import class_members
from reference_server.retrieval.odb_names import WORD, ingredient_key, longest_name, resolve
from reference_server.retrieval.odb_rows import (
    GROUP,
    DrugQuery,
    Found,
    Group,
    LuCode,
    Note,
    Product,
    SqlData,
    Unmatched,
    price_order,
    products,
)
from reference_server.retrieval.odb_selection import cheapest_per_ingredient, pick_primary, select
from reference_server.retrieval.sql import SqlClient, as_rows, select_list
from reference_server.retrieval.vector import VectorClient, VectorHit, Where

__all__ = [
    "COLLECTION",
    "COVERAGE_TEXT",
    "DrugQuery",
    "LuCode",
    "Product",
    "SqlData",
    "Unmatched",
    "from_passages",
    "keyword_search",
    "longest_name",
    "vector_search",
]

COLLECTION = OFF_COLLECTIONS["odb"]
VECTOR_CANDIDATES = 8
POLICY_CANDIDATES = 2
# the similarity search ranks group and LU passages; notes reach answers by DIN, policy apart
FORMULARY_DOCS: Where = {"doc_type": {"$in": ["group", "lu_code"]}}
COVERAGE_TEXT = re.compile(r"Coverage: ([^.]+)\.")
GROUP_LINE = re.compile(r"^- (.+?) \(DIN (\d{8}).*?\): (\$[\d.,]+|n/a)", re.M)


def keyword_search(db: SqlClient, query: DrugQuery) -> SqlData:
    """SQL path: the product the query names and everything odb.get answers from."""
    found = resolve(db, query)
    if found.kind == "class" and query.exclude_lu:
        found.rows = [r for r in found.rows if not r.lu_required]
    chosen, unmatched = select(found)
    p = pick_primary(found, chosen)
    if p is None:
        return SqlData(found=found, unmatched=unmatched)
    group = db.one(
        f"SELECT {GROUP} FROM odb_interchangeable_groups WHERE group_id = ?", (p.group_id,)
    )
    # the brand's LU codes: at the strength asked, else at every strength it is listed at
    same = [r for r in chosen if r.brand_name == p.brand_name] if found.kind == "brand" else [p]
    codes = list(dict.fromkeys(c for r in same for c in (r.lu_codes or "").split(";") if c))
    marks = ",".join("?" for _ in codes)
    lu = (
        as_rows(
            LuCode,
            db.query(
                f"SELECT {select_list(LuCode)} FROM odb_lu_codes WHERE lu_code IN ({marks})", codes
            ),
        )
        if codes
        else []
    )
    alternatives, alt_basis = _alternatives(db, query, found, p)
    return SqlData(
        found=found,
        primary=p,
        group=as_rows(Group, [group])[0] if group else None,
        members=sorted(products(db, "WHERE group_id = ?", (p.group_id,)), key=price_order),
        lu=lu,
        strengths=as_rows(
            Group,
            db.query(
                f"SELECT {GROUP} FROM odb_interchangeable_groups WHERE ingredient = ? "
                "ORDER BY group_id",
                (p.ingredient,),
            ),
        ),
        # Biosimilars and other non-interchangeable products of one ingredient sit in groups
        # of their own: the brands view lists them all.
        same_ingredient=products(
            db, "WHERE ingredient = ? ORDER BY is_benefit DESC, brand_name, din", (p.ingredient,)
        ),
        notes=as_rows(
            Note,
            db.query(
                f"SELECT {select_list(Note, 'n.')} FROM odb_note_din d "
                "JOIN odb_notes n ON n.note_id = d.note_id "
                "WHERE d.din = ? ORDER BY n.n_dins, n.note_id",
                (p.din,),
            ),
        ),
        alternatives=alternatives,
        alt_basis=alt_basis,
        unmatched=unmatched,
    )


def _alternatives(
    db: SqlClient, query: DrugQuery, found: Found, p: Product
) -> tuple[list[Product], str | None]:
    """Covered alternatives: the drug class (ATC prefixes), else the same ATC level-4 group."""
    cls = found.class_name or (p.drug_class or "").split(";")[0] or None
    basis: str | None = None
    if cls:
        pool, basis = class_members(db, cls), f"same drug class: {cls}"
    elif p.atc_code and len(p.atc_code) >= 5:
        prefix = p.atc_code[:5]
        # A range on the indexed column: LIKE is case-insensitive, so it scanned every drug.
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        pool = sorted(
            products(db, "WHERE atc_code >= ? AND atc_code < ?", (prefix, upper)),
            key=price_order,
        )
        basis = f"same ATC class: {prefix}"
    else:
        pool = []
    # A covered drug's alternatives are other ingredients; an uncovered one's may share it.
    skip_ingredient = p.ingredient if p.is_benefit else None
    return cheapest_per_ingredient(pool, p.group_id, query.exclude_lu, skip_ingredient), basis


# ---------------------------------------------------------------------------------- vector path
def vector_query(query: DrugQuery) -> str:
    parts = [
        query.q,
        query.drug,
        query.ingredient,
        query.drug_class,
        query.strength,
        query.form,
        query.condition,
    ]
    if query.din:
        parts.append(f"DIN {query.din.zfill(8)}")
    return " ".join(p for p in parts if p)[:1000]


def _named(vectors: VectorClient, query: DrugQuery) -> list[VectorHit]:
    """Group chunks whose metadata names the drug (brand, ingredient key or DIN): brand names
    carry little meaning for a sentence embedder, so exact metadata matches come first."""
    words = {
        w.lower() for t in (query.drug, query.ingredient, query.q) if t for w in WORD.findall(t)
    }
    names = {n.lower() for n in (query.drug, query.ingredient) if n}
    keys = {ingredient_key(n) for n in names} | {w for w in words if len(w) > 3}
    din = query.din.zfill(8) if query.din else None
    ids: set[str] = set()
    for meta_field, values in (
        ("brands", names | keys),
        ("ingredient", keys),
        ("dins", {din} if din else set()),
    ):
        index = vectors.ids_by(COLLECTION, meta_field)
        for value in values:
            ids.update(index.get(value.lower(), []))
    out = [h for h in vectors.get(COLLECTION, sorted(ids)) if h.metadata.get("doc_type") == "group"]
    return sorted(out, key=lambda h: str(h.metadata.get("group_id")))[:3]


def vector_search(
    vectors: VectorClient, query: DrugQuery, limit: int = VECTOR_CANDIDATES
) -> list[VectorHit]:
    """Chunks naming the drug, the nearest formulary chunks, and the best two policy notes."""
    text = vector_query(query)
    vec = vectors.embed_query(text, COLLECTION)
    hits = _named(vectors, query) + vectors.search(
        COLLECTION, text, n_results=limit, where=FORMULARY_DOCS, query_vector=vec
    )
    hits += vectors.search(
        COLLECTION,
        text,
        n_results=POLICY_CANDIDATES,
        where={"doc_type": "policy"},
        query_vector=vec,
    )
    unique: dict[str, VectorHit] = {}
    for h in hits:
        unique.setdefault(h.id, h)
    return list(unique.values())


def from_passages(query: DrugQuery, hits: list[VectorHit]) -> SqlData:
    """When SQL is down: rebuild the primary product and its group from a matching group chunk
    (of the strength asked, when one is)."""
    names = {n.lower() for n in (query.drug, query.ingredient) if n}
    keys = {ingredient_key(n) for n in names}
    din = query.din.zfill(8) if query.din else None
    q = (query.q or "").lower()
    written = drug_strength.first(query.q)
    asked = query.strength or (written.text if written else None)
    for h in hits:
        m = h.metadata
        if m.get("doc_type") != "group":
            continue
        if asked and not din and not drug_strength.same_strength(asked, m.get("strength")):
            continue  # a group of another strength is not the product asked for
        brands = [b.lower() for b in str(m.get("brands", "")).split(";")]
        dins = str(m.get("dins", "")).split(";")
        if not (
            (din and din in dins)
            or names & set(brands)
            or m.get("ingredient") in keys
            or any(b and re.search(rf"\b{re.escape(b)}\b", q) for b in brands)
        ):
            continue
        lines = GROUP_LINE.findall(h.text)
        group_id = str(m["group_id"])  # every group passage names its group
        lu = bool(m.get("lu_required"))
        status = COVERAGE_TEXT.search(h.text)
        benefit = not (status and status.group(1) == "not a benefit")
        members = [
            Product(
                din=d,
                brand_name=b,
                generic_name=m.get("generic_name", ""),
                ingredient=m.get("ingredient", ""),
                strength=m.get("strength"),
                # chunk text rounds prices of $1+ to cents; the group minimum is exact metadata
                individual_price=m.get("lowest_price")
                if d == m.get("lowest_cost_din")
                else (float(p.strip("$").replace(",", "")) if p != "n/a" else None),
                amount_mohltc_pays=None,
                is_benefit=int(benefit),
                lu_required=int(lu),
                lowest_cost=int(d == m.get("lowest_cost_din")),
                lu_codes=m.get("lu_codes"),
                group_id=group_id,
            )
            for b, d, p in lines
        ]
        primary = (
            next((r for r in members if r.din == din), None)
            or next((r for r in members if r.brand_name.lower() in names), None)
            or next(
                (r for r in members if re.search(rf"\b{re.escape(r.brand_name.lower())}\b", q)),
                None,
            )
            or (members[0] if members else None)
        )
        group = Group(
            group_id=group_id,
            lowest_cost_din=m.get("lowest_cost_din"),
            lowest_price=m.get("lowest_price"),
        )
        return SqlData(Found("brand"), primary=primary, group=group, members=members)
    return SqlData(Found())
