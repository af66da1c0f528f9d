"""``schedule.get`` answers: the codes a question names or finds, each code's fee, limits and
conditions, and the tables that disagree on its amount.

The facts come from :class:`examples.alt_backend.schedule.Schedule`; this module only decides
what an answer shows and words it.
"""

from __future__ import annotations

import re

from examples.alt_backend.payloads import (
    Citation,
    Conflict,
    FeeComponent,
    FeeVariant,
    ScheduleItem,
    ScheduleResult,
)
from examples.alt_backend.schedule import CODE, COMPONENT_WORDS, Listing, Schedule
from examples.alt_backend.store import citation
from examples.alt_backend.text import money


class ScheduleAnswer:
    def __init__(self, schedule: Schedule, defects: frozenset[str]):
        self.s = schedule
        self.defects = defects

    def answer(
        self, q: str, codes: list[str] | None, include: list[str] | None, top_k: int
    ) -> ScheduleResult:
        parts = set(include) if include else {"codes", "fee", "limits", "documentation"}
        asked = [c.strip().upper() for c in (codes or [])]
        asked = list(dict.fromkeys(re.sub(r"^([A-Z]\d{3})[A-Z]$", r"\1", c) for c in asked))
        known = [c for c in asked if c in self.s.listings]
        unknown = [c for c in asked if c not in self.s.listings]
        if not asked:
            for m in CODE.finditer(q):
                code = m.group(1).upper()
                if code in self.s.listings and code not in known:
                    known.append(code)
        chosen = list(known[:top_k])
        if "codes" in parts or not chosen:
            query = " ".join([q, *(self.s.description(c) for c in known)])
            chosen += self.s.search(query, top_k - len(chosen), exclude=set(chosen))
        items = [self._item(code, parts) for code in chosen]
        conflicts = [c for code in chosen if "fee" in parts for c in self._conflicts(code)]
        cites = [] if "citations" in self.defects else [self._cite(code) for code in chosen]
        confidence = 0.0
        if chosen:
            top_main = self.s.main(chosen[0]).amount
            agreeing = (
                sum(1 for r in self.s.listings[chosen[0]] if r.amount == top_main) - 1
                if top_main is not None
                else 0
            )
            confidence = 0.9 + 0.03 * min(3, max(0, agreeing)) - 0.1 * len(conflicts)
        return {
            "provenance": ["sql"] if chosen else [],
            "confidence": round(max(0.0, min(1.0, confidence)), 2),
            "items": items,
            "citations": cites,
            "conflicts": conflicts,
            "needs_more_info": bool(asked) and not known,
            "unknown_codes": unknown,
        }

    def _cite(self, code: str) -> Citation:
        return citation(self.s.passage(code), f"fee code {code}")

    def _item(self, code: str, parts: set[str]) -> ScheduleItem:
        main = self.s.main(code)
        limits, needs = self.s.clauses(code)
        spread = self.s.amounts(code)
        comps: list[FeeComponent] = []
        seen: set[tuple[str, float]] = set()
        for r in [main, *self.s.listings[code]]:
            for name, value in r.components:
                if (name, value) not in seen:
                    seen.add((name, value))
                    comps.append({"component": name, "fee": value})
        variants: list[FeeVariant] = []
        if len(spread) > 1:
            for _amount, rows in spread:
                first = rows[0]
                variants.append(
                    {
                        "fee": first.amount,
                        "fee_kind": first.kind(),
                        "description": first.description,
                        "page_ref": first.page_ref,
                        "table": first.table,
                        "n_source_tables": len(rows),
                        "fee_components": [{"component": n, "fee": v} for n, v in first.components],
                    }
                )
        show_fee = "fee" in parts
        return {
            "code": code,
            "description": self.s.description(code),
            "fee": main.amount if show_fee else None,
            "fee_components": comps if show_fee else [],
            "fee_variants": variants if show_fee else [],
            "fee_note": _fee_note(main, spread) if show_fee else None,
            "requirements": "; ".join(needs) or None if "documentation" in parts else None,
            "limits": "; ".join(limits) or None if "limits" in parts else None,
            "page_num": main.page,
        }

    def _conflicts(self, code: str) -> list[Conflict]:
        spread = self.s.amounts(code)
        if len(spread) < 2:
            return []
        main_amount, main_rows = spread[0]
        others = ", ".join(
            f"{money(a)} ({', '.join(dict.fromkeys(r.page_ref for r in rows))})"
            for a, rows in spread[1:]
        )
        return [
            {
                "field": f"fee of {code}",
                "sql_value": [amount for amount, _ in spread],
                "vector_value": None,
                "resolution": (
                    f"Answered {money(main_amount)}, the amount {len(main_rows)} table(s) give; "
                    f"other tables list {others}. Confirm against the current Schedule."
                ),
            }
        ]


def _fee_note(main: Listing, spread: list[tuple[float, list[Listing]]]) -> str | None:
    notes = []
    if main.amount is None and main.kind() == "percent":
        said = f"{main.description} {main.units or ''} {main.conditions or ''} {main.raw_fee or ''}"
        pct = re.search(r"(\d+(?:\.\d+)?)\s*%", said)
        notes.append(
            f"A percentage premium (add {pct.group(1)}%), not a dollar amount."
            if pct
            else "A percentage premium, not a dollar amount."
        )
    if main.components:
        named = [
            f"{COMPONENT_WORDS.get(n, n)} ({n}) {money(v)}"
            if n in COMPONENT_WORDS
            else f"{n} {v:g}"
            for n, v in main.components
        ]
        if main.fee is None and len(main.components) == 1:
            notes.append(f"No total in the table; it gives just one column: {named[0]}.")
        else:
            notes.append("Columns: " + ", ".join(named) + ".")
    if len(spread) > 1:
        notes.append(
            "Tables disagree: "
            + "; ".join(
                f"{money(a)} ({len(rows)} table(s), first {rows[0].page_ref})" for a, rows in spread
            )
            + "."
        )
    return " ".join(notes) or None
