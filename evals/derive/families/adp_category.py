"""ADP funding asked for every device manual: the manual's own terms where it states them, else
the core manual's general rule said to be one.

The core manual's 305.00 says funding "is dependent on the Device category" (fixed price,
maximum contribution, grants, hybrid contribution, transfer payment agency) and 305.01 gives
75 % / 25 % only "unless noted otherwise". Which manuals state a split of their own comes from the
corpus: a purchase or lease rule of adp_funding_rule.csv whose section (adp_sections.jsonl, by
policy_uid and page) belongs to that manual. Which manuals state other funding terms (a receiver
at no cost, grant amounts, a rental) was read by hand from every manual's raw text in
../shared/data/adp/adp_extraction.json (sentences on paying, prices, costs, contributions,
grants, rentals), listed in OTHER_TERMS with the words each answer must state; a manual with
neither is answered by the general rule, which the answer must cite (305.01) and say is one:
the manual's own words "unless noted otherwise" and another funding model of 305.00 ("maximum
contribution").
"""

from __future__ import annotations

from collections.abc import Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import ADP_SECTIONS, AdpSectionRecord, Corpus
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

TOOL = "adp.get"
FAMILY = "adp.device_category"
FUNDING = "adp_funding_rule.csv"
SECTIONS = ADP_SECTIONS
CORE = "core_manual"
OFFICIAL = "../shared/data/adp/adp_extraction.json (raw text of every manual)"
SUFFIX = " Policy and Administration Manual"

# Each manual's devices as a clinician names them (the category the tool must read them into).
DEVICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Mobility Devices": ("mobility", ("walker", "power wheelchair", "scooter")),
    "Communication Aids": ("comm_aids", ("speech generating device", "electrolarynx")),
    "Hearing Devices": ("hearing_devices", ("hearing aid", "pair of hearing aids")),
    "Visual Aids": ("visual_aids", ("magnifier", "CCTV reading system")),
    "Respiratory Equipment": ("respiratory", ("CPAP machine", "medication compressor")),
    "Insulin Pump and Supplies": ("insulin_pump", ("insulin pump",)),
    "Real-Time Continuous Glucose Monitoring Systems": (
        "glucose_monitoring",
        ("continuous glucose monitor", "CGM"),
    ),
    "Ocular Prostheses": ("prosthesis", ("ocular prosthesis", "artificial eye")),
    "Limb Prostheses": ("prosthesis", ("prosthetic leg", "artificial arm")),
    "Maxillofacial Extraoral Prostheses": ("maxillofacial", ("facial prosthesis",)),
    "Maxillofacial Intraoral Prostheses": ("maxillofacial", ("intraoral obturator",)),
    "Grants": ("grants", ("breast prosthesis",)),
    "Orthotic Devices": (CORE, ("custom knee brace", "orthotic brace")),
    "Pressure Modification Devices": (CORE, ("pressure garment for burn scars",)),
}
# Funding terms other than a split, read by hand from the manual's raw text: (section, words
# the answer states). Every other manual states none (only what ADP does not fund).
OTHER_TERMS: dict[str, tuple[tuple[str, str], ...]] = {
    "Real-Time Continuous Glucose Monitoring Systems": (("200.04", "no cost"),),
    "Respiratory Equipment": (("315.01", "rental"),),
    "Insulin Pump and Supplies": (("200.01", "supplies"),),
    "Grants": (("230.01", "$195.00"), ("230.02", "$260.00")),
}
QUESTIONS = (
    "What does ADP pay for a {device}, and what does the client pay?",
    "ADP funding for a {device}?",
    "How much of a {device} does the Assistive Devices Program cover?",
)


def loc(doc: str, section: str) -> str:
    return f"adp:{doc}:Section {section}"


def _cited(doc: str, section: str) -> ExpectSpec:
    return {"check": "contains", "path": "citations[*].loc", "value": loc(doc, section)}


def rule_manual(corpus: Corpus, row: dict[str, str]) -> str | None:
    """The manual (without its suffix) of a funding rule's section: by policy_uid and page,
    else the category's only manual; None when the category has several and none matches."""
    by_uid, manuals = _section_index(corpus)
    same = by_uid.get(row["policy_uid"], [])
    page = int(row["page_num"]) if row["page_num"] else None
    best = next((s for s in same if s["page_num"] == page), same[0] if same else None)
    if best is not None:
        return str(best["manual"]).removesuffix(SUFFIX)
    if len(manuals.get(row["adp_doc"], ())) == 1:
        return next(iter(manuals[row["adp_doc"]])).removesuffix(SUFFIX)
    return None


def _section_index(
    corpus: Corpus,
) -> tuple[dict[str, list[AdpSectionRecord]], dict[str, set[str]]]:
    by_uid: dict[str, list[AdpSectionRecord]] = {}
    manuals: dict[str, set[str]] = {}
    for s in corpus.adp_sections():
        by_uid.setdefault(str(s["policy_uid"]), []).append(s)
        manuals.setdefault(str(s["adp_doc"]), set()).add(str(s["manual"]))
    return by_uid, manuals


def own_splits(corpus: Corpus) -> dict[str, list[dict[str, str]]]:
    """Each manual's purchase/lease rules, found by the manual of the rule's section."""
    out: dict[str, list[dict[str, str]]] = {}
    for row in corpus.rows(FUNDING):
        if row["scenario"] not in ("purchase", "lease") or not row["client_share_percent"]:
            continue
        manual = rule_manual(corpus, row)
        if manual is not None:
            out.setdefault(manual, []).append(row)
    return out


@family(FAMILY, tool=TOOL)
def device_category(corpus: Corpus) -> Iterator[Scenario]:
    """Every manual's devices asked for their funding: the manual's own split (its section
    cited, 75/25 stated) and other terms where it has them; else the general rule of 305.01
    cited and said to be one, with 305.00's other funding models."""
    splits = own_splits(corpus)
    general = next(
        r
        for r in corpus.rows(FUNDING)
        if r["adp_doc"] == CORE and r["section_ref"] == "305.01" and r["scenario"] == "purchase"
    )
    for manual, (category, devices) in DEVICES.items():
        own = splits.get(manual, [])
        for n, device in enumerate(devices):
            question = QUESTIONS[(n + len(manual)) % len(QUESTIONS)].format(device=device)
            expect: list[ExpectSpec] = []
            if own:
                refs = sorted({r["section_ref"] for r in own})
                row = own[0]
                expect += [
                    {
                        "check": "any_item",
                        "path": "citations",
                        "item": {
                            "check": "matches",
                            "path": "loc",
                            "pattern": "^("
                            + "|".join(loc(row["adp_doc"], ref).replace(".", r"\.") for ref in refs)
                            + ")$",
                        },
                    },
                    {
                        "check": "equals",
                        "path": "funding.client_share_percent",
                        "value": float(row["client_share_percent"]),
                        "tolerance": 0.001,
                    },
                ]
                what = f"its own split ({', '.join(refs)}; rule_ids {', '.join(r['rule_id'] for r in own)})"
            elif manual == "Grants":  # a grant is a funding model of its own (305.00)
                what = "grant amounts, no split"
            else:
                expect += [
                    _cited(CORE, general["section_ref"]),
                    {
                        "check": "matches",
                        "path": "summary",
                        "pattern": "(?i)unless noted otherwise",
                    },
                    {"check": "matches", "path": "summary", "pattern": "(?i)maximum contribution"},
                ]
                what = (
                    f"no split of its own: the general rule (rule_id {general['rule_id']}, 305.01)"
                )
            for section, words in OTHER_TERMS.get(manual, ()):
                expect += [
                    _cited(category, section),
                    {"check": "mentions", "path": "summary", "value": [words]},
                ]
            if manual in OTHER_TERMS:
                what += "; other terms " + ", ".join(s for s, _ in OTHER_TERMS[manual])
            args: Arguments = {"query": question, "check": ["funding"]}
            if category == CORE:
                args["device"] = {"category": CORE, "type": device}
            yield derived_case(
                FAMILY,
                f"{manual}-{device}",
                tool=TOOL,
                args=args,
                expect=expect,
                title=f"{manual} manual, {device}: {what}",
                source=(
                    f"corpus {FUNDING} and {SECTIONS} (the manual of each rule's section), "
                    f"ingested from {corpus.edition(FUNDING)}; the other terms read by hand from "
                    f"{OFFICIAL}, {manual}{SUFFIX}: {what}"
                ),
            )
