"""Each ADP device manual's own funding terms, and when an answer's split is the core manual's
general rule instead.

The core manual says funding "is dependent on the Device category" (305.00: fixed price, maximum
contribution, grants, hybrid contribution, transfer payment agency) and gives 75 % / 25 % only
"unless noted otherwise" (305.01). Every manual of the ADP source
(../shared/data/adp/adp_extraction.json, raw text, read section by section for sentences on
paying, prices, costs, contributions, grants, rentals) was checked for terms of its own:

  manual (adp_doc)                        its own funding terms
  Mobility Devices (mobility)             110.01, 705: client portion 25 % (funding rules F001, F004)
  Communication Aids (comm_aids)          115.01 lease, 115.03 purchase, 705: 75 % / 25 %; 710:
                                          speaking valves 100 % for OW/ODSP/ACSD clients
  Ocular Prostheses (prosthesis)          115.01: client portion 25 % (F021)
  Maxillofacial Extraoral (maxillofacial) 115.01: client portion 25 % (F025)
  Orthotic Devices (core_manual)          115.01: client portion 25 % (F032)
  Grants (grants)                         230.01 breast prostheses: $195.00 full, $105.00 partial;
                                          230.02 OW/ODSP/ACSD clients: $260.00, $140.00
  Real-Time CGM (glucose_monitoring)      no split; 200.03 supplies up to the Maximum Allowable
                                          Quantity; 200.04 one receiver at no cost to the client
  Respiratory Equipment (respiratory)     no split; 225.01 a positive airway pressure system has a
                                          funding amount of its own (the manual's 610, which the
                                          extract does not hold); 315.01 monitor rental, 315.02
                                          monitor purchase
  Insulin Pump and Supplies               no split; 200.01 pumps and their supplies are funded
  Hearing Devices, Visual Aids, Limb      none: only what is not funded (repairs, batteries,
  Prostheses, Maxillofacial Intraoral,    listed exclusions)
  Pressure Modification Devices

A manual with no split of its own is answered with the general rule, said to be one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reference_server.retrieval.adp_manuals import CORE, FundingRule, Section
from reference_server.tools.adp.language import Parsed

GENERAL_MANUAL = "Policies and Procedures Manual for the Assistive Devices Program"
GENERAL_RULE = "305.01"  # "Unless noted otherwise, the Program pays up to 75% ..."
FUNDING_MODELS = "305.00"  # "Program funding is dependent on the Device category ..."

# The manual of each category that has one; the categories with two are told apart below.
MANUALS = {
    "mobility": "Mobility Devices Policy and Administration Manual",
    "comm_aids": "Communication Aids Policy and Administration Manual",
    "hearing_devices": "Hearing Devices Policy and Administration Manual",
    "visual_aids": "Visual Aids Policy and Administration Manual",
    "respiratory": "Respiratory Equipment Policy and Administration Manual",
    "insulin_pump": "Insulin Pump and Supplies Policy and Administration Manual",
    "glucose_monitoring": (
        "Real-Time Continuous Glucose Monitoring Systems Policy and Administration Manual"
    ),
    "grants": "Grants Policy and Administration Manual",
}
OCULAR = "Ocular Prostheses Policy and Administration Manual"
LIMB = "Limb Prostheses Policy and Administration Manual"
EXTRAORAL = "Maxillofacial Extraoral Prostheses Policy and Administration Manual"
INTRAORAL = "Maxillofacial Intraoral Prostheses Policy and Administration Manual"
ORTHOTIC = "Orthotic Devices Policy and Administration Manual"
PRESSURE = "Pressure Modification Devices Policy and Administration Manual"
_INTRAORAL = re.compile(r"intra-?oral|obturator|palat", re.I)
_PRESSURE = re.compile(r"compression|pressure (?:garment|orthos)|burn|scar", re.I)


@dataclass(frozen=True)
class Term:
    """A funding term a manual states, other than a split: its section and our wording."""

    section_id: str  # the manual section's passage id (source.passages resolves it)
    text: str


# Terms other than a split (the splits are funding rules, adp_funding_rule.csv).
OWN_TERMS: dict[str, tuple[Term, ...]] = {
    MANUALS["glucose_monitoring"]: (
        Term(
            "adp:glucose_monitoring:200.03",
            "ADP covers the supplies listed in the Product Manual up to the Maximum Allowable "
            "Quantity",
        ),
        Term(
            "adp:glucose_monitoring:200.04",
            "a client without a compatible mobile device gets one receiver from the vendor at "
            "no cost to the client",
        ),
    ),
    MANUALS["respiratory"]: (
        Term(
            "adp:respiratory:225.01",
            "a positive airway pressure system (CPAP/APAP/BPAP) is funded by an amount of its "
            "own (the manual's section 610, not in the indexed extract), which upgraded masks "
            "and headgear are not part of",
        ),
        Term(
            "adp:respiratory:315.01",
            "an apnea/cardiorespiratory monitor is funded as a rental",
        ),
        Term(
            "adp:respiratory:315.02",
            "or bought when an infant with a long-term tracheostomy needs it for 9 months or "
            "longer",
        ),
    ),
    MANUALS["insulin_pump"]: (
        Term(
            "adp:insulin_pump:200.01",
            "ADP funds the insulin pumps listed in the Product Manual and the supplies for "
            "their use",
        ),
    ),
    MANUALS["grants"]: (
        Term(
            "adp:grants:230.01",
            "a breast prosthesis grant is $195.00 per full and $105.00 per partial prosthesis",
        ),
        Term(
            "adp:grants:230.02",
            "clients on Ontario Works, ODSP or ACSD receive $260.00 per full and $140.00 per "
            "partial prosthesis",
        ),
    ),
}


def device_manual(p: Parsed) -> str | None:
    """The manual of the asked device (None: no device, or the core manual asked as such)."""
    if p.category == "prosthesis":
        return OCULAR if p.device_type == "ocular_prosthesis" else LIMB
    if p.category == "maxillofacial":
        return INTRAORAL if _INTRAORAL.search(p.text) else EXTRAORAL
    if p.category == CORE:
        if p.device_type is None:
            return None
        return PRESSURE if _PRESSURE.search(p.text) else ORTHOTIC
    return MANUALS.get(p.category or "")


def short(manual: str) -> str:
    """'Hearing Devices' for 'Hearing Devices Policy and Administration Manual'."""
    return manual.removesuffix(" Policy and Administration Manual")


@dataclass(frozen=True)
class Basis:
    """Where an answer's split comes from: the device's own manual, or the general rule."""

    manual: str | None  # the device's manual (None: not known)
    general_rule: bool  # the device's manual states no split: the answer's is the general rule
    rule: FundingRule | None = None  # the device manual's own split, when it states one
    own_terms: tuple[tuple[Term, Section | None], ...] = ()
    general: tuple[Section, ...] = ()  # 305.00 and 305.01, when the general rule is used


def basis_of(
    p: Parsed, rules: Sequence[tuple[FundingRule, str]], sections: dict[str, Section]
) -> Basis:
    """Whether the device's manual states the split the answer gives (one of `rules`, each with
    the manual its section belongs to), and the manual's other terms; `sections` are the manual
    sections by passage id."""
    manual = device_manual(p)
    if manual is None:
        return Basis(None, False)
    own = tuple((t, sections.get(t.section_id)) for t in OWN_TERMS.get(manual, ()))
    own_rule = next((r for r, m in rules if manual in m), None)
    general = bool(rules) and own_rule is None
    cited = (
        tuple(
            s
            for ref in (FUNDING_MODELS, GENERAL_RULE)
            if (s := sections.get(f"adp:{CORE}:{ref}")) is not None
        )
        if general
        else ()
    )
    return Basis(manual, general, own_rule, own, cited)


def general_rule_sentence(device: str, basis: Basis, share: tuple[float, float] | None) -> str:
    """The answer when the device's manual states no split: the general rule, said to be one,
    and the other funding models the core manual names."""
    adp, client = share if share else (75.0, 25.0)
    return (
        f"The {short(basis.manual or 'device')} manual states no funding split of its own, so "
        f"the general rule applies: unless noted otherwise, ADP pays up to {adp:g}% of the ADP "
        f"approved price and the client at least {client:g}% (adp:{CORE}:Section {GENERAL_RULE}). "
        f"Funding depends on the device category (adp:{CORE}:Section {FUNDING_MODELS}): fixed "
        "price, maximum contribution, grants, hybrid contribution or transfer payment agency; "
        f"the Product Manual's listing for the {device} says which applies."
    )


def own_terms_sentence(basis: Basis) -> str | None:
    """The device manual's own terms other than a split, each with its section."""
    if not basis.own_terms or basis.manual is None:
        return None
    parts = [
        f"{t.text} (adp:{t.section_id.split(':')[1]}:Section {_ref(t)})" for t, _ in basis.own_terms
    ]
    return f"The {short(basis.manual)} manual: " + "; ".join(parts) + "."


def _ref(t: Term) -> str:
    return t.section_id.rsplit(":", 1)[1].split("-")[0]
