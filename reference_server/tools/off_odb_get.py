"""odb.get: Ontario Drug Benefit coverage, interchangeable generics, lowest cost and Limited Use.

One request model takes the simple form (`drug`, `check_alternatives`, `include_lu`, `top_k`) and
the enhanced form (`q`, `din`, `ingredient`, `strength`, `drug_class`, `check`, ...). Drugs are
resolved by rules: DIN, brand, salt-stripped ingredient key, drug class (ATC prefixes), FTS5.
SQL answers from `odb_drugs`/groups/LU codes; the vector path searches `odb_documents` (group,
LU-code and policy chunks) for context and corroboration. SQL takes precedence for the formulary.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field

from reference_server.config import CORPUS_DIR
from reference_server.ingest.odb import ingredient_key
from reference_server.retrieval.dual_path import run_dual
from reference_server.retrieval.sql import SqlClient, fts_query
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.confidence import OFF, calculate_confidence
from reference_server.scoring.conflicts import Conflict, compare
from reference_server.tools.base import NON_BLANK, StrictModel, ToolOutput, ToolSpec
from reference_server.tools.common import Citation, Evidence

NAME = "odb.get"
COLLECTION = "odb_documents"
Check = Literal[
    "coverage",
    "interchangeable",
    "lowest_cost",
    "lu_criteria",
    "documentation",
    "alternatives",
    "interchangeable_group",
    "price_comparison",
    "all_strengths",
]
DEFAULT_CHECKS: list[Check] = ["coverage", "interchangeable", "lowest_cost"]
# What a free-text question asks for, beyond the requested `check` list.
INTENTS: dict[Check, str] = {
    "lowest_cost": r"cheap|lowest[- ]cost|least expensive|inexpensive|lowest price",
    "interchangeable": r"generic|interchangeab|substitut|biosimilar",
    "lu_criteria": r"limited use|\blu\b|criteria|special authori|prior auth",
    "alternatives": r"alternative|instead of|other option|switch",
    "price_comparison": r"\bsav(e|es|ing|ings)\b|price|how much|compare",
    "documentation": r"document|paperwork|\bform\b",
    "all_strengths": r"strengths|all doses",
}
_STRENGTH = re.compile(r"\b(\d+(?:\.\d+)?)\s?(mg|mcg|g|ml|%|units?|iu)\b(?:/\s?\w+)?", re.I)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")
_COVERAGE_TEXT = re.compile(r"Coverage: ([^.]+)\.")
_GROUP_LINE = re.compile(r"^- (.+?) \(DIN (\d{8}).*?\): (\$[\d.,]+|n/a)", re.M)


class Request(StrictModel):
    required_any_of = (("drug",), ("din",), ("ingredient",), ("drug_class",), ("q",))

    drug: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Brand, generic or ingredient name.",
    )
    q: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        pattern=NON_BLANK,
        description="Question text, e.g. 'Is Ozempic covered for diabetes?'.",
    )
    din: str | None = Field(
        default=None, pattern=r"^\d{1,8}$", description="Drug Identification Number (8 digits)."
    )
    ingredient: str | None = Field(default=None, min_length=1, max_length=200, pattern=NON_BLANK)
    strength: str | None = Field(
        default=None, min_length=1, max_length=50, pattern=NON_BLANK, description="e.g. '10mg'."
    )
    drug_class: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        pattern=NON_BLANK,
        description="e.g. 'statin', 'glp-1 agonist', 'sglt2 inhibitor', 'ace inhibitor', 'ppi'.",
    )
    check: list[Check] = Field(
        default_factory=lambda: list(DEFAULT_CHECKS),
        max_length=9,
        description="What to check (default coverage, interchangeable, lowest_cost).",
    )
    check_alternatives: bool = Field(
        default=True, description="Return interchangeables and alternatives."
    )
    include_lu: bool = Field(default=True, description="Include Limited Use criteria.")
    condition: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Medical condition, matched to LU indications.",
    )
    include_brand: bool = Field(default=True, description="Include brand-name products in lists.")
    exclude_lu: bool = Field(default=False, description="Leave Limited Use products out of lists.")
    top_k: int = Field(default=5, ge=1, le=10, description="Results per list (default 5, max 10).")


class Coverage(BaseModel):
    covered: bool = Field(description="True when the product is an ODB benefit.")
    din: str
    brand_name: str
    generic_name: str
    strength: str | None
    lu_required: bool = Field(description="A Limited Use code is needed.")
    lu_criteria: str | None = Field(description="LU codes, indications and periods.")


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


class Response(Evidence):
    coverage: Coverage | None
    interchangeable: list[Interchangeable]
    lowest_cost: LowestCost | None
    context: list[str] = Field(description="Text snippets from the formulary passages.")
    alternatives: list[Alternative] = Field(description="Covered alternatives by drug/ATC class.")
    price_comparison: PriceComparison | None
    needs_more_info: bool


@lru_cache(maxsize=1)
def edition() -> str:
    """The formulary extract date, for citations (corpus MANIFEST, read once)."""
    try:
        manifest = json.loads((CORPUS_DIR / "off" / "MANIFEST.json").read_text(encoding="utf-8"))
        return str(manifest["files"]["odb_drugs.csv"]["create_date"])
    except (OSError, KeyError, ValueError):
        return ""


def formulary_source() -> str:
    return f"Ontario Drug Benefit Formulary (extract {edition()})" if edition() else "ODB Formulary"


# ---------------------------------------------------------------------------------- SQL path
@dataclass
class Found:
    kind: Literal["din", "brand", "ingredient", "class", "none"] = "none"
    rows: list[dict[str, Any]] = field(default_factory=list)
    class_name: str | None = None
    strength: str | None = None
    name: str | None = None


@dataclass
class SqlData:
    found: Found
    primary: dict[str, Any] | None = None
    group: dict[str, Any] | None = None
    members: list[dict[str, Any]] = field(default_factory=list)
    lu: list[dict[str, Any]] = field(default_factory=list)
    strengths: list[dict[str, Any]] = field(default_factory=list)
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    alt_basis: str | None = None

    @property
    def records(self) -> int:
        return int(self.primary is not None) + len(self.members) + len(self.lu)


def _norm_strength(s: str) -> str:
    return re.sub(r"\s+", "", s.lower())


def split_strength(text: str) -> tuple[str, str | None]:
    m = _STRENGTH.search(text)
    if not m:
        return text.strip(), None
    return (text[: m.start()] + text[m.end() :]).strip(" ,-"), _norm_strength(m.group(0))


def _class_of(db: SqlClient, text: str) -> str | None:
    """A drug class named by class name, label or synonym (drug_classes.yaml via odb_drug_class)."""
    t = " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "
    best: tuple[int, str] | None = None
    for r in db.query("SELECT DISTINCT class_name, label, synonyms FROM odb_drug_class"):
        names = [r["class_name"], r["label"] or "", *(r["synonyms"] or "").split(";")]
        for n in names:
            n = re.sub(r"[^a-z0-9]+", " ", n.lower()).strip()
            hit = len(n) > 2 and re.search(rf" {re.escape(n)}s? ", t)
            if hit and (best is None or len(n) > best[0]):
                best = (len(n), r["class_name"])
    return best[1] if best else None


def class_members(db: SqlClient, name: str) -> list[dict[str, Any]]:
    """Products whose ATC code is in the class, plus same-ingredient products without an ATC code.

    The class is matched against the few distinct `drug_class` values (an index scan) and rows
    are then fetched through the `drug_class` and `ingredient` indexes, not by scanning every
    product with LIKE.
    """
    values = [
        r["drug_class"]
        for r in db.query_once("SELECT DISTINCT drug_class FROM odb_drugs WHERE drug_class != ''")
        if name in r["drug_class"].split(";")
    ]
    if not values:
        return []
    marks = ",".join("?" * len(values))
    members = db.query(f"SELECT * FROM odb_drugs WHERE drug_class IN ({marks})", values)
    ingredients = sorted({r["ingredient"] for r in members})
    marks = ",".join("?" * len(ingredients))
    unclassified = db.query(
        f"SELECT * FROM odb_drugs WHERE ingredient IN ({marks}) AND (atc_code IS NULL OR atc_code = '')",
        ingredients,
    )
    return members + unclassified


def _by_name(db: SqlClient, name: str) -> Found:
    rows = db.query("SELECT * FROM odb_drugs WHERE brand_name = ? COLLATE NOCASE", (name,))
    if rows:
        return Found("brand", rows, name=rows[0]["brand_name"])
    key = ingredient_key(name)
    rows = db.query("SELECT * FROM odb_drugs WHERE ingredient = ?", (key,)) if key else []
    if rows:
        return Found("ingredient", rows, name=key)
    cls = _class_of(db, name)
    if cls:
        return Found("class", class_members(db, cls), class_name=cls, name=cls)
    match = fts_query(name, "AND")
    hits = (
        db.query(
            "SELECT d.* FROM odb_drugs_fts f JOIN odb_drugs d ON d.rowid = f.rowid "
            "WHERE odb_drugs_fts MATCH ? ORDER BY rank LIMIT 50",
            (match,),
        )
        if match
        else []
    )
    if not hits:
        return Found()
    top = hits[0]
    words = set(fts_query(name).replace('"', "").split(" OR "))
    if words & set(_WORD.findall(top["brand_name"].lower())) - set(top["ingredient"].split()):
        rows = db.query("SELECT * FROM odb_drugs WHERE brand_name = ?", (top["brand_name"],))
        return Found("brand", rows, name=top["brand_name"])
    rows = db.query("SELECT * FROM odb_drugs WHERE ingredient = ?", (top["ingredient"],))
    return Found("ingredient", rows, name=top["ingredient"])


def _from_question(db: SqlClient, q: str) -> Found:
    """Brand or ingredient named in a question (1-3 word phrases), else a drug class."""
    words = [w.lower() for w in _WORD.findall(q)]
    phrases = [" ".join(words[i : i + n]) for n in (3, 2, 1) for i in range(len(words) - n + 1)]
    phrases = [p for p in phrases if len(p) > 3]
    if phrases:
        marks = ",".join("?" for _ in phrases)
        for column in ("lower(brand_name)", "ingredient"):
            hit = db.one(
                f"SELECT {column} AS name FROM odb_drugs WHERE {column} IN ({marks}) "
                f"ORDER BY length({column}) DESC LIMIT 1",
                phrases,
            )
            if hit:
                return _by_name(db, hit["name"])
    cls = _class_of(db, q)
    return Found("class", class_members(db, cls), class_name=cls, name=cls) if cls else Found()


def resolve(db: SqlClient, req: Request) -> Found:
    if req.din:
        din = req.din.zfill(8)
        return Found("din", db.query("SELECT * FROM odb_drugs WHERE din = ?", (din,)), name=din)
    strength = _norm_strength(req.strength) if req.strength else None
    found = Found()
    for text in (req.drug, req.ingredient):
        if text:
            name, s = split_strength(text)
            found = _by_name(db, name or text)
            strength = strength or s
            if found.kind != "none":
                break
    if found.kind == "none" and req.drug_class:
        cls = _class_of(db, req.drug_class)
        if cls:
            found = Found("class", class_members(db, cls), class_name=cls, name=cls)
    if found.kind == "none" and req.q:
        found = _from_question(db, req.q)
        strength = strength or split_strength(req.q)[1]
    found.strength = strength
    return found


def _price(r: dict[str, Any]) -> float:
    return r["individual_price"] if r.get("individual_price") is not None else float("inf")


def pick_primary(found: Found) -> dict[str, Any] | None:
    """The product the answer is about: the DIN; else the strength asked for; else the oldest DIN."""
    rows = found.rows
    if found.strength:
        same = [r for r in rows if _norm_strength(r["strength"] or "").startswith(found.strength)]
        rows = same or rows
    if not rows:
        return None
    if found.kind == "class":
        covered = [r for r in rows if r["is_benefit"]]
        return min(covered or rows, key=lambda r: (_price(r), r["din"]))
    if found.kind == "ingredient":
        return min(rows, key=lambda r: (not r["is_benefit"], not r["lowest_cost"], r["din"]))
    return min(rows, key=lambda r: (not r["is_benefit"], r["din"]))


def cheapest_per_ingredient(
    rows: list[dict[str, Any]], skip_group: str | None, exclude_lu: bool
) -> list[dict[str, Any]]:
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        if not r["is_benefit"] or r["group_id"] == skip_group or (exclude_lu and r["lu_required"]):
            continue
        if r["ingredient"] not in best or (_price(r), r["din"]) < (
            _price(best[r["ingredient"]]),
            best[r["ingredient"]]["din"],
        ):
            best[r["ingredient"]] = r
    return sorted(best.values(), key=lambda r: (_price(r), r["din"]))


def sql_path(rt: Runtime, req: Request) -> SqlData:
    db = rt.ohip_sql
    found = resolve(db, req)
    if found.kind == "class" and req.exclude_lu:
        found.rows = [r for r in found.rows if not r["lu_required"]]
    data = SqlData(found=found, primary=pick_primary(found))
    p = data.primary
    if p is None:
        return data
    data.group = db.one(
        "SELECT * FROM odb_interchangeable_groups WHERE group_id = ?", (p["group_id"],)
    )
    data.members = sorted(
        db.query("SELECT * FROM odb_drugs WHERE group_id = ?", (p["group_id"],)),
        key=lambda r: (_price(r), r["din"]),
    )
    same = (
        [r for r in found.rows if r["brand_name"] == p["brand_name"]]
        if found.kind == "brand"
        else [p]
    )
    codes = list(dict.fromkeys(c for r in same for c in (r["lu_codes"] or "").split(";") if c))
    if codes:
        marks = ",".join("?" for _ in codes)
        data.lu = db.query(f"SELECT * FROM odb_lu_codes WHERE lu_code IN ({marks})", codes)
    data.strengths = db.query(
        "SELECT * FROM odb_interchangeable_groups WHERE ingredient = ? ORDER BY group_id",
        (p["ingredient"],),
    )
    # Alternatives: the drug class (ATC prefixes), else the same ATC level-4 group.
    cls = found.class_name or (p["drug_class"] or "").split(";")[0] or None
    if cls:
        pool, data.alt_basis = class_members(db, cls), f"same drug class: {cls}"
    elif p.get("atc_code") and len(p["atc_code"]) >= 5:
        prefix = p["atc_code"][:5]
        pool = db.query("SELECT * FROM odb_drugs WHERE atc_code LIKE ?", (prefix + "%",))
        data.alt_basis = f"same ATC class: {prefix}"
    else:
        pool = []
    # A covered drug's alternatives are other ingredients; an uncovered one's may share it.
    pool = [r for r in pool if not (p["is_benefit"] and r["ingredient"] == p["ingredient"])]
    data.alternatives = cheapest_per_ingredient(pool, p["group_id"], req.exclude_lu)
    return data


# ---------------------------------------------------------------------------------- vector path
def vector_query(req: Request) -> str:
    parts = [req.q, req.drug, req.ingredient, req.drug_class, req.strength, req.condition]
    if req.din:
        parts.append(f"DIN {req.din.zfill(8)}")
    return " ".join(p for p in parts if p)[:1000]


def _named(rt: Runtime, req: Request) -> list[VectorHit]:
    """Group chunks whose metadata names the drug (brand, ingredient key or DIN): brand names
    carry little meaning for a sentence embedder, so exact metadata matches come first."""
    words = {w.lower() for t in (req.drug, req.ingredient, req.q) if t for w in _WORD.findall(t)}
    names = {n.lower() for n in (req.drug, req.ingredient) if n}
    keys = {ingredient_key(n) for n in names} | {w for w in words if len(w) > 3}
    din = req.din.zfill(8) if req.din else None
    ids: set[str] = set()
    for meta_field, values in (
        ("brands", names | keys),
        ("ingredient", keys),
        ("dins", {din} if din else set()),
    ):
        index = rt.vectors.ids_by(COLLECTION, meta_field)
        for value in values:
            ids.update(index.get(value.lower(), []))
    out = [
        h for h in rt.vectors.get(COLLECTION, sorted(ids)) if h.metadata.get("doc_type") == "group"
    ]
    return sorted(out, key=lambda h: str(h.metadata.get("group_id")))[:3]


def vector_path(rt: Runtime, req: Request) -> list[VectorHit]:
    """Chunks naming the drug, the nearest formulary chunks, and the best two policy notes."""
    text = vector_query(req)
    vec = rt.vectors.embed_query(text)
    hits = _named(rt, req) + rt.vectors.search(COLLECTION, text, n_results=8, query_vector=vec)
    hits += rt.vectors.search(
        COLLECTION, text, n_results=2, where={"doc_type": "policy"}, query_vector=vec
    )
    unique: dict[str, VectorHit] = {}
    for h in hits:
        unique.setdefault(h.id, h)
    return list(unique.values())


# ---------------------------------------------------------------------------------- merge
def _is_brand(r: dict[str, Any]) -> bool:
    """Heuristic: a product named without its ingredient is the brand (Januvia vs PMS-Sitagliptin)."""
    first = (r.get("ingredient") or "").split(" ")[0]
    return bool(first) and first not in (r.get("brand_name") or "").lower()


def _status(lu: bool, benefit: bool) -> str:
    return "Limited Use benefit" if lu else ("general benefit" if benefit else "not a benefit")


def lu_text(lu: list[dict[str, Any]], condition: str | None) -> str | None:
    """'LU 665, 666: <indication> (authorization period: indefinite)', condition matches first."""
    if not lu:
        return None
    words = [w for w in re.findall(r"[a-z0-9]+", (condition or "").lower()) if len(w) > 3]
    groups: dict[tuple[str, str], list[str]] = {}
    for r in lu:
        groups.setdefault((r["indication"], r["period"] or "not stated"), []).append(r["lu_code"])
    items = sorted(groups.items(), key=lambda kv: not any(w in kv[0][0].lower() for w in words))
    text = "; ".join(
        f"LU {', '.join(codes)}: {ind} (authorization period: {period})"
        for (ind, period), codes in items
    )
    if words and not any(w in ind.lower() for (ind, _), _ in items for w in words):
        text += f". No LU indication mentions '{condition}'."
    return text


def _no_lu(p: dict[str, Any]) -> str | None:
    if p["is_benefit"] and not p["lu_required"]:
        return "No Limited Use code required: general benefit in the formulary."
    return None


def _corroborates(h: VectorHit, sql: SqlData) -> bool:
    m = h.metadata
    p = sql.primary or {}
    groups = {p.get("group_id"), *(a["group_id"] for a in sql.alternatives)}
    codes = {r["lu_code"] for r in sql.lu}
    if m.get("doc_type") == "group":
        return m.get("group_id") in groups or m.get("ingredient") == p.get("ingredient")
    if m.get("doc_type") == "lu_code":
        return m.get("lu_code") in codes or p.get("din", "-") in str(m.get("dins", ""))
    return False


def group_conflicts(sql: SqlData, hits: list[VectorHit]) -> list[Conflict]:
    g = sql.group
    if not g:
        return []
    out: list[Conflict | None] = []
    for h in hits:
        m = h.metadata
        if m.get("doc_type") != "group" or m.get("group_id") != g["group_id"]:
            continue
        status = _status(bool(g["lu_codes"]), bool(g["n_benefit"]))
        text_status = _COVERAGE_TEXT.search(h.text)
        why = "SQL formulary row used (structured data takes precedence)."
        out += [
            compare("coverage", status, text_status.group(1) if text_status else None, why),
            compare("lu_required", bool(g["lu_codes"]), m.get("lu_required"), why),
            compare("lowest_cost.price", g["lowest_price"], m.get("lowest_price"), why),
            compare("lowest_cost.din", g["lowest_cost_din"], m.get("lowest_cost_din"), why),
        ]
    return [c for c in out if c]


def _citation(r: dict[str, Any]) -> Citation:
    return Citation(
        source=formulary_source(),
        loc=f"DIN: {r['din']} - {r['brand_name']} ({r['generic_name']})",
        page=None,
    )


def _hit_citation(h: VectorHit) -> Citation:
    m = h.metadata
    if m.get("doc_type") == "group":
        loc = f"ODB interchangeable group {m.get('group_id')}: {m.get('generic_name')} {m.get('strength', '')}"
        return Citation(source=formulary_source(), loc=loc.strip(), page=None)
    if m.get("doc_type") == "lu_code":
        return Citation(
            source=formulary_source(),
            loc=f"LU code {m.get('lu_code')} ({m.get('generic_names')})",
            page=None,
        )
    return Citation(source="ODB program notes (project summary)", loc=str(m.get("title", h.id)))


def _snippets(hits: list[VectorHit], hybrid: bool) -> list[str]:
    """Hybrid: 3 snippets x 500 chars; vector-only: 5 x 800. Group chunks are kept whole."""
    n, size = (3, 500) if hybrid else (5, 800)
    out = []
    for h in hits[:n]:
        text = h.text
        if h.metadata.get("doc_type") != "group" and len(text) > size:
            text = text[:size].rstrip() + "..."
        out.append(text)
    return out


def _from_vector(req: Request, hits: list[VectorHit]) -> SqlData:
    """When SQL is down: rebuild the primary product and its group from a matching group chunk."""
    names = {n.lower() for n in (req.drug, req.ingredient) if n}
    keys = {ingredient_key(n) for n in names}
    din = req.din.zfill(8) if req.din else None
    q = (req.q or "").lower()
    for h in hits:
        m = h.metadata
        if m.get("doc_type") != "group":
            continue
        brands = [b.lower() for b in str(m.get("brands", "")).split(";")]
        dins = str(m.get("dins", "")).split(";")
        if not (
            (din and din in dins)
            or names & set(brands)
            or m.get("ingredient") in keys
            or any(b and re.search(rf"\b{re.escape(b)}\b", q) for b in brands)
        ):
            continue
        lines = _GROUP_LINE.findall(h.text)
        lu = bool(m.get("lu_required"))
        status = _COVERAGE_TEXT.search(h.text)
        benefit = not (status and status.group(1) == "not a benefit")
        members = [
            {
                "din": d,
                "brand_name": b,
                "generic_name": m.get("generic_name", ""),
                "ingredient": m.get("ingredient", ""),
                "strength": m.get("strength"),
                # chunk text rounds prices of $1+ to cents; the group minimum is exact metadata
                "individual_price": m.get("lowest_price")
                if d == m.get("lowest_cost_din")
                else (float(p.strip("$").replace(",", "")) if p != "n/a" else None),
                "amount_mohltc_pays": None,
                "is_benefit": int(benefit),
                "lu_required": int(lu),
                "lowest_cost": int(d == m.get("lowest_cost_din")),
                "lu_codes": m.get("lu_codes"),
                "group_id": m.get("group_id"),
            }
            for b, d, p in lines
        ]
        primary = (
            next((r for r in members if r["din"] == din), None)
            or next((r for r in members if r["brand_name"].lower() in names), None)
            or next(
                (r for r in members if re.search(rf"\b{re.escape(r['brand_name'].lower())}\b", q)),
                None,
            )
            or (members[0] if members else None)
        )
        group = {
            "group_id": m.get("group_id"),
            "lowest_cost_din": m.get("lowest_cost_din"),
            "lowest_price": m.get("lowest_price"),
        }
        return SqlData(Found("brand"), primary=primary, group=group, members=members)
    return SqlData(Found())


def _checks(req: Request) -> set[str]:
    checks: set[str] = set(req.check)
    for check, pattern in INTENTS.items():
        if req.q and re.search(pattern, req.q, re.I):
            checks.add(check)
    return checks


async def run(rt: Runtime, req: Request) -> ToolOutput:
    dual = await run_dual(
        rt.settings, sql=lambda: sql_path(rt, req), vector=lambda: vector_path(rt, req)
    )
    hits: list[VectorHit] = dual.vector.value or []
    sql: SqlData | None = dual.sql.value
    data = sql if sql is not None else _from_vector(req, hits)
    checks = _checks(req)
    p, found = data.primary, data.found
    conflicts = group_conflicts(data, hits) if sql else []
    corroborating = [h for h in hits if _corroborates(h, data)] if p else []

    coverage: Coverage | None = None
    if p:
        coverage = Coverage(
            covered=bool(p["is_benefit"]),
            din=p["din"],
            brand_name=p["brand_name"],
            generic_name=p["generic_name"],
            strength=p.get("strength"),
            lu_required=bool(p["lu_required"] or p.get("lu_codes")),
            lu_criteria=(lu_text(data.lu, req.condition) or _no_lu(p)) if req.include_lu else None,
        )

    def keep(r: dict[str, Any]) -> bool:
        return (req.include_brand or not _is_brand(r)) and not (req.exclude_lu and r["lu_required"])

    lowest = min(
        (r for r in data.members if r["is_benefit"] and r.get("individual_price") is not None),
        key=lambda r: (
            r["individual_price"],
            r["din"] != (data.group or {}).get("lowest_cost_din"),
            r["din"],
        ),
        default=None,
    )
    savings = None
    if p and lowest and p.get("individual_price") is not None and found.kind != "class":
        savings = round(p["individual_price"] - lowest["individual_price"], 4)

    interchangeable: list[Interchangeable] = []
    if req.check_alternatives and checks & {"interchangeable", "interchangeable_group"} and p:
        members = [r for r in data.members if keep(r)]
        top = members[: req.top_k]
        if p in members and p not in top:
            top = [*top[: req.top_k - 1], p]
        interchangeable = [
            Interchangeable(
                din=r["din"],
                brand=r["brand_name"],
                price=r.get("individual_price"),
                lowest_cost=bool(r["lowest_cost"]),
            )
            for r in top
        ]

    lowest_cost = None
    if lowest and (checks & {"lowest_cost", "price_comparison"} or found.kind == "class"):
        lowest_cost = LowestCost(
            din=lowest["din"],
            brand=lowest["brand_name"],
            price=lowest["individual_price"],
            savings=savings,
        )

    alternatives: list[Alternative] = []
    if (
        req.check_alternatives
        and p
        and ("alternatives" in checks or not p["is_benefit"] or found.kind == "class")
    ):
        alternatives = [
            Alternative(
                din=r["din"],
                brand=r["brand_name"],
                generic_name=r["generic_name"],
                strength=r.get("strength"),
                price=r.get("individual_price"),
                lu_required=bool(r["lu_required"]),
                reason=data.alt_basis or "",
            )
            for r in data.alternatives
            if keep(r)
        ][: req.top_k]

    price_comparison = None
    if p and lowest and found.kind != "class" and checks & {"price_comparison", "lowest_cost"}:
        price = p.get("individual_price")
        price_comparison = PriceComparison(
            requested_din=p["din"],
            requested_brand=p["brand_name"],
            requested_price=price,
            amount_odb_pays=p.get("amount_mohltc_pays"),
            lowest_cost_din=lowest["din"],
            lowest_cost_brand=lowest["brand_name"],
            lowest_cost_price=lowest["individual_price"],
            savings_per_unit=savings,
            savings_percent=round(100 * savings / price, 1)
            if savings is not None and price
            else None,
        )

    context = _snippets(hits, hybrid=sql is not None and p is not None)
    if "all_strengths" in checks and len(data.strengths) > 1:
        context.append(
            "Other strengths: "
            + "; ".join(
                f"{g['strength']} {g['dosage_form']} (group {g['group_id']}, lowest "
                f"{g['lowest_cost_din'] or 'n/a'} at {g['lowest_price']})"
                for g in data.strengths
            )
        )

    citations: list[Citation] = []
    for r in [p, lowest, *(data.alternatives[:2] if alternatives else [])]:
        if r and all(c.loc != _citation(r).loc for c in citations):
            citations.append(_citation(r))
    for lu in data.lu[:3]:
        citations.append(
            Citation(
                source=formulary_source(),
                loc=f"LU code {lu['lu_code']} ({lu['generic_names']})",
                page=None,
            )
        )
    for h in hits[:3]:
        c = _hit_citation(h)
        if all(x.loc != c.loc for x in citations):
            citations.append(c)

    n_sql = data.records if sql is not None else 0
    response = Response(
        provenance=dual.provenance,  # type: ignore[arg-type]
        confidence=calculate_confidence(n_sql, len(corroborating), len(conflicts), OFF),
        coverage=coverage,
        interchangeable=interchangeable,
        lowest_cost=lowest_cost,
        citations=citations,
        conflicts=conflicts,
        context=context,
        alternatives=alternatives,
        price_comparison=price_comparison,
        needs_more_info=p is None,
    )
    return ToolOutput(response, dual)


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Ontario Drug Benefit (ODB) formulary: is a drug covered, does it need a Limited Use (LU) code, "
        "which interchangeable generics exist, which is lowest cost and how much is saved, and covered "
        "alternatives in the same drug class. Look up by `drug` (brand/generic), `din`, `ingredient`, "
        "`drug_class` (e.g. statin, glp-1 agonist) or a question `q`."
    ),
    request=Request,
    response=Response,
    run=run,
)
