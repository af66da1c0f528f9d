"""adp.get's one-line answer: what it leads with (a who-does-what rule, an unknown device, a use
ADP does not fund, or the device's funding) and the sentences that say the split, the manual's
own terms, the CEP check and the fast-track note, from the selected rules (`select`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from reference_server.tools.adp.language import Parsed
from reference_server.tools.adp.merge import Cep, device_label, loc
from reference_server.tools.adp.select import Selection
from reference_server.tools.adp.terms import Basis, general_rule_sentence, own_terms_sentence

# What adp.get's one-line answer leads with: a who-does-what rule, the device could not be told,
# a use ADP does not fund (car substitute), or the device's funding. coverage.answer decides
# eligibility and its follow-up questions from it.
Lead = Literal["policy_rules", "unknown_device", "not_eligible", "device"]


@dataclass(frozen=True)
class Summary:
    text: str
    lead: Lead


def summary(
    p: Parsed,
    sel: Selection,
    cep: Cep | None,
    fast_track: str | None,
    basis: Basis | None = None,
) -> Summary:
    """The one-line answer, and what it leads with: a split the device's manual does not state
    is said to be the general rule, and the manual's own terms follow."""
    general = basis is not None and basis.general_rule
    share_rules, flagged, not_covered = sel.share_rules, sel.flagged, sel.repair_rules
    device = device_label(p)
    rules = [f"{r.summary} ({loc(r)})" for r in sel.descriptive if r.topic in p.topics]
    if p.category is None and rules:
        return Summary(" ".join(rules), "policy_rules")
    if p.category is None:
        return Summary(
            "Could not tell which device is meant; name it (e.g. walker, power wheelchair, CPAP, "
            "hearing aid) or give device.category.",
            "unknown_device",
        )
    parts: list[str] = []
    if "alternative_transport" in flagged:
        parts.append(
            f"Not eligible: ADP does not fund a {device} used as a car substitute or only "
            "intermittently/outdoors; it must meet a basic daily mobility need."
        )
    uncovered = [k for k in ("batteries", "repairs_maintenance") if k in flagged]
    if uncovered:
        what = " and ".join("batteries" if k == "batteries" else "repairs" for k in uncovered)
        where = loc(not_covered[0]) if not_covered else "the ADP manual"
        parts.append(f"ADP does not cover {what} for a {device}; the client pays ({where}).")
    others = [k for k in flagged if k not in ("alternative_transport", *uncovered)]
    if others:
        parts.append("Flagged exclusions: " + ", ".join(k.replace("_", " ") for k in others) + ".")
    if share_rules and "alternative_transport" not in flagged:
        top = share_rules[0]
        if sel.assistance_rules:
            parts.append(assistance_sentence(p, sel, device, general))
        elif general and basis is not None and top.client_share_percent is not None:
            share = (top.adp_share_percent or 75.0, top.client_share_percent)
            parts.append(general_rule_sentence(device, basis, share))
        elif top.client_share_percent is not None:
            rule = basis.rule if basis is not None and basis.rule is not None else top
            parts.append(
                f"ADP funds a {device}: ADP pays {rule.adp_share_percent:g}% of the approved price "
                f"and the client {rule.client_share_percent:g}% ({loc(rule)})."
            )
        elif top.max_contribution:
            parts.append(f"ADP pays a grant towards a {device} ({loc(top)}).")
    terms = (
        own_terms_sentence(basis)
        if basis is not None and "alternative_transport" not in flagged
        else None
    )
    if terms:
        parts.append(terms)
    if cep is not None:
        if cep.eligible:
            parts.append(
                f"Income ${p.income:,.0f} is at or below the ${cep.income_threshold:,.0f} "
                f"{p.household} CEP threshold: CEP-eligible, client share 0%."
            )
        else:
            parts.append(
                f"Income ${p.income:,.0f} is above the ${cep.income_threshold:,.0f} {p.household} "
                f"CEP threshold: standard client share {cep.client_share:g}%."
            )
    if fast_track is not None:
        parts.append(fast_track)
    # A who-does-what question is answered first; the device's split follows.
    lead: Lead = (
        "policy_rules"
        if rules
        else "not_eligible"
        if "alternative_transport" in flagged
        else "device"
    )
    return Summary(" ".join(rules + parts) or f"No ADP funding rule found for a {device}.", lead)


PROGRAM_NAMES = {
    "ontario_works": "Ontario Works",
    "odsp": "ODSP",
    "acsd": "ACSD",
    "social_assistance": "social assistance",
}


def assistance_sentence(p: Parsed, sel: Selection, device: str, general: bool = False) -> str:
    """The split for a client on OW/ODSP/ACSD: the standard rule (said to be the general rule
    when the device's manual states none), and why the client pays nothing."""
    rule, top = sel.assistance_rules[0], sel.share_rules[0]
    program = PROGRAM_NAMES.get(p.assistance_program or "", "social assistance")
    copay = [
        loc(r)
        for r in sel.descriptive
        if r.topic == "social_assistance_copay" and loc(r) != loc(rule)
    ]
    usual = (
        "Its manual states no split of its own; under the general rule (unless noted otherwise, "
        "adp:core_manual:Section 305.01) the split"
        if general
        else "The usual split"
    )
    standard = (
        f"{usual} for a {device} is ADP {top.adp_share_percent:g}% / client "
        f"{top.client_share_percent:g}% ({loc(top)}); "
        if top.client_share_percent is not None
        else ""
    )
    return (
        f"{standard}for a client on {program} the co-payment is not the client's: program "
        f"funding for Ontario Works, ODSP and ACSD recipients is {rule.adp_share_percent:g}% "
        f"and the client's own share {rule.client_share_percent:g}% ({loc(rule)}"
        + (f"; co-payment section {', '.join(copay)}" if copay else "")
        + ")."
    )
