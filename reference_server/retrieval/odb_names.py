"""Which drug a query names: by DIN, brand, generic name or salt-stripped ingredient key, drug
class (ATC prefix, class name or synonym), FTS5, or a misspelling of a listed name; and the
strength and dosage form written around the name.

Name look-ups go through the SQL indexes; what every call would read again (class names, a
class's members: `odb_classes`; the spelling index) is read once per index and process
(`db.derived`). The runs of words a name is looked up among are `word_spans`'.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from reference_server import catalog
from reference_server.retrieval import drug_form, drug_strength
from reference_server.retrieval.drug_form import FormWord
from reference_server.retrieval.drug_spelling import SpellingIndex
from reference_server.retrieval.odb_classes import class_members, class_named_in
from reference_server.retrieval.odb_rows import DrugQuery, Found, Homonym, Product, products
from reference_server.retrieval.sql import SqlClient, as_rows, fts_query, select_list
from reference_server.retrieval.word_spans import Span, spans

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-]*")
SPACES = re.compile(r"\s+")
# `catalog.ingredient_key` remembered per process: it is pure, and a question's every run of
# words goes through its regular expressions (about 70 a coverage.answer call, twice: routing,
# then odb.get). Distinct runs remembered:
INGREDIENT_KEYS = 8192
ingredient_key = lru_cache(maxsize=INGREDIENT_KEYS)(catalog.ingredient_key)


def split_strength(text: str) -> tuple[str, str | None, FormWord | None]:
    """'Lipitor 20 mg tablets' -> ('Lipitor', '20 mg', tablets): a name with its strength and
    form written in."""
    mention = drug_strength.first(text)
    rest = text if mention is None else text[: mention.start] + " " + text[mention.end :]
    form = drug_form.find(rest)
    if form is not None:
        rest = rest[: form.start] + " " + rest[form.end :]
    name = SPACES.sub(" ", rest).strip(" ,-")
    return name, mention.text if mention else None, form.form if form else None


def _by_name(db: SqlClient, name: str, spelt: bool = True) -> Found:
    brand = products(db, "WHERE brand_name = ? COLLATE NOCASE", (name,))
    key = ingredient_key(name)
    same_key = products(db, "WHERE ingredient = ?", (key,)) if key else []
    generic = [r for r in same_key if (r.generic_name or "").casefold() == name.casefold()]
    if brand and generic and not set(brand) & set(generic):
        return _brand_or_generic(name, brand, generic, key)
    # a brand's name is another ingredient's products only when it is that ingredient's name
    # ('Hydromorphone'); 'Amoxicillin (Sugar Reduced)' is that product alone
    wider = not generic and (not brand or key == name.casefold())
    tiers = [t for t in (brand, generic, same_key if wider else []) if t]
    if tiers:
        rows = list({r.din: r for t in reversed(tiers) for r in t}.values())[::-1]
        if brand:
            return Found("brand", rows, name=brand[0].brand_name, tiers=tiers)
        return Found("ingredient", rows, name=key, tiers=tiers)
    cls = class_named_in(db, name)
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


def _brand_or_generic(name: str, brand: list[Product], generic: list[Product], key: str) -> Found:
    """A name that is both a brand ('Clindamycin', a CLINDAMYCIN HCL capsule) and the generic
    name of other products (CLINDAMYCIN): read as the generic name, which names the drug; the
    brand answers when only it is listed at the strength or form asked (`select`). Either way
    the answer says the name has the other reading."""
    shown = ", ".join(dict.fromkeys(r.strength or r.din for r in brand))
    other = f"{brand[0].brand_name} ({brand[0].generic_name} {shown})"
    found = Found("ingredient", [*generic, *brand], name=key, tiers=[generic, brand])
    found.homonym = Homonym(name, other, brand)
    return found


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
    cls = class_named_in(db, q)
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
        cls = class_named_in(db, query.drug_class)
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
