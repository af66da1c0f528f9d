"""The ODB formulary store: products, interchangeable groups, LU codes and notes (SQL), formulary
passages (vector).

`keyword_search` resolves the drug a query names (DIN, brand, salt-stripped ingredient key,
drug class by ATC prefix, FTS5) and reads everything odb.get answers from: the product, its
interchangeable group, its LU codes and product notes, every product of the same ingredient in
any group (biosimilars are listed in groups of their own), and covered alternatives of the same
class. `vector_search` returns the group passages naming the drug, the nearest group and LU
passages, and the best policy notes; `from_passages` rebuilds the product and its group from a
group passage when the SQL path is down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from reference_server.catalog import OFF_COLLECTIONS, ingredient_key
from reference_server.retrieval import drug_form, drug_strength
from reference_server.retrieval.drug_form import FormWord
from reference_server.retrieval.drug_spelling import SpellingIndex
from reference_server.retrieval.sql import SqlClient, as_rows, fts_query, select_list
from reference_server.retrieval.vector import VectorClient, VectorHit

COLLECTION = OFF_COLLECTIONS["odb"]
VECTOR_CANDIDATES = 8
POLICY_CANDIDATES = 2
# the similarity search ranks group and LU passages; notes reach answers by DIN, policy apart
FORMULARY_DOCS = {"doc_type": {"$in": ["group", "lu_code"]}}
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")
COVERAGE_TEXT = re.compile(r"Coverage: ([^.]+)\.")
GROUP_LINE = re.compile(r"^- (.+?) \(DIN (\d{8}).*?\): (\$[\d.,]+|n/a)", re.M)


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


# ---------------------------------------------------------------------------------- rows
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


# ---------------------------------------------------------------------------------- SQL path
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


def split_strength(text: str) -> tuple[str, str | None, FormWord | None]:
    """'Lipitor 20 mg tablets' -> ('Lipitor', '20 mg', tablets): a name with its strength and
    form written in."""
    mention = drug_strength.first(text)
    rest = text if mention is None else text[: mention.start] + " " + text[mention.end :]
    form = drug_form.find(rest)
    if form is not None:
        rest = rest[: form.start] + " " + rest[form.end :]
    name = re.sub(r"\s+", " ", rest).strip(" ,-")
    return name, mention.text if mention else None, form.form if form else None


def _class_of(db: SqlClient, text: str) -> str | None:
    """A drug class named by class name, label or synonym (drug_classes.yaml via odb_drug_class):
    the longest name found as whole words (a trailing plural 's' allowed)."""
    t = " " + re.sub(r"[^a-z0-9]+", " ", text.lower()) + " "
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


def _by_name(db: SqlClient, name: str, spelt: bool = True) -> Found:
    brand = products(db, "WHERE brand_name = ? COLLATE NOCASE", (name,))
    key = ingredient_key(name)
    same_key = products(db, "WHERE ingredient = ?", (key,)) if key else []
    generic = [r for r in same_key if (r.generic_name or "").casefold() == name.casefold()]
    # a brand's name is another ingredient's products only when it is that ingredient's name
    # ('Hydromorphone'); 'Amoxicillin (Sugar Reduced)' is that product alone
    wider = not generic and (not brand or key == name.casefold())
    tiers = [t for t in (brand, generic, same_key if wider else []) if t]
    if tiers:
        rows = list({r.din: r for t in reversed(tiers) for r in t}.values())[::-1]
        if brand:
            return Found("brand", rows, name=brand[0].brand_name, tiers=tiers)
        return Found("ingredient", rows, name=key, tiers=tiers)
    cls = _class_of(db, name)
    if cls:
        return Found("class", class_members(db, cls), class_name=cls, name=cls)
    if spelt and WORD.fullmatch(name):  # one word that names no drug: misspelt, or a word
        found, _ = _misspelt(db, name)
        if found.kind != "none":
            return found
    match = fts_query(name, "AND")
    hits = (
        as_rows(
            Product,
            db.query(
                f"SELECT {select_list(Product, 'd.')} FROM odb_drugs_fts f "
                "JOIN odb_drugs d ON d.rowid = f.rowid "
                "WHERE odb_drugs_fts MATCH ? ORDER BY rank LIMIT 50",
                (match,),
            ),
        )
        if match
        else []
    )
    if not hits:
        return Found()
    top = hits[0]
    words = set(fts_query(name).replace('"', "").split(" OR "))
    if words & set(WORD.findall(top.brand_name.lower())) - set(top.ingredient.split()):
        rows = products(db, "WHERE brand_name = ?", (top.brand_name,))
        return Found("brand", rows, name=top.brand_name, tiers=[rows])
    rows = products(db, "WHERE ingredient = ?", (top.ingredient,))
    return Found("ingredient", rows, name=top.ingredient, tiers=[rows])


@dataclass(frozen=True)
class Span:
    """Words of a question, as written, and where they are."""

    text: str
    start: int
    end: int


SPAN_WORDS = 14  # generic names run to 12 words ('soybean oil & medium chain triglycerides & ...')
EDGE = " \t\"'?!.,;:"
END = " \t\"'?!,;:"  # a name can end with '.' ('PMS-Sulfasalazine-E.C.', 'Jamteki I.V.')


def spans(q: str, most: int = SPAN_WORDS) -> list[Span]:
    """Every run of 1..`most` words of `q` as written ('Ratio-Tecnal C1/2', 'Teva-Lisinopril
    (Type P)', 'Drospirenone&Ethinyl Estradiol USP 21'), trimmed of sentence punctuation."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", q)]
    out: dict[str, Span] = {}
    for n in range(1, most + 1):
        for i in range(len(words) - n + 1):
            start, end = words[i][0], words[i + n - 1][1]
            text = q[start:end]
            for edge in (EDGE, END):
                trimmed = text.strip(edge)
                if trimmed.count("(") < trimmed.count(")"):
                    trimmed = trimmed.rstrip(")").strip(edge)
                if trimmed.count("(") > trimmed.count(")"):
                    trimmed = trimmed.lstrip("(").strip(edge)
                # three letters name brands ('Yaz', '3TC', 'PTU'); shorter runs are words
                if len(trimmed) < 3 or not re.search("[A-Za-z]", trimmed):
                    continue
                offset = start + text.index(trimmed)
                out.setdefault(trimmed.lower(), Span(trimmed, offset, offset + len(trimmed)))
    return list(out.values())


def name_in(db: SqlClient, q: str) -> Span | None:
    """The drug a question names: its longest brand name, unless a generic or ingredient name
    written around it is longer ('darunavir & cobicistat' over the brand 'Darunavir'); else the
    longest generic or ingredient name."""
    candidates = spans(q)
    if not candidates:
        return None
    by_text = {c.text.lower(): c for c in candidates}
    brands = _names_among(db, NAME_COLUMNS[0], list(by_text))
    keys: dict[str, list[Span]] = {}
    for c in candidates:
        key = ingredient_key(c.text)
        if len(key) > 3:
            keys.setdefault(key, []).append(c)
    ingredients = _names_among(db, NAME_COLUMNS[1], list(keys)) if keys else set()

    # a brand whose name runs into the strength written ('Duragesic 25' in 'Duragesic 25
    # mcg/hr', 'Ferrous Gluconate 300mg') yields to one that leaves the strength in the question
    written = bool(drug_strength.find(q))

    def leaves_strength(c: Span) -> bool:
        return not written or bool(drug_strength.find(q[: c.start] + " " + q[c.end :]))

    def longest(found: list[Span]) -> Span | None:
        return max(found, key=lambda c: (leaves_strength(c), len(c.text), -c.start), default=None)

    brand = longest([by_text[b] for b in brands if b in by_text])
    generic = longest([c for k in ingredients for c in keys[k]])
    if brand is None:
        return generic
    if generic and generic.start <= brand.start and generic.end >= brand.end:
        return generic if len(generic.text) > len(brand.text) else brand
    return brand


def _from_question(db: SqlClient, q: str) -> tuple[Found, str]:
    """The brand or ingredient a question names (`name_in`), else a drug class; with the rest of
    the question, where its strength and form are read."""
    span = name_in(db, q)
    if span is not None:
        found = _by_name(db, span.text)
        if found.kind != "none":
            return found, q[: span.start] + " " + q[span.end :]
    cls = _class_of(db, q)
    if cls:
        return Found("class", class_members(db, cls), class_name=cls, name=cls), q
    return _misspelt(db, q)


def spelling_index(db: SqlClient) -> SpellingIndex:
    """Every listed brand name and ingredient key, read once per process (only a question
    naming no listed drug reads it)."""
    return db.derived.get(
        "odb_formulary.spelling",
        lambda: SpellingIndex(
            (r["name"], r["ingredient"])
            for r in db.query(
                "SELECT DISTINCT brand_name AS name, ingredient FROM odb_drugs "
                "UNION SELECT DISTINCT ingredient, ingredient FROM odb_drugs"
            )
        ),
    )


def _misspelt(db: SqlClient, text: str) -> tuple[Found, str]:
    """The listed drug a word of `text` misspells ('amoxicilin'), said so in `readings`; with
    the rest of the text."""
    correction = spelling_index(db).in_text(text)
    if correction is None:
        return Found(), text
    found = _by_name(db, correction.name, spelt=False)
    if found.kind == "none":
        return found, text
    found.readings.append(
        f"'{correction.written}' read as {found.name or correction.name}: no listed drug is "
        f"spelt '{correction.written}'."
    )
    return found, text[: correction.start] + " " + text[correction.end :]


# A question's phrases are looked up through the name indexes, a few dozen keys per call.
# Reading every distinct name once per process instead cost 424 ms on the first question at
# 10x (a scan with `lower()` and a temporary B-tree) and more than the SQL timeout at 100x.
# (name as returned, column as compared): brands case-insensitively, as their index compares.
NAME_COLUMNS = (("lower(brand_name)", "brand_name COLLATE NOCASE"), ("ingredient", "ingredient"))


def _names_among(db: SqlClient, column: tuple[str, str], phrases: list[str]) -> set[str]:
    """The phrases that are names in `column` (one indexed IN look-up)."""
    name, compared = column
    marks = ",".join("?" * len(phrases))
    rows = db.query(
        f"SELECT DISTINCT {name} AS name FROM odb_drugs WHERE {compared} IN ({marks})", phrases
    )
    return {r["name"] for r in rows}


def longest_name(db: SqlClient, q: str) -> str | None:
    """The drug name a question names (`name_in`), as written."""
    span = name_in(db, q)
    return span.text if span else None


def _without(text: str, name: str | None) -> str:
    """`text` without the drug name (a name can hold digits: 'ACET 650', 'Peptamen 1.5')."""
    if not name:
        return text
    return re.sub(re.escape(name), " ", text, flags=re.I)


def resolve(db: SqlClient, query: DrugQuery) -> Found:
    if query.din:
        din = query.din.zfill(8)
        return Found("din", products(db, "WHERE din = ?", (din,)), name=din)
    strength = query.strength
    form = drug_form.form_word(query.form)
    given = drug_strength.first(strength)
    if strength and given and form is None:  # '20 mg tablets' as strength (not 'mg/Vial' in it)
        written = drug_form.find(strength[: given.start] + " " + strength[given.end :])
        form = written.form if written else None
    found = Found()
    named = None
    for text in (query.drug, query.ingredient):
        if not text:
            continue
        found, named = _by_name(db, text.strip()), text.strip()
        if found.kind == "none":
            name, s, f = split_strength(text)
            if name and (s or f):
                found, named = _by_name(db, name), name
                strength, form = strength or s, form or f
        if found.kind != "none":
            break
        name, s, f = split_strength(text)
        found, _ = _misspelt(db, name)
        if found.kind != "none":
            named, strength, form = text.strip(), strength or s, form or f
            break
    if found.kind == "none" and query.drug_class:
        cls = _class_of(db, query.drug_class)
        if cls:
            found = Found("class", class_members(db, cls), class_name=cls, name=cls)
    if query.q:
        if found.kind == "none":
            found, rest = _from_question(db, query.q)
        else:
            rest = _without(query.q, named)
        mention = drug_strength.first(rest)
        strength = strength or (mention.text if mention else None)
        if strength is None and found.kind in ("brand", "ingredient"):
            strength = _bare_strength(found, rest)
        if mention:  # 'mg/Vial' in a strength is no dosage form
            rest = rest[: mention.start] + " " + rest[mention.end :]
        form_mention = drug_form.find(rest)
        form = form or (form_mention.form if form_mention else None)
    found.strength = strength
    found.form = form
    return found


BARE_NUMBER = re.compile(
    r"(?<![\w.$/])(\d+(?:\.\d+)?)(?![\w.%/$])"
    r"(?!\s*(?:-|years?|yrs?|yo|y/o|days?|weeks?|months?|hours?|times?|kg|lbs?|%)(?![a-z]))",
    re.I,
)
FIRST_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _bare_strength(found: Found, rest: str) -> str | None:
    """A number written after the name without a unit ('jardiance 25'): the listed strength
    that starts with it, when one strength of the name does; when several do, the name's
    products are narrowed to them. None when the number is no listed strength of the name."""
    numbers = BARE_NUMBER.findall(rest)
    if len(numbers) != 1:
        return None
    number = Decimal(numbers[0])
    tiers = [[r for r in tier if _first_number(r.strength) == number] for tier in found.tiers]
    matched = {drug_strength.normal_text(r.strength): r for tier in tiers for r in tier}
    if not matched:
        return None
    written = numbers[0]
    if len(matched) == 1:
        listed = next(iter(matched.values())).strength
        found.readings.append(f"'{written}' read as the listed strength {listed}.")
        return listed
    found.tiers = [t for t in tiers if t]
    found.rows = [r for t in found.tiers for r in t]
    shown = ", ".join(sorted(r.strength or "" for r in matched.values()))
    found.readings.append(f"'{written}' read as one of the listed strengths {shown}.")
    return None


def _first_number(strength: str | None) -> Decimal | None:
    m = FIRST_NUMBER.search(strength or "")
    return Decimal(m.group(0)) if m else None


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
        rows = [rows[i] for i in drug_form.matching(found.form, [r.dosage_form for r in rows])]
    return rows


def select(found: Found) -> tuple[list[Product], Unmatched | None]:
    """The products answering the query: the first tier with one at the strength and in the
    form asked. None there: no product, and what the name is listed at."""
    tiers = found.tiers or ([found.rows] if found.rows else [])
    if not tiers:
        return [], None
    if not (found.strength or found.form) or found.kind == "din":
        return tiers[0], None
    for n, tier in enumerate(tiers):
        rows = _filtered(tier, found)
        if rows:
            if n and found.kind == "brand":  # a generic's product, not the brand of that name
                found.kind = "ingredient"
            return rows, None
    if found.kind == "class":  # a class question's strength only narrows it
        return found.rows, None
    unmatched = Unmatched(
        name=found.name or "",
        strength=found.strength,
        form=found.form.word if found.form else None,
        listed=tiers[0],
    )
    return [], unmatched


def price_order(r: Product) -> tuple[float, str]:
    """Cheapest first, the DIN breaking ties: the order every price ranking here uses."""
    price = r.individual_price
    return (price if price is not None else float("inf"), r.din)


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
    vec = vectors.embed_query(text)
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
