"""ADP cases on what ADP pays: every share rule, every exclusion, and the co-payment of
social-assistance clients (the CEP income check and the descriptive rules have their own modules:
adp_cep.py, adp_descriptive.py); the vocabulary they share (devices by category, citations).

Expected values come from the corpus rows (adp_funding_rule.csv, adp_exclusion.csv,
adp_descriptive_rule.csv), never from adp.get; the questions name a device of the row's category
in the words a clinician uses.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.adp_category import DEVICES as MANUAL_DEVICES
from evals.derive.families.adp_category import rule_manual
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments

TOOL = "adp.get"
FUNDING = "adp_funding_rule.csv"
EXCLUSIONS = "adp_exclusion.csv"
DESCRIPTIVE = "adp_descriptive_rule.csv"
CORE = "core_manual"
OFFICIAL = "../shared/data/adp (adp_funding_rule.csv, adp_exclusion.csv, adp_extraction.json)"

# A device of each category, as a clinician names it (first: the usual one, then variants).
DEVICES: dict[str, tuple[str, ...]] = {
    "mobility": ("walker", "power wheelchair", "manual wheelchair", "scooter"),
    "comm_aids": ("speech generating device", "communication aid", "electrolarynx"),
    "hearing_devices": ("hearing aid", "pair of hearing aids"),
    "visual_aids": ("magnifier", "CCTV reading system"),
    "respiratory": ("CPAP machine", "ventilator"),
    "insulin_pump": ("insulin pump",),
    "glucose_monitoring": ("continuous glucose monitor",),
    "prosthesis": ("prosthetic leg", "ocular prosthesis"),
    "maxillofacial": ("facial prosthesis",),
    "grants": ("breast prosthesis",),
    CORE: ("orthotic brace", "custom knee brace"),
}


def _pick(key: str, options: tuple[str, ...]) -> str:
    return options[zlib.crc32(key.encode()) % len(options)]


def loc(doc: str, section: str) -> str:
    """How adp.get names a manual section in citations (the loc of its golden scenarios)."""
    return f"adp:{doc}:Section {section}"


def _num(value: str) -> float | None:
    return float(value) if value not in ("", None) else None


def _source(corpus: Corpus, name: str, rows: str) -> str:
    return f"corpus {name} {rows}, ingested from {corpus.edition(name)} ({OFFICIAL})"


def _cited(doc: str, section: str) -> ExpectSpec:
    return {"check": "contains", "path": "citations[*].loc", "value": loc(doc, section)}


# ------------------------------------------------------------------------------ funding rules
SHARE_QUESTIONS = {
    "purchase": (
        "What does ADP pay for a {device}, and what is the client's share?",
        "ADP funding split for a {device}?",
        "How much of a {device} does the Assistive Devices Program cover?",
    ),
    "lease": (
        "What does ADP pay towards a leased {device}?",
        "My patient will lease a {device} - what share does ADP fund?",
    ),
    "batteries": (
        "Does ADP pay for new batteries for a {device}?",
        "Are batteries for a {device} covered by ADP?",
    ),
    "repair": (
        "Will ADP cover repairs to my patient's {device}?",
        "The {device} needs a repair - does ADP pay?",
    ),
    "social_assistance": (
        "My patient on ODSP needs a {device} - what does ADP pay and what does she pay?",
        "Client receives Ontario Works and needs a {device}: funding split?",
        "A {device} for a child on ACSD - who pays the co-payment?",
    ),
    "grant": (
        "What grant does ADP give towards a {device}?",
        "ADP grant amount for a {device}?",
    ),
    "grant_social_assistance": (
        "What grant does ADP give towards a {device} for a client on ODSP?",
        "ADP grant amount for a {device}, patient on Ontario Works?",
    ),
}
# The device a category's own social-assistance rule names (comm_aids 710: speaking valves).
ITEM_DEVICES = {"voice restoration": "speaking valve"}


# Categories with two manuals: a rule is asked of a device of its own manual (the Ocular
# Prostheses manual's split is not asked of a prosthetic leg: the Limb Prostheses manual states none).
TWO_MANUALS = ("prosthesis", "maxillofacial")


def _device_for(row: dict[str, str], corpus: Corpus) -> str:
    for word, device in ITEM_DEVICES.items():
        if word in row["summary"].lower():
            return device
    device = _pick(row["rule_id"], DEVICES[row["adp_doc"]])
    manual = rule_manual(corpus, row) if row["adp_doc"] in TWO_MANUALS else None
    own = MANUAL_DEVICES.get(manual or "", (None, ()))[1]
    return device if not own or device in own else _pick(row["rule_id"], own)


@family("adp.funding_rule", tool=TOOL)
def funding_rules(corpus: Corpus) -> Iterator[Scenario]:
    """Every share rule asked for its category and scenario: its shares and its section cited."""
    for row in corpus.rows(FUNDING):
        scenario, doc, section = row["scenario"], row["adp_doc"], row["section_ref"]
        device = _device_for(row, corpus)
        question = _pick(row["rule_id"], SHARE_QUESTIONS[scenario]).format(device=device)
        args: Arguments = {"query": question}
        if doc == CORE:  # the core manual's own rule: asked as the category, not a device's
            args["device"] = {"category": CORE, "type": device}
        client, adp_share = _num(row["client_share_percent"]), _num(row["adp_share_percent"])
        expect: list[ExpectSpec] = [_cited(doc, section)]
        if row["covered"] == "0":
            expect.append(
                {"check": "matches", "path": "funding.repair_coverage", "pattern": "^Not covered"}
            )
        elif scenario.startswith("grant"):
            expect.append(
                {
                    "check": "contains",
                    "path": "context",
                    "value": f"${_num(row['max_contribution']):,.2f}",
                }
            )
        else:
            expect += [
                {
                    "check": "equals",
                    "path": "funding.client_share_percent",
                    "value": client,
                    "tolerance": 0.001,
                },
                {
                    "check": "equals",
                    "path": "funding.adp_contribution",
                    "value": adp_share,
                    "tolerance": 0.001,
                },
            ]
        yield derived_case(
            "adp.funding_rule",
            row["rule_id"],
            tool=TOOL,
            args=args,
            expect=expect,
            title=f"{row['rule_id']} {doc} {section} {scenario}: {question}",
            source=_source(
                corpus, FUNDING, f"rule_id {row['rule_id']} ({doc} {section}, {scenario})"
            ),
        )


# ------------------------------------------------------------------------------ exclusions
EXCLUSION_QUESTIONS: dict[str, tuple[str, ...]] = {
    "batteries": ("Does ADP pay for replacement batteries for a {device}?",),
    "repairs_maintenance": ("Will ADP cover repairs and maintenance of a {device}?",),
    "alternative_transport": (
        "Patient wants a {device} only for outdoor use as a car substitute - funded?",
        "Is a {device} used intermittently, instead of a car, funded by ADP?",
    ),
    "education_work_recreation_only": (
        "Can ADP fund a {device} needed only for school?",
        "Is a {device} used only for work funded by ADP?",
    ),
    "therapy_training_only": ("Is a {device} for therapy only funded by ADP?",),
    "backup_spare_duplicate": ("Will ADP fund a spare {device} as a back-up?",),
    "used_devices": ("Can ADP pay for a second-hand {device}?",),
    "bought_before_approval": (
        "My patient already bought a {device} before approval - can ADP reimburse it?",
    ),
    "unregistered_supplier": ("Is a {device} from a supplier not registered with ADP funded?",),
    "warranty_fees": ("Does ADP cover an extended warranty on a {device}?",),
    "cosmetic": ("Are cosmetic features of a {device} funded by ADP?",),
    "other_payer": ("My patient's {device} is covered by WSIB - does ADP fund it too?",),
    "general_not_funded": ("Which items for a {device} are listed as not funded by ADP?",),
}


@family("adp.exclusion", tool=TOOL)
def exclusions(corpus: Corpus) -> Iterator[Scenario]:
    """Every exclusion row asked for its category: its code flagged and its section listed."""
    for row in corpus.rows(EXCLUSIONS):
        doc, kind, section = row["adp_doc"], row["exclusion"], row["section_ref"]
        devices = (
            DEVICES[doc] if kind != "alternative_transport" else ("scooter", "power wheelchair")
        )
        device = _pick(row["exclusion_id"], devices)
        question = _pick(row["exclusion_id"], EXCLUSION_QUESTIONS[kind]).format(device=device)
        args: Arguments = {"query": question}
        if doc == CORE:
            args["device"] = {"category": CORE, "type": device}
        where = re.escape(loc(doc, section)) + r"(?=[,;)])"
        yield derived_case(
            "adp.exclusion",
            row["exclusion_id"],
            tool=TOOL,
            args=args,
            expect=[
                {
                    "check": "contains",
                    "path": "eligibility.other_criteria.flagged_exclusions",
                    "value": kind,
                },
                {
                    "check": "any_item",
                    "path": "exclusions",
                    "item": {"check": "matches", "path": "$", "pattern": where},
                },
            ],
            title=f"{row['exclusion_id']} {doc} {section} {kind}: {question}",
            source=_source(
                corpus, EXCLUSIONS, f"exclusion_id {row['exclusion_id']} ({doc} {section}, {kind})"
            ),
        )


# ------------------------------------------------------------------------------ social assistance
ASSISTANCE_QUESTIONS = (
    ("odsp", "My patient is on ODSP and needs a {device}. What will she pay?"),
    ("ontario_works", "Client receives Ontario Works; ADP funding for a {device}?"),
    ("acsd", "A child whose family gets ACSD needs a {device} - who pays the 25%?"),
    ("odsp", "{device} for a patient on the Ontario Disability Support Program - co-payment?"),
    ("ontario_works", "Patient on OW needs a {device}: what is the client's share?"),
    (
        "acsd",
        "{device} for a child funded through Assistance for Children with Severe Disabilities?",
    ),
)
NOT_ASSISTED = (
    "My patient is not on ODSP or Ontario Works and needs a {device}. What does she pay?",
    "What share of a {device} does the client pay herself?",
)


def _assistance_rule(corpus: Corpus) -> dict[str, str]:
    """The core manual's rule for OW/ODSP/ACSD recipients (310.00): client share 0%."""
    return next(
        r
        for r in corpus.rows(FUNDING)
        if r["adp_doc"] == CORE and r["scenario"] == "social_assistance"
    )


@family("adp.social_assistance", tool=TOOL)
def social_assistance(corpus: Corpus) -> Iterator[Scenario]:
    """Each category with a purchase rule, client on OW/ODSP/ACSD (varied phrasings, and the
    structured field): the co-payment paid by social assistance; others: by the client."""
    rule = _assistance_rule(corpus)
    copay = {
        r["adp_doc"]: r for r in corpus.rows(DESCRIPTIVE) if r["topic"] == "social_assistance_copay"
    }
    purchase: dict[str, dict[str, str]] = {}
    for r in corpus.rows(FUNDING):
        if r["scenario"] == "purchase":
            purchase.setdefault(r["adp_doc"], r)
    for doc, standard in purchase.items():
        for i, device in enumerate(DEVICES[doc]):
            for j, (program, template) in enumerate(ASSISTANCE_QUESTIONS):
                if (i + j) % 2:  # half of the device x phrasing grid keeps the family small
                    continue
                question = template.format(device=device)
                question = question[:1].upper() + question[1:]
                args: Arguments = {"query": question}
                if doc == CORE:
                    args["device"] = {"category": CORE, "type": device}
                expect: list[ExpectSpec] = [
                    {
                        "check": "equals",
                        "path": "funding.client_share_paid_by",
                        "value": "social_assistance",
                    },
                    {
                        "check": "equals",
                        "path": "funding.client_share_percent",
                        "value": _num(rule["client_share_percent"]),
                        "tolerance": 0.001,
                    },
                    _cited(CORE, rule["section_ref"]),
                ]
                rows = f"rule_id {rule['rule_id']} (core 310.00)"
                if doc in copay:
                    expect.append(_cited(doc, copay[doc]["section_ref"]))
                    rows += f"; {DESCRIPTIVE} {copay[doc]['rule_id']} ({doc} {copay[doc]['section_ref']})"
                yield derived_case(
                    "adp.social_assistance",
                    f"{doc}-{device}-{j}",
                    tool=TOOL,
                    args=args,
                    expect=expect,
                    title=f"{doc} {device}, client on {program}: co-payment not the client's",
                    source=_source(corpus, FUNDING, rows),
                    critical=True,
                )
            structured: Arguments = {
                "query": f"ADP funding for a {device}?",
                "social_assistance": "odsp",
            }
            if doc == CORE:
                structured["device"] = {"category": CORE, "type": device}
            yield derived_case(
                "adp.social_assistance",
                f"{doc}-{device}-field",
                tool=TOOL,
                args=structured,
                expect=[
                    {
                        "check": "equals",
                        "path": "funding.client_share_paid_by",
                        "value": "social_assistance",
                    },
                    _cited(CORE, rule["section_ref"]),
                ],
                title=f"{doc} {device}, social_assistance field 'odsp'",
                source=_source(corpus, FUNDING, f"rule_id {rule['rule_id']} (core 310.00)"),
            )
            question = _pick(f"{doc}{device}", NOT_ASSISTED).format(device=device)
            args = {"query": question}
            if doc == CORE:
                args["device"] = {"category": CORE, "type": device}
            yield derived_case(
                "adp.social_assistance",
                f"{doc}-{device}-client",
                tool=TOOL,
                args=args,
                expect=[
                    {"check": "equals", "path": "funding.client_share_paid_by", "value": "client"},
                    {
                        "check": "equals",
                        "path": "funding.client_share_percent",
                        "value": _num(standard["client_share_percent"]),
                        "tolerance": 0.001,
                    },
                ],
                title=f"{doc} {device}, client not on social assistance: the client pays",
                source=_source(
                    corpus, FUNDING, f"purchase rules of {doc} (e.g. rule_id {standard['rule_id']})"
                ),
            )
