"""ADP funding rules read from one sentence of the manuals or the rule table: a client portion
or an ADP share (percent), grant amounts ($), social-assistance funding (OW/ODSP/ACSD), and no
funding for repairs or batteries; and the own-words summary of each rule.

`adp` collects these per section and numbers them.
"""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

from .adp_manual_text import AMOUNT

SOCIAL_ASSISTANCE = re.compile(
    r"Ontario Works|\bODSP\b|Ontario Disability Support|\bACSD\b|social assistance", re.I
)

FUNDING_COLUMNS = [
    "rule_id",
    "adp_doc",
    "device_category",
    "section_ref",
    "policy_uid",
    "page_num",
    "scenario",
    "client_share_percent",
    "adp_share_percent",
    "max_contribution",
    "covered",
    "summary",
    "evidence",
]


class ShareRule(TypedDict):
    """One funding rule as one sentence states it (before it is tied to a section)."""

    scenario: str
    client: NotRequired[int]  # client share, percent
    adp: NotRequired[int]  # ADP share, percent
    item: NotRequired[str]
    vendor_price: NotRequired[bool]
    max: NotRequired[bool]  # the ADP share is capped at an approved maximum
    max_value: NotRequired[float]  # a grant amount, dollars
    covered: NotRequired[bool]


class FundingRow(TypedDict):
    """One adp_funding_rule.csv row (`rule_id` is given once all rows are sorted)."""

    adp_doc: str
    device_category: str
    section_ref: str
    policy_uid: str
    page_num: int | None
    scenario: str
    client_share_percent: int | None
    adp_share_percent: int | None
    max_contribution: float | None
    covered: bool
    summary: str
    evidence: str
    rule_id: NotRequired[str]


def funding_from_sentence(s: str, social_context: bool) -> list[ShareRule]:
    out: list[ShareRule] = []
    low = s.lower()
    scenario = "lease" if re.search(r"\blease", low) else "purchase"
    social = bool(SOCIAL_ASSISTANCE.search(s)) or social_context
    if m := re.search(
        r"client(?:'s|’s)?\s+portion\s*(?:\(|is\s+|must be\s+)?(?:at least\s+)?(\d{1,3})\s*(?:percent|%)",
        low,
    ):
        c = int(m.group(1))
        out.append({"scenario": scenario, "client": c, "adp": 100 - c})
    elif m := re.search(r"collects from the applicant,?\s*(\d{1,3})\s*percent", low):
        c = int(m.group(1))
        out.append({"scenario": scenario, "client": c, "adp": 100 - c, "vendor_price": True})
    elif m := re.search(
        r"(?:adp|program|ministry)\s+(?:will\s+)?(?:only\s+)?pays?\s+(?:up to\s+)?(\d{1,3})\s*(?:percent|%)",
        low,
    ):
        a = int(m.group(1))
        item = re.search(
            r"\bfor ([a-z][\w &/-]{3,60}?),?\s+(?:the\s+)?(?:adp|program)\s+(?:will\s+)?pays?", low
        )
        out.append(
            {
                # 100% funding in a section about OW/ODSP/ACSD recipients is their rule, item or not.
                "scenario": "social_assistance" if social and a == 100 else scenario,
                "client": 100 - a,
                "adp": a,
                "item": item.group(1) if item else "",
                "vendor_price": "vendor" in low,
                "max": "maximum contribution" in low or "maximum amount" in low,
            }
        )
    elif social and (m := re.match(r"(?:[a-d]\.\s*)?(100)%\s+(?:of|up to)", low)):
        out.append(
            {
                "scenario": "social_assistance",
                "client": 0,
                "adp": 100,
                "max": "maximum contribution" in low,
            }
        )
    if re.search(
        r"(?:not provide|no)\s+(?:any\s+)?(?:adp\s+)?(?:funding|coverage)(?:\s+assistance)?\s+(?:towards|for)\s+the\s+cost\s+of\s+(?:the\s+)?repairs",
        low,
    ):
        out.append({"scenario": "repair", "client": 100, "adp": 0, "covered": False})
        if "batter" in low:
            out.append({"scenario": "batteries", "client": 100, "adp": 0, "covered": False})
    amounts = AMOUNT.findall(s)
    if amounts and re.search(r"grant", low):
        labels = re.findall(r"([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)\s*\(each\)", s)
        for i, amt in enumerate(amounts):
            out.append(
                {
                    "scenario": "grant_social_assistance" if social else "grant",
                    "max_value": float(amt.replace(",", "")),
                    "item": labels[i] if i < len(labels) and len(labels) == len(amounts) else "",
                }
            )
    return out


def funding_summary(label: str, r: ShareRule) -> str:
    """The rule in our own words, led by its category's label."""
    sc = r["scenario"]
    if sc in ("repair", "batteries"):
        what = "Repairs and maintenance" if sc == "repair" else "Batteries"
        return f"{label}: {what} are not paid for by ADP; the client bears the full cost."
    if sc.startswith("grant"):
        who = "Clients on OW/ODSP/ACSD" if sc.endswith("social_assistance") else "Eligible clients"
        item = f" per {r['item'].lower()}" if r.get("item") else ""
        return f"{label}: {who} receive a grant of ${r['max_value']:.2f}{item}."
    if sc == "social_assistance":
        cap = " (up to the approved maximum)" if r.get("max") else ""
        what = f" of {r['item']}" if r.get("item") else ""
        return (
            f"{label}: for clients receiving Ontario Works, ODSP or ACSD, ADP covers "
            f"{r['adp']}%{what}{cap}, so the client share is {r['client']}%."
        )
    base = "the vendor's price" if r.get("vendor_price") else "the ADP approved price"
    cap = "; the ADP share is capped at an approved maximum amount" if r.get("max") else ""
    verb = "leased" if sc == "lease" else "purchased"
    what = r["item"] if r.get("item") else f"{verb} devices"
    return (
        f"{label}: for {what} ADP pays {r['adp']}% of {base} and the client pays "
        f"{r['client']}%{cap}."
    )
