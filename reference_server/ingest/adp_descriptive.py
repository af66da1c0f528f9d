"""ADP descriptive rules: who does what around a device (equipment pool, leases, suppliers,
repairs, service agreements, co-payment of social-assistance clients), in our own words.

The official rule table (`adp_funding_rule.csv`) has many rows that state no share or amount:
who operates the Central Equipment Pool, how leases start, end and are paid, where a client may
buy, what vendors must file. adp.get answers "who/how" questions from them, so each row whose
text states one of the topics below becomes one descriptive rule. A topic is recognised by a
pattern on the official text; its sentence is ours (a template filled only with facts read from
the row: the operator's name, the profession of an authorizer), and it still passes the 8-word
run guard of `textrules.break_runs`. Rows matching no topic (pointers, headings, lists of device
types) are counted, not kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from .adp_manual_text import AdpSection
from .textrules import break_runs

DESCRIPTIVE_COLUMNS = [
    "rule_id",
    "adp_doc",
    "device_category",
    "section_ref",
    "policy_uid",
    "page_num",
    "topic",
    "summary",
    "source_rule",
    "evidence",
]

# The equipment pool each manual means by "CEP".
POOL = {
    "mobility": "the Central Equipment Pool (CEP), ADP's pool of high-technology wheelchairs",
    "comm_aids": "the Centralized Equipment Pool (CEP), ADP's pool of communication equipment",
}

Wording = Callable[[re.Match[str], str], str]


@dataclass(frozen=True)
class Topic:
    name: str
    pattern: re.Pattern[str]
    wording: Wording


def _fixed(text: str) -> Wording:
    return lambda _m, pool: text.format(pool=pool)


def _authorizer(m: re.Match[str], pool: str) -> str:
    who = (
        "a speech-language pathologist registered with CASLPO"
        if "speech" in m.string.lower()
        else "an occupational therapist registered with COTO"
    )
    return (
        f"A communication-aids authorizer of this type is {who}, licensed in Ontario and "
        "trained as ADP requires."
    )


def _t(name: str, pattern: str, wording: str | Wording) -> Topic:
    return Topic(
        name,
        re.compile(pattern, re.I | re.S),
        _fixed(wording) if isinstance(wording, str) else wording,
    )


TOPICS: list[Topic] = [
    _t(
        "pool_operator",
        r"operated\s+by\s+([A-Z][\w&'.-]*(?:\s+[A-Z][\w&'.-]*)*)",
        lambda m, pool: f"{pool} is run by {m.group(1).strip(' .')}.",
    ),
    _t(
        "pool_service_only",
        r"only\s+CEP\s+is\s+authori[sz]ed\s+to\s+provide\s+service",
        "Equipment belonging to {pool} may be serviced or modified by the pool alone.",
    ),
    _t(
        "pool_support",
        r"technical\s+support.{0,200}no\s+cost",
        "Clients of {pool} receive technical support, loaner equipment for assessment, a "
        "province-wide emergency on-call service, and limited warranty repairs and preventive "
        "maintenance free of charge.",
    ),
    _t(
        "pool_supply",
        r"provides\s+ADP\s+Clients.{0,60}new\s+and\s+recycled",
        "Through {pool}, ADP clients anywhere in Ontario obtain new or recycled high-technology "
        "wheelchairs at reduced prices.",
    ),
    _t(
        "pool_application",
        r"power\s+tilt.{0,160}must\s+apply",
        "Applicants whose basic mobility need includes power tilt and/or recline send their ADP "
        "funding application through {pool}.",
    ),
    _t(
        "pool_lease",
        r"CEP\)\s+offers\s+communication\s+equipment",
        "Communication equipment is leased to clients by {pool}, one part of ADP's "
        "augmentative and alternative communication (AAC) service model.",
    ),
    _t(
        "lease_order",
        r"orders\s+from\s+the\s+CEP",
        "The AAC clinic places the order for leased equipment with {pool}.",
    ),
    _t(
        "lease_order_fill",
        r"receives\s+the\s+orders\s+from\s+the\s+AAC",
        "{pool} takes the AAC clinics' orders and leases the equipment to eligible applicants.",
    ),
    _t(
        "lease_fee_payment",
        r"paying\s+the\s+CEP\s+the\s+annual\s+fee",
        "A client pays their share of the approved price to the vendor, or, for leased "
        "equipment, an annual lease fee to {pool}.",
    ),
    _t(
        "lease_fee_basis",
        r"fees\s+are\s+based\s+on\s+the\s+number\s+of\s+clients\s+with\s+active\s+leases",
        "The fees of {pool} are set from how many clients hold active leases in the year "
        "running October to September.",
    ),
    _t(
        "lease_writing_aid",
        r"writing\s+aids\s+are\s+appropriate\s+for\s+lease",
        "A writing aid is leased, not bought, when the prognosis says the client's condition "
        "(and so the writing technology they need) is likely to change within a year.",
    ),
    _t(
        "lease_preliminary",
        r"begins\s+with\s+a\s+preliminary\s+lease",
        "Leasing from {pool} starts with a preliminary lease.",
    ),
    _t(
        "lease_reapplication",
        r"cost\s+\$500\s+or\s+more",
        "When a leased device originally cost $500 or more, the authorizer fills in a new "
        "application form and sends it to {pool}.",
    ),
    _t(
        "lease_to_purchase",
        r"lease\s+may\s+be\s+transformed\s+into\s+a\s+purchase",
        "A lease can be turned into a purchase when the client (or their agent) and the AAC "
        "clinic both agree.",
    ),
    _t(
        "supplier_choice",
        r"may\s+choose\s+to\s+use\s+a\s+Vendor\s+or\s+any\s+Ontario\s+supplier",
        "A client buying a computer or voice restoration / speaking valves may use an "
        "ADP-registered vendor or any supplier in Ontario.",
    ),
    _t(
        "vendor_after_sale",
        r"after-sale\s+services\s+such\s+as\s+repair",
        "Vendors keep enough stock of the communication aids they may sell, honour the "
        "manufacturers' warranties for clients and give after-sale service such as repairs.",
    ),
    _t(
        "repair_quotes",
        r"quotations\s+for\s+repairs",
        "The client obtains repair quotations and hands them in when they are needed.",
    ),
    _t(
        "service_agreements",
        r"submit\s+a\s+copy\s+of\s+all\s+service\s+agreements",
        "A vendor that does not repair devices on its own premises must send ADP a copy of "
        "each service agreement it uses.",
    ),
    _t(
        "device_replacement",
        r"irreparably\s+damaged.{0,120}one\s+third",
        "A funded device may be replaced, during or after its funding period, when normal use "
        "has damaged it beyond repair or when past plus current repair costs pass one third of "
        "its cost.",
    ),
    _t(
        "funding_period",
        r"designated\s+funding\s+period\s+identifies\s+how\s+long",
        "The designated funding period is how long a communication aid should normally stay "
        "in good repair with ordinary use.",
    ),
    _t(
        "invoice_over_approved_price",
        r"invoices\s+will\s+not\s+be\s+paid\s+where\s+the\s+cost",
        "ADP refuses an invoice when the authorized device costs more than its approved price.",
    ),
    _t(
        "valve_no_approved_price",
        r"does\s+not\s+set\s+an\s+Approved\s+Price\s+for\s+voice\s+restoration",
        "ADP has no approved price for voice restoration and speaking valves; their funding "
        "is worked out from the vendor's price.",
    ),
    _t(
        "social_assistance_copay",
        r"co-payment\s+for\s+clients\s+receiving\s+social\s+assistance",
        "This section covers the co-payment of clients on social assistance (Ontario Works, "
        "ODSP or ACSD, benefits of the Ministry of Children, Community and Social Services): "
        "it is not charged to them as the usual client share; the core manual (310.00) sets "
        "program funding for these recipients at 100%.",
    ),
    _t(
        "authorizer_qualifications",
        r"holds\s+a\s+valid\s+certificate\s+of\s+registration",
        _authorizer,
    ),
    _t(
        "vendor_staffing",
        r"staffing\s+requirements\s+for\s+vendors",
        "Vendors must employ people who know communication aids and have experience with the "
        "people who use them.",
    ),
]

LABELS = {
    "mobility": "Mobility devices",
    "comm_aids": "Communication aids",
}


class DescriptiveRow(TypedDict):
    """One adp_descriptive_rule.csv row (`rule_id` is given once all rows are sorted)."""

    adp_doc: str
    device_category: str
    section_ref: str
    policy_uid: str
    page_num: int | None
    topic: str
    summary: str
    source_rule: str
    evidence: str
    rule_id: NotRequired[str]


def descriptive_rules(
    rows: list[dict[str, str]], sections: dict[tuple[str, str], list[AdpSection]]
) -> tuple[list[DescriptiveRow], int]:
    """One rule per official row that states a topic (first topic wins), and the count of rows
    left out. `sections` (adp_doc, section_ref) -> ingested sections, for the page and id."""
    out: dict[tuple[str, str, str], DescriptiveRow] = {}
    skipped = 0
    for row in rows:
        doc, sid = row.get("adp_doc", ""), row.get("section_ref", "")
        text = re.sub(r"\s+", " ", row.get("details") or "")
        topic, match = next(((t, m) for t in TOPICS if (m := t.pattern.search(text))), (None, None))
        if topic is None or match is None:
            skipped += 1
            continue
        key = (doc, sid, topic.name)
        if key in out:
            continue
        secs = sections.get((doc, sid)) or []
        pool = POOL.get(doc, "the equipment pool")
        label = LABELS.get(doc, doc)
        wording = topic.wording(match, pool)
        sentence = break_runs(wording[:1].upper() + wording[1:], set())
        out[key] = {
            "adp_doc": doc,
            "device_category": doc,
            "section_ref": sid,
            "policy_uid": secs[0]["id"] if secs else f"adp:{doc}:{sid}",
            "page_num": secs[0]["page_num"] if secs else None,
            "topic": topic.name,
            "summary": f"{label}: {sentence}",
            "source_rule": row.get("rule_id", ""),
            "evidence": "rules_csv",
        }
    return list(out.values()), skipped
