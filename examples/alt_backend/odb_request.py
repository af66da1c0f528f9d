"""What an ``odb.get`` request names: its arguments (:class:`OdbRequest`), the formulary
products they name and how they were found, and which of those products the answer is about.

Kept apart from :mod:`examples.alt_backend.odb_answer`, which builds the answer about the
product chosen here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from examples.alt_backend.odb import Formulary, Product
from examples.alt_backend.odb_terms import CLASSES, find_class, form_tokens, norm_tokens


@dataclass
class OdbRequest:
    drug: str | None = None
    din: str | None = None
    ingredient: str | None = None
    drug_class: str | None = None
    q: str | None = None
    strength: str | None = None
    form: str | None = None
    condition: str | None = None
    check: list[str] | None = None
    check_alternatives: bool = True
    include_lu: bool = True
    exclude_lu: bool = False
    include_brand: bool = True
    top_k: int = 5


def named_products(f: Formulary, req: OdbRequest) -> tuple[list[Product], str, str | None]:
    """Products the request names, how they were found, and the class key if any."""
    if req.din:
        din = req.din.zfill(8)
        p = f.products.get(din)
        return ([p] if p else []), f"DIN {din}", None
    text = " ".join(x for x in (req.drug, req.ingredient, req.q) if x)
    if req.q:
        m = re.search(r"(?<!\d)(\d{8})(?!\d)", req.q)
        if m and m.group(1) in f.products:
            return [f.products[m.group(1)]], f"DIN {m.group(1)}", None
    names = f.find_names(text) if text else []
    if names:
        best = names[0][0]
        top = [(kind, name) for n, kind, name in names if n == best]
        generic = next((name for kind, name in top if kind == "generic"), None)
        if generic is not None:
            return list(f.by_generic[generic]), generic, None
        brand = top[0][1]
        return list(f.by_brand[norm_tokens(brand)]), brand, None
    key = None
    if req.drug_class:
        key = find_class(req.drug_class)
    if key is None and text:
        key = find_class(text)
    if key is not None:
        return f.class_members(key), CLASSES[key][0], key
    return [], text or "the request", None


def answered_product(pool: list[Product], by_price: bool) -> Product:
    """The product answered: for a class, the cheapest covered one; otherwise covered
    before not covered, plain tablets/capsules before other forms, listing order."""
    if by_price:
        covered = [p for p in pool if p.benefit and p.price is not None]
        if covered:
            return min(covered, key=lambda p: (p.price or 0.0, p.order))
    return min(
        pool,
        key=lambda p: (not p.benefit, len(form_tokens(p.form)) > 1, p.order),
    )


def is_brand_named(product: Product) -> bool:
    """A brand-name product: its name does not carry the ingredient's name."""
    first = next(iter(Formulary.short_generic(product.generic)), "")
    return bool(first) and first not in norm_tokens(product.brand)
