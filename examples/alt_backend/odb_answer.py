"""``odb.get`` answers about the product a request names (found by
:mod:`examples.alt_backend.odb_request`): its coverage, its interchangeable group and the
lowest-cost product in it, covered alternatives and the price comparison.

The facts come from :class:`examples.alt_backend.odb.Formulary`; the words of the question
are read by :mod:`examples.alt_backend.odb_terms`. The seeded defects ``price``,
``wrong_product`` and ``missing_field`` act here.
"""

from __future__ import annotations

import re

from examples.alt_backend.odb import Formulary, Product
from examples.alt_backend.odb_request import (
    OdbRequest,
    answered_product,
    is_brand_named,
    named_products,
)
from examples.alt_backend.odb_terms import (
    CLASSES,
    condition_in,
    find_form,
    find_strength,
    form_matches,
    norm_tokens,
    strength_matches,
)
from examples.alt_backend.payloads import (
    Alternative,
    Citation,
    Coverage,
    OdbResult,
    ProductRow,
)
from examples.alt_backend.store import citation
from examples.alt_backend.text import unit_price


class OdbAnswer:
    """Builds one odb.get answer; ``price`` applies the seeded price defect."""

    def __init__(self, formulary: Formulary, defects: frozenset[str]):
        self.f = formulary
        self.defects = defects

    def price(self, p: Product, value: float | None = None) -> float | None:
        amount = p.price if value is None else value
        if amount is None:
            return None
        if "price" in self.defects and int(p.din[-1]) % 2 == 1:
            return round(amount * 1.15, 4)
        return amount

    def row(self, p: Product) -> ProductRow:
        return {
            "din": p.din,
            "brand": p.brand,
            "strength": p.strength,
            "dosage_form": p.form,
            "group_id": p.group_id,
            "covered": p.benefit,
            "lu_required": p.lu_required,
            "price": self.price(p),
        }

    # -------------------------------------------------------------- the answer
    def answer(self, req: OdbRequest) -> OdbResult:
        checks = set(req.check or ["coverage", "interchangeable", "lowest_cost"])
        if "lu_criteria" in checks:
            checks.add("coverage")
        strength = req.strength or (find_strength(req.q) if req.q else None)
        form = req.form or (find_form(req.q) if req.q else None)
        condition = req.condition or condition_in(req.q)
        wants_brands = "all_strengths" in checks or bool(
            req.q and re.search(r"\b(brands?|biosimilars?|all strengths)\b", req.q, re.I)
        )
        candidates, named, class_key = named_products(self.f, req)
        if req.din and candidates:
            strength = form = None  # the DIN names one product
        out: OdbResult = {
            "provenance": [],
            "confidence": 0.0,
            "coverage": None,
            "interchangeable": [],
            "lowest_cost": None,
            "context": [],
            "alternatives": [],
            "price_comparison": None,
            "needs_more_info": False,
            "citations": [],
            "conflicts": [],
            "brands": [],
            "other_strengths": [],
            "not_listed": None,
        }
        if not candidates:
            out["needs_more_info"] = True
            out["context"] = [
                f"Nothing in the formulary extract of {self.f.date} matches {named!r}; "
                "give a brand or ingredient name, a DIN or a drug class."
            ]
            return self._finish(out)

        pool = candidates
        if req.exclude_lu:
            pool = [p for p in pool if not p.lu_required]
        if strength:
            pool = [p for p in pool if strength_matches(strength, p.strength)]
        if form:
            pool = [p for p in pool if form_matches(form, p.form)]
        if not pool:
            if "wrong_product" in self.defects and strength:
                # the seeded defect: answer another strength as if it were the one asked
                pool = [p for p in candidates if not form or form_matches(form, p.form)]
            if not pool:
                return self._not_listed(out, candidates, named, strength, form, req.top_k)

        chosen = answered_product(pool, class_key is not None)
        out["provenance"] = ["sql"]
        group = [p for p in self.f.groups[chosen.group_id]]
        benefit_group = [p for p in group if p.benefit and p.price is not None]
        cheapest = min(benefit_group, key=lambda p: (p.price or 0.0, p.order), default=None)

        cites: list[Citation] = [
            citation(
                self.f.group_passage(chosen.group_id), f"interchangeable group {chosen.group_id}"
            ),
            citation(self.f.product_passage(chosen), f"DIN {chosen.din}"),
        ]
        if "coverage" in checks:
            out["coverage"] = self._coverage(chosen, req, checks, condition)
            if req.include_lu:
                for code in chosen.lu_codes:
                    cites.append(citation(self.f.lu_passage(code), f"LU code {code}"))
        if "interchangeable" in checks or "interchangeable_group" in checks:
            shown = [
                p
                for p in group
                if (p.benefit or p.din == chosen.din)
                and (req.include_brand or not is_brand_named(p) or p.din == chosen.din)
            ]
            shown.sort(
                key=lambda p: (p.din != chosen.din, p.price is None, p.price or 0.0, p.order)
            )
            out["interchangeable"] = [
                {
                    "din": p.din,
                    "brand": p.brand,
                    "price": self.price(p),
                    "lowest_cost": cheapest is not None and p.benefit and p.price == cheapest.price,
                }
                for p in shown[: req.top_k]
            ]
        if cheapest is not None and ({"lowest_cost", "price_comparison"} & checks):
            saving = (
                round(chosen.price - cheapest.price, 4)
                if chosen.price is not None and cheapest.price is not None
                else None
            )
            if "lowest_cost" in checks:
                out["lowest_cost"] = {
                    "din": cheapest.din,
                    "brand": cheapest.brand,
                    "price": self.price(cheapest),
                    "savings": saving,
                }
            if chosen.benefit and chosen.price is not None and cheapest.price is not None:
                pct = round(100.0 * (saving or 0.0) / chosen.price, 2) if chosen.price else None
                out["price_comparison"] = {
                    "requested_din": chosen.din,
                    "requested_brand": chosen.brand,
                    "requested_price": self.price(chosen),
                    "amount_odb_pays": self.price(chosen, chosen.odb_pays),
                    "lowest_cost_din": cheapest.din,
                    "lowest_cost_brand": cheapest.brand,
                    "lowest_cost_price": self.price(cheapest),
                    "savings_per_unit": saving,
                    "savings_percent": pct,
                }
        if req.check_alternatives and (
            not chosen.benefit or class_key is not None or "alternatives" in checks
        ):
            out["alternatives"] = self._alternatives(chosen, class_key, req)
        if wants_brands:
            every = [p for p in self.f.by_generic[chosen.generic]]
            every.sort(key=lambda p: (not p.benefit, p.order))
            out["brands"] = [self.row(p) for p in every]
        if not strength and not form and class_key is None:
            same = [p for p in self.f.by_brand[norm_tokens(chosen.brand)] if p.din != chosen.din]
            out["other_strengths"] = [self.row(p) for p in same[: req.top_k]]
        out["context"] = self._context(chosen, class_key, strength, form)
        out["citations"] = cites
        corroborating = min(3, len(benefit_group) - 1) if benefit_group else 0
        out["confidence"] = round(min(0.99, 0.9 + 0.03 * max(0, corroborating)), 2)
        return self._finish(out)

    def _finish(self, out: OdbResult) -> OdbResult:
        if "missing_field" in self.defects:
            out.pop("needs_more_info", None)
        return out

    def _coverage(
        self, p: Product, req: OdbRequest, checks: set[str], condition: str | None
    ) -> Coverage:
        criteria: str | None = None
        if p.lu_codes and req.include_lu:
            pieces = []
            for code in p.lu_codes:
                entry = self.f.lu[code]
                period = f" (authorized for: {entry.period})" if entry.period else ""
                pieces.append(f"LU code {code}{period}: {entry.criteria}")
            criteria = " | ".join(pieces)
            if condition:
                hits = [c for c in p.lu_codes if condition.lower() in self.f.lu[c].criteria.lower()]
                if hits:
                    criteria += f" | '{condition}' appears in LU code(s) {', '.join(hits)}."
                else:
                    criteria += (
                        f" | Checked for '{condition}': none of these criteria names it, so "
                        "a Limited Use claim for that use is not supported by the formulary."
                    )
        notes: list[str] = []
        if "lu_criteria" in checks and p.note:
            notes.append(_summarise(p.note))
        return {
            "covered": p.benefit,
            "din": p.din,
            "brand_name": p.brand,
            "generic_name": p.generic,
            "strength": p.strength,
            "dosage_form": p.form,
            "group_id": p.group_id,
            "lu_required": p.lu_required,
            "lu_criteria": criteria,
            "lu_codes": list(p.lu_codes) if req.include_lu else [],
            "notes": notes,
        }

    def _alternatives(
        self, chosen: Product, class_key: str | None, req: OdbRequest
    ) -> list[Alternative]:
        key = class_key or self.f.class_of(chosen.generic)
        if key is not None:
            pool = self.f.class_members(key)
            label = CLASSES[key][0]
        else:
            pool = [p for p in self.f.products.values() if p.category == chosen.category]
            label = f"same formulary category ({chosen.category.lower()})"
        best: dict[str, Product] = {}
        for p in pool:
            if not p.benefit or p.price is None or p.group_id == chosen.group_id:
                continue
            if req.exclude_lu and p.lu_required:
                continue
            if class_key is None and p.generic == chosen.generic:
                continue
            held = best.get(p.group_id)
            if held is None or (p.price, p.order) < (held.price or 0.0, held.order):
                best[p.group_id] = p
        ranked = sorted(best.values(), key=lambda p: (p.price or 0.0, p.order))
        return [
            {
                "din": p.din,
                "brand": p.brand,
                "generic_name": p.generic,
                "strength": p.strength,
                "price": self.price(p),
                "lu_required": p.lu_required,
                "reason": f"covered {label}: {p.generic.lower()} {p.strength or ''}".strip(),
            }
            for p in ranked[: req.top_k]
        ]

    def _not_listed(
        self,
        out: OdbResult,
        candidates: list[Product],
        named: str,
        strength: str | None,
        form: str | None,
        top_k: int,
    ) -> OdbResult:
        listed = sorted(candidates, key=lambda p: (not p.benefit, p.order))
        asked = " ".join(x for x in (strength, form) if x)
        at = ", ".join(
            dict.fromkeys(f"{p.strength or '?'} {p.form or ''}".strip() for p in listed[:top_k])
        )
        shown = named.title() if named.isupper() else named
        out["provenance"] = ["sql"]
        out["confidence"] = 0.9
        out["needs_more_info"] = True
        out["not_listed"] = {
            "name": shown,
            "strength": strength,
            "form": form,
            "message": f"{shown} is not listed at {asked}; the formulary lists it as: {at}.",
            "listed": [self.row(p) for p in listed[:top_k]],
        }
        out["context"] = [
            f"No product of {shown} matches {asked}; ask which listed product is meant."
        ]
        out["citations"] = [
            citation(self.f.product_passage(p), f"DIN {p.din}") for p in listed[: min(3, top_k)]
        ]
        return self._finish(out)

    def _context(
        self, p: Product, class_key: str | None, strength: str | None, form: str | None
    ) -> list[str]:
        lines = []
        if class_key is not None:
            lines.append(
                f"Lowest-priced covered {CLASSES[class_key][0]} in the extract: {p.brand} "
                f"({p.generic.lower()} {p.strength}) at {unit_price(p.price)} per unit."
            )
        lines.append(self.f.product_passage(p).text)
        lines.append(self.f.group_passage(p.group_id).text)
        for code in p.lu_codes[:3]:
            lines.append(self.f.lu_passage(code).text)
        return lines


def _summarise(note: str, limit: int = 240) -> str:
    text = " ".join(note.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"
