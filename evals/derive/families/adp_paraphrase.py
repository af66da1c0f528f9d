"""ADP share rules and exclusions asked in clinicians' other words, naming devices by the names
used at the bedside ('rollator', 'CPAP', 'CGM', 'artificial leg') rather than the manuals'.

One case per phrasing of each (manual, scenario) share rule and each (manual, exclusion kind);
the device is one of the category's other names, chosen by checksum. Expected values come from
the corpus rows (adp_funding_rule.csv, adp_exclusion.csv), never from adp.get: the shares of
the rules, and one of their sections cited or listed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.adp import CORE, EXCLUSIONS, FUNDING, _num, _pick, _source, loc
from evals.derive.families.adp_category import rule_manual
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

TOOL = "adp.get"
FAMILY = "adp.paraphrase"

# Other names of each category's devices, as clinicians say them.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "mobility": ("rollator", "wheelie walker", "power chair", "mobility scooter", "wheelchair"),
    "comm_aids": ("AAC device", "speech device", "communication board"),
    "hearing_devices": ("behind-the-ear hearing aid", "hearing aids"),
    "visual_aids": ("video magnifier", "electronic magnifier", "low vision aid"),
    "respiratory": ("CPAP", "BiPAP machine", "sleep apnea machine"),
    "insulin_pump": ("insulin pump", "Omnipod pump"),
    "glucose_monitoring": ("CGM", "Dexcom sensor", "continuous glucose monitoring system"),
    "prosthesis": ("artificial leg", "below-knee prosthesis", "prosthetic arm", "artificial eye"),
    "maxillofacial": ("obturator", "nasal prosthesis", "prosthetic ear"),
    "grants": ("breast form after mastectomy", "external breast prosthesis"),
    CORE: ("ankle-foot orthosis", "back brace"),
}
# Categories with two manuals: a split is asked of a device of the manual that states it (the
# Ocular Prostheses manual's 25 % is not a prosthetic leg's: the Limb Prostheses manual states no
# split, and the answer is then the core manual's general rule, said to be one).
MANUAL_SYNONYMS: dict[str, tuple[str, ...]] = {
    "Ocular Prostheses": ("artificial eye",),
    "Limb Prostheses": ("artificial leg", "below-knee prosthesis", "prosthetic arm"),
    "Maxillofacial Extraoral Prostheses": ("nasal prosthesis", "prosthetic ear"),
    "Maxillofacial Intraoral Prostheses": ("obturator",),
}
# Devices a car-substitute question is about (the mobility manual's rule).
RIDING = ("mobility scooter", "power chair")

SHARE_WORDS: dict[str, tuple[str, ...]] = {
    "purchase": (
        "Who pays the rest of a {device} after ADP?",
        "What is my patient's out-of-pocket share for a {device} through ADP?",
        "ADP covers how much of a {device}?",
    ),
    "lease": (
        "If the {device} is rented rather than bought, what does ADP fund?",
        "ADP share when renting a {device}?",
    ),
    "batteries": (
        "does ADP pay for batteries",
        "Who pays for {device} batteries?",
        "Battery replacement for a {device} - is that funded?",
    ),
    "repair": (
        "The {device} is broken - who pays to fix it?",
        "Does ADP cover maintenance on a {device}?",
        "Fixing a {device}: ADP or the patient?",
    ),
}
EXCLUSION_WORDS: dict[str, tuple[str, ...]] = {
    "batteries": ("Who covers new batteries for a {device}?",),
    "repairs_maintenance": ("The {device} broke - will ADP pay to have it fixed?",),
    "alternative_transport": (
        "She wants a {device} to get around town instead of driving - funded?",
        "{device} only for outings outside the home, not daily use: does ADP fund it?",
    ),
    "education_work_recreation_only": (
        "Patient needs the {device} just for school - can ADP fund it?",
        "A {device} needed only at work: eligible for ADP?",
    ),
    "therapy_training_only": ("A {device} used just during physio sessions - ADP funded?",),
    "backup_spare_duplicate": ("Can ADP fund an extra {device} to keep as a backup?",),
    "used_devices": ("Patient found a used {device} on Kijiji - will ADP pay for it?",),
    "bought_before_approval": (
        "Patient paid for the {device} before ADP approval came through - can ADP pay her back?",
    ),
    "unregistered_supplier": (
        "{device} bought from a vendor that is not registered with ADP - covered?",
    ),
    "warranty_fees": ("Does ADP pay for an extended warranty on the {device}?",),
    "cosmetic": ("Is a purely cosmetic cover for the {device} funded?",),
    "other_payer": (
        "Patient was injured at work and WSIB is involved - does ADP fund the {device}?",
    ),
    "general_not_funded": ("Which items for a {device} are not funded by ADP?",),
}


def _args(doc: str, question: str, device: str) -> Arguments:
    args: Arguments = {"query": question[:1].upper() + question[1:]}
    if doc == CORE:  # the core manual's own rules: asked as the category, as adp.get names it
        args["device"] = {"category": CORE, "type": device}
    return args


def _any_section(path: str, doc: str, sections: list[str], field: str | None) -> ExpectSpec:
    """One of the rows' sections at `path` (a list of locs, or of items with `field`)."""
    pattern = "|".join(re.escape(loc(doc, s)) for s in sorted(set(sections)))
    item: ExpectSpec = {"check": "matches", "path": field or "$", "pattern": f"({pattern})"}
    if field is None:
        item["pattern"] += r"(?=[,;)])"
    return {"check": "any_item", "path": path, "item": item}


@family(FAMILY, tool=TOOL)
def paraphrases(corpus: Corpus) -> Iterator[Scenario]:
    """Each share rule (purchase, lease, batteries, repair) and each exclusion of each manual,
    asked in other words with another name for the device: its shares and one of its sections."""
    rules: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in corpus.rows(FUNDING):
        if row["scenario"] in SHARE_WORDS:
            rules[(row["adp_doc"], row["scenario"])].append(row)
    for (doc, scenario), rows in sorted(rules.items()):
        shares = {(r["client_share_percent"], r["adp_share_percent"], r["covered"]) for r in rows}
        if len(shares) != 1:
            continue  # the manual's rules disagree: no one answer to expect
        client, adp_share, covered = shares.pop()
        ids = ", ".join(r["rule_id"] for r in rows)
        names = SYNONYMS[doc]
        if covered != "0" and doc in ("prosthesis", "maxillofacial"):
            manuals = {rule_manual(corpus, r) for r in rows}
            if len(manuals) == 1 and (manual := manuals.pop()) in MANUAL_SYNONYMS:
                names = MANUAL_SYNONYMS[manual]
        for n, template in enumerate(SHARE_WORDS[scenario]):
            device = _pick(f"{doc}:{scenario}:{n}", names)
            question = template.format(device=device)
            if "{device}" not in template and doc != CORE:
                question = f"{question} - {device}"
            expect: list[ExpectSpec] = [
                _any_section("citations", doc, [r["section_ref"] for r in rows], "loc")
            ]
            if covered == "0":
                expect.append(
                    {
                        "check": "matches",
                        "path": "funding.repair_coverage",
                        "pattern": "^Not covered",
                    }
                )
            else:
                expect += [
                    {
                        "check": "equals",
                        "path": "funding.client_share_percent",
                        "value": _num(client),
                        "tolerance": 0.001,
                    },
                    {
                        "check": "equals",
                        "path": "funding.adp_contribution",
                        "value": _num(adp_share),
                        "tolerance": 0.001,
                    },
                ]
            yield derived_case(
                FAMILY,
                f"share-{doc}-{scenario}-{n}",
                tool=TOOL,
                args=_args(doc, question, device),
                expect=expect,
                title=f"{doc} {scenario} in other words: {question}",
                source=_source(corpus, FUNDING, f"rule_id {ids} ({doc} {scenario})"),
            )
    exclusions: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in corpus.rows(EXCLUSIONS):
        exclusions[(row["adp_doc"], row["exclusion"])].append(row)
    for (doc, kind), rows in sorted(exclusions.items()):
        ids = ", ".join(r["exclusion_id"] for r in rows)
        for n, template in enumerate(EXCLUSION_WORDS[kind]):
            devices = RIDING if kind == "alternative_transport" else SYNONYMS[doc]
            device = _pick(f"{doc}:{kind}:{n}", devices)
            question = template.format(device=device)
            yield derived_case(
                FAMILY,
                f"exclusion-{doc}-{kind}-{n}",
                tool=TOOL,
                args=_args(doc, question, device),
                expect=[
                    {
                        "check": "contains",
                        "path": "eligibility.other_criteria.flagged_exclusions",
                        "value": kind,
                    },
                    _any_section("exclusions", doc, [r["section_ref"] for r in rows], None),
                ],
                title=f"{doc} {kind} in other words: {question}",
                source=_source(corpus, EXCLUSIONS, f"exclusion_id {ids} ({doc} {kind})"),
            )
