"""ADP cases on the CEP income check: a device question that states only a price asks for no CEP
check, and one that states the client's income is judged against the household's threshold.

Expected thresholds come from the corpus (adp_cep.yaml), never from adp.get."""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from evals.derive.case import derived_case
from evals.derive.corpus import Corpus
from evals.derive.families.adp import DEVICES, TOOL
from evals.derive.registry import family
from evals.run.scenario import Scenario

CEP = "adp_cep.yaml"


def _cep_source(what: str) -> str:
    return (
        f"corpus {CEP} {what}: written by hand from the project's Dr. OFF tools specification "
        "(adp.get CEP routing); the ADP manuals state no income thresholds"
    )


PRICE_QUESTIONS = (
    "Is a ${price:,} {device} covered by ADP?",
    "The {device} costs ${price:,} - what does ADP pay?",
    "Quote for a {device} is ${price:,}; funding?",
    "My patient needs a {device} priced at ${price:,}.",
)
INCOME_QUESTIONS = (
    "A ${price:,} {device} for a patient with an income of ${income:,}{household}?",
    "Patient earns ${income:,} a year{household} and needs a {device} that costs ${price:,}.",
    "{device} (${price:,}) for a client who makes ${income:,} a year{household}.",
    "{device} for a patient{household}, annual income ${income:,}; price ${price:,}.",
)
PRICES = (900, 2400, 3150, 8700, 24500)
INCOMES = (
    ("single", 19000),
    ("single", 28000),
    ("single", 31500),
    ("family", 39000),
    ("family", 45000),
    ("family", 26000),
)
HOUSEHOLD_WORDS = {"single": " (lives alone)", "family": " (married, two children)"}


def _thresholds(corpus: Corpus) -> dict[str, float]:
    data = yaml.safe_load((corpus.root / CEP).read_text(encoding="utf-8"))
    return {k: float(v) for k, v in data["thresholds"].items()}


@family("adp.price_not_income", tool=TOOL)
def price_not_income(corpus: Corpus) -> Iterator[Scenario]:
    """A device question with a price only: no CEP check; with a stated income: CEP on it."""
    thresholds = _thresholds(corpus)
    for doc, devices in DEVICES.items():
        for i, device in enumerate(devices):
            price = PRICES[(i + len(doc)) % len(PRICES)]
            template = PRICE_QUESTIONS[(i + len(doc)) % len(PRICE_QUESTIONS)]
            question = template.format(device=device, price=price)
            yield derived_case(
                "adp.price_not_income",
                f"{doc}-{device}-price",
                tool=TOOL,
                args={"query": question[:1].upper() + question[1:]},
                expect=[{"check": "equals", "path": "cep", "value": None}],
                title=f"A ${price:,} price is not income: no CEP check ({device})",
                source=f"the question states a price only; {_cep_source('thresholds')}",
                critical=True,
            )
            household, income = INCOMES[(i + len(doc)) % len(INCOMES)]
            template = INCOME_QUESTIONS[(i * 3 + len(doc)) % len(INCOME_QUESTIONS)]
            question = template.format(
                device=device, price=price, income=income, household=HOUSEHOLD_WORDS[household]
            )
            threshold = thresholds[household]
            yield derived_case(
                "adp.price_not_income",
                f"{doc}-{device}-income",
                tool=TOOL,
                args={"query": question[:1].upper() + question[1:]},
                expect=[
                    {
                        "check": "equals",
                        "path": "cep.income_threshold",
                        "value": threshold,
                        "tolerance": 0.001,
                    },
                    {"check": "equals", "path": "cep.eligible", "value": income <= threshold},
                ],
                title=f"{household} income ${income:,} vs ${threshold:,.0f}, price ${price:,} ignored",
                source=_cep_source(f"thresholds.{household} = {threshold:,.0f}"),
            )
