"""ADP cases on every descriptive (who-does-what) rule: each rule's topic asked in two phrasings,
naming a device of its manual, with its section expected among the citations and policy rules.

Expected sections come from the corpus rows (adp_descriptive_rule.csv), never from adp.get."""

from __future__ import annotations

from collections.abc import Iterator

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.adp import DESCRIPTIVE, TOOL, _cited, _source, loc
from evals.derive.registry import family
from evals.run.scenario import Scenario

TOPIC_QUESTIONS: dict[str, tuple[str, ...]] = {
    "pool_supply": (
        "Can my patient get a recycled {device} at a discount through ADP?",
        "Does ADP's equipment pool offer new or recycled {device}s at reduced prices?",
    ),
    "pool_support": (
        "Does the equipment pool give loaner equipment or emergency service for a {device}?",
        "Is technical support for a CEP {device} free of charge?",
    ),
    "pool_operator": (
        "Who operates the Central Equipment Pool for a {device}?",
        "Which company runs the equipment pool that supplies a {device}?",
    ),
    "pool_application": (
        "Where does a patient needing a {device} with power tilt apply?",
        "How does my patient apply for a {device} with tilt and recline?",
    ),
    "pool_service_only": (
        "Who may service or modify a {device} that belongs to the CEP?",
        "Can any vendor do modifications on a CEP {device}?",
    ),
    "device_replacement": (
        "When can ADP replace a {device} damaged beyond repair?",
        "The {device} keeps breaking and repairs add up - can it be replaced?",
    ),
    "social_assistance_copay": (
        "Who pays the co-payment for a {device} when the client is on ODSP?",
        "My patient receives Ontario Works - does she pay the 25% for a {device}?",
    ),
    "service_agreements": (
        "Must a {device} vendor that does not repair on its premises file service agreements?",
        "What must a {device} vendor without in-house repairs give ADP?",
    ),
    "lease_fee_payment": (
        "Does the client pay an annual lease fee for a leased {device}?",
        "What does a client pay to lease a {device}?",
    ),
    "repair_quotes": (
        "Who gets repair quotes for a {device}?",
        "Who obtains the quotation when a {device} needs repair?",
    ),
    "valve_no_approved_price": (
        "Is there an ADP approved price for a {device}?",
        "How is a {device} priced when ADP sets no approved price?",
    ),
    "vendor_after_sale": (
        "What after-sale service must a {device} vendor provide?",
        "Does the vendor have to honour the manufacturer's warranty on a {device}?",
    ),
    "lease_order": (
        "Who orders a leased {device} from the equipment pool?",
        "Does the AAC clinic order the {device} from the CEP?",
    ),
    "lease_order_fill": (
        "Who fills the AAC clinic's orders for a leased {device}?",
        "Where do AAC clinics send orders for a {device} to lease?",
    ),
    "pool_lease": (
        "Where is a {device} leased from?",
        "Can my patient lease a {device} instead of buying it?",
    ),
    "lease_writing_aid": (
        "Should a {device} be leased or bought?",
        "When is a {device} leased rather than purchased?",
    ),
    "lease_preliminary": (
        "What is the first lease a client gets for a {device} from the CEP?",
        "How does leasing a {device} from the CEP start?",
    ),
    "lease_reapplication": (
        "A leased {device} cost $650 - does the authorizer need a new application?",
        "Does a {device} that cost $500 or more need a new application form to the CEP?",
    ),
    "lease_to_purchase": (
        "Can a leased {device} be converted to a purchase?",
        "Can my patient buy the {device} she has been leasing?",
    ),
    "lease_fee_basis": (
        "How are the equipment pool's fees for a {device} calculated?",
        "What are CEP fees for a {device} based on?",
    ),
    "funding_period": (
        "What is the designated funding period for a {device}?",
        "How long should a {device} stay in good repair?",
    ),
    "invoice_over_approved_price": (
        "Will ADP pay an invoice for a {device} that costs more than the approved price?",
        "The {device} price exceeds the approved price - does ADP still pay the invoice?",
    ),
    "supplier_choice": (
        "Can my patient buy a {device} from any Ontario supplier?",
        "Where can a client buy a {device}?",
    ),
    "authorizer_qualifications": (
        "Who can be an authorizer for a {device}?",
        "Which professionals are ADP authorizers for a {device}?",
    ),
    "vendor_staffing": (
        "What staff must a vendor of a {device} employ?",
        "What are the staffing requirements for a {device} vendor?",
    ),
}
# The device a topic's question names in each manual.
TOPIC_DEVICES: dict[str, dict[str, str]] = {
    "mobility": {"default": "power wheelchair", "device_replacement": "walker"},
    "comm_aids": {
        "default": "communication aid",
        "valve_no_approved_price": "speaking valve",
        "lease_writing_aid": "writing aid",
        "supplier_choice": "computer-based communication aid",
    },
}


@family("adp.descriptive_rule", tool=TOOL)
def descriptive_rules(corpus: Corpus) -> Iterator[Scenario]:
    """Every descriptive rule asked about its topic (two phrasings): its section cited."""
    for row in corpus.rows(DESCRIPTIVE):
        doc, topic = row["adp_doc"], row["topic"]
        words = TOPIC_DEVICES[doc]
        device = words.get(topic, words["default"])
        for n, template in enumerate(TOPIC_QUESTIONS[topic]):
            yield _descriptive_case(corpus, row, template.format(device=device), n)


def _descriptive_case(corpus: Corpus, row: dict[str, str], question: str, n: int) -> Scenario:
    doc, topic, section = row["adp_doc"], row["topic"], row["section_ref"]
    question = question[:1].upper() + question[1:]
    return derived_case(
        "adp.descriptive_rule",
        f"{row['rule_id']}-{n}",
        tool=TOOL,
        args={"query": question},
        expect=[
            _cited(doc, section),
            {
                "check": "any_item",
                "path": "policy_rules",
                "item": {"check": "contains", "path": "$", "value": loc(doc, section)},
            },
        ],
        title=f"{row['rule_id']} {doc} {section} {topic}: {question}",
        source=_source(
            corpus,
            DESCRIPTIVE,
            f"rule_id {row['rule_id']} ({doc} {section}, {topic}; official rule_id "
            f"{row['source_rule']})",
        ),
    )
