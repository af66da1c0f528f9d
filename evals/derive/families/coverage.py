"""coverage.answer cases composed from the facts the other families use: a drug at a strength for
patients who are or are not ODB-eligible, a fee code to bill, a device to fund (with and without
social assistance), each in a clinician's words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NotRequired, TypedDict

import yaml

from evals.derive.case import ExpectSpec, derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.odb import (
    _choice,
    _grouped,
    spoken_strength,
)
from evals.derive.registry import family
from evals.run.scenario import Scenario
from ocm_common.json_types import Arguments, JsonObject

TOOL = "coverage.answer"
POLICY = "odb_policy.yaml"
FEES = "ohip_fee_schedule.csv"
FUNDING = "adp_funding_rule.csv"
COMPONENT_COLUMNS = ("h_fee", "p_fee", "t_fee", "asst_fee", "surg_fee", "anae_fee")


class Patient(TypedDict):
    """A patient variation, as coverage.answer's ``patient`` argument states it."""

    age: int
    setting: NotRequired[str]  # community | ltc
    plan: NotRequired[str]  # none | private: the patient's private drug plan


@dataclass(frozen=True)
class Eligibility:
    """ODB eligibility as the policy file states it (structured block of its program section)."""

    min_age: int
    ohip_plus_below_age: int
    settings: tuple[str, ...]

    def eligible(self, patient: Patient) -> bool:
        if patient.get("setting") in self.settings:
            return True
        age = patient["age"]
        if age >= self.min_age:
            return True
        return age < self.ohip_plus_below_age and patient.get("plan") == "none"


def eligibility(corpus: Corpus) -> Eligibility:
    doc = yaml.safe_load((corpus.root / POLICY).read_text(encoding="utf-8"))
    for section in doc.get("chunks") or []:
        rules = section.get("eligibility") if isinstance(section, dict) else None
        if rules:
            return Eligibility(
                int(rules["min_age"]), int(rules["ohip_plus_below_age"]), tuple(rules["settings"])
            )
    raise ValueError(f"{POLICY}: no eligibility block")


def stated(patient: Patient) -> JsonObject:
    """The patient as the ``patient`` argument sends it (its keys in the same order)."""
    argument: JsonObject = {"age": patient["age"]}
    if "setting" in patient:
        argument["setting"] = patient["setting"]
    if "plan" in patient:
        argument["plan"] = patient["plan"]
    return argument


def patients(policy: Eligibility) -> list[tuple[Patient, str]]:
    """Patient variations and how each is said in a question."""
    senior = policy.min_age + 7
    young = policy.ohip_plus_below_age - 6
    middle = (policy.min_age + policy.ohip_plus_below_age) // 2
    return [
        ({"age": senior, "setting": "community"}, f"my {senior}-year-old patient"),
        ({"age": middle, "setting": "ltc"}, f"my {middle}-year-old patient in long-term care"),
        ({"age": young, "plan": "none"}, f"a {young}-year-old with no private drug plan"),
        ({"age": young, "plan": "private"}, f"a {young}-year-old who has a private drug plan"),
        ({"age": middle, "plan": "none"}, f"my {middle}-year-old patient with no drug plan"),
    ]


@family("coverage.drug", tool=TOOL)
def drug_questions(corpus: Corpus) -> Iterator[Scenario]:
    """Every brand at every strength, for one patient variation each (age, setting, plan stated
    in the question or given as the patient argument): the answer names that product (by DIN in
    its summary; another product only with the decision needs_more_info) and is 'covered'
    exactly when the product is a benefit and the patient ODB-eligible."""
    policy = eligibility(corpus)
    variations = patients(policy)
    for (brand_key, strength), group in sorted(_grouped(corpus, "brand").items()):
        first = group[0]
        key = f"{brand_key}-{strength}"
        pick = _choice(key, 2 * len(variations))
        patient, words = variations[pick % len(variations)]
        spoken = spoken_strength(first.strength, pick)
        in_text = pick < len(variations)
        question = (
            f"Is {first.brand} {spoken} covered by ODB for {words}?"
            if in_text
            else f"Is {first.brand} {spoken} covered by ODB for this patient?"
        )
        args: Arguments = {"question": question}
        if not in_text:
            args["patient"] = stated(patient)
        benefits = {p.covered for p in group}
        dins = sorted(p.din for p in group)
        expect: list[ExpectSpec] = [
            {
                "check": "asked_product",
                "path": "summary",
                "pattern": r"DIN (\d{8})\b",
                "value": dins,
                "field": "decision",
            }
        ]
        eligible = policy.eligible(patient)
        if benefits == {True} and eligible:
            expect.append({"check": "equals", "path": "decision", "value": "covered"})
        elif benefits == {False} or not eligible:
            expect.append({"check": "not_equals", "path": "decision", "value": "covered"})
        yield derived_case(
            "coverage.drug",
            key,
            tool=TOOL,
            args=args,
            expect=expect,
            title=f"{question} -> {first.brand} {first.strength}",
            source=(
                f"corpus odb_drugs.csv brand_name {first.brand!r} strength {first.strength!r} "
                f"(DINs {', '.join(dins[:6])}; is_benefit from the ODB extract's notABenefit) and "
                f"{POLICY} eligibility (65+, under 25 without a private plan, long-term care; "
                "verified from the public ODB pages it cites)"
            ),
        )


def _money(value: float) -> str:
    return re.escape(f"${value:,.2f}")


@family("coverage.billing", tool=TOOL)
def billing_questions(corpus: Corpus) -> Iterator[Scenario]:
    """Every fee code with one flat fee and no separate components: asked whether it can be
    billed, the answer is billable and states the code and its fee."""
    for row in corpus.rows(FEES):
        if row["fee_kind"] != "flat" or not row["fee"] or any(row[c] for c in COMPONENT_COLUMNS):
            continue
        if row["n_fee_variants"] not in ("", "1"):
            continue
        fee = float(row["fee"])
        if fee <= 0:
            continue
        code = row["code"]
        question = f"Can I bill {code} to OHIP, and what does it pay?"
        yield derived_case(
            "coverage.billing",
            code,
            tool=TOOL,
            args={"question": question},
            expect=[
                {"check": "equals", "path": "decision", "value": "billable"},
                {"check": "matches", "path": "summary", "pattern": f"{code}\\b.*{_money(fee)}"},
            ],
            title=f"{code} is billable at ${fee:,.2f}",
            source=(
                f"corpus {FEES} code {code} fee {row['fee']} (Schedule of Benefits extraction, "
                f"section {row['section']}, page {row['page_ref']})"
            ),
        )


# Everyday names for a device of each ADP category (the category is the fact; the words are ours).
DEVICES = {
    "mobility": "walker",
    "comm_aids": "speech-generating communication device",
    "hearing_devices": "hearing aid",
    "visual_aids": "video magnifier",
    "respiratory": "CPAP machine",
    "insulin_pump": "insulin pump",
    "glucose_monitoring": "continuous glucose monitor",
    "prosthesis": "prosthetic leg",
    "maxillofacial": "facial prosthesis",
}
ASSISTANCE = ("Ontario Works", "ODSP", "ACSD")


def _purchase_rules(corpus: Corpus) -> dict[str, dict[str, str]]:
    rules: dict[str, dict[str, str]] = {}
    for row in corpus.rows(FUNDING):
        if row["scenario"] == "purchase" and row["device_category"] in DEVICES:
            rules.setdefault(row["device_category"], row)
    return rules


@family("coverage.device", tool=TOOL)
def device_questions(corpus: Corpus) -> Iterator[Scenario]:
    """A device of each ADP category with a purchase rule: eligible, with the ADP share the rule
    states; and for a client on social assistance, the answer says so rather than only
    'client 25 %'."""
    for category, rule in sorted(_purchase_rules(corpus).items()):
        device = DEVICES[category]
        adp_share = int(float(rule["adp_share_percent"]))
        source = (
            f"corpus {FUNDING} {rule['rule_id']} ({rule['policy_uid']}): purchase, ADP "
            f"{rule['adp_share_percent']}%, client {rule['client_share_percent']}% (ADP manuals)"
        )
        yield derived_case(
            "coverage.device",
            category,
            tool=TOOL,
            args={"question": f"My patient needs a {device}. Does ADP help pay for it?"},
            expect=[
                {"check": "equals", "path": "decision", "value": "eligible"},
                {"check": "matches", "path": "summary", "pattern": f"\\b{adp_share}\\s?%"},
            ],
            title=f"ADP funds a {device} ({category}) at {adp_share} %",
            source=source,
        )
        program = ASSISTANCE[_choice(category, len(ASSISTANCE))]
        yield derived_case(
            "coverage.device",
            f"{category}-social-assistance",
            tool=TOOL,
            args={
                "question": f"My patient on {program} needs a {device}. What will they pay "
                "under ADP?"
            },
            expect=[
                {"check": "equals", "path": "decision", "value": "eligible"},
                {
                    "check": "matches",
                    "path": "summary",
                    "pattern": "(?i)social assistance|Ontario Works|ODSP|ACSD",
                },
            ],
            title=f"A client on {program}: the answer says who pays the co-payment",
            source=source
            + "; the social_assistance rows of the same file (the co-payment of OW, ODSP and "
            "ACSD clients is paid by their program)",
        )
