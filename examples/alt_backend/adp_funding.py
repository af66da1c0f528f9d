"""Who pays what for an ADP device: the ADP and client shares a category's funding rules
give (or the program-wide default), a grant's fixed amounts, and the full funding of clients
on social assistance.
"""

from __future__ import annotations

import re

from examples.alt_backend.adp import Manuals, Section
from examples.alt_backend.payloads import Funding
from examples.alt_backend.text import terms


def funding_terms(
    manuals: Manuals, category: str, label: str, on_assistance: bool
) -> tuple[Funding | None, list[Section], str]:
    """For a device of ``category``: its funding fields (None for a grant whose sections list
    no amount), the sections they come from, and the funding in words."""
    secs = manuals.by_category[category]
    device_words = [w for w in terms(label) if len(w) > 3]
    used: list[Section] = []
    funding: Funding = {
        "client_share_percent": None,
        "adp_contribution": None,
        "max_contribution": None,
        "repair_coverage": None,
        "client_share_paid_by": None,
    }
    if category == "grants":
        best = manuals.search(label, "grants", k=6)
        for sec in best:
            amounts = [
                float(a.replace(",", "")) for a in re.findall(r"\$(\d[\d,]*\.\d{2})", sec.body())
            ]
            if amounts:
                funding["max_contribution"] = max(amounts)
                used.append(sec)
                listed = ", ".join(f"${a:,.2f}" for a in dict.fromkeys(amounts))
                return (
                    funding,
                    used,
                    f"ADP gives a fixed grant; amounts listed in section {sec.section_id}: {listed}",
                )
        return None, used, ""

    def rule_share(*patterns: str) -> tuple[float, Section] | None:
        found: list[tuple[int, int, float, Section]] = []
        for sec in secs:
            if sec.section_id.startswith("710"):
                continue  # the social-assistance co-payment section
            for r in sec.rules:
                for pattern in patterns:
                    m = re.search(pattern, r["details"], re.I)
                    if m:
                        low = r["details"].lower()
                        specific = sum(1 for w in device_words if w[:5] in low)
                        found.append((specific, len(found), float(m.group(1)), sec))
        if not found:
            return None
        found.sort(key=lambda f: (-f[0], f[1]))
        return found[0][2], found[0][3]

    adp = rule_share(r"(?:will pay|pays) (\d+) percent")
    client = rule_share(
        r"client portion \((\d+) percent", r"collects from the applicant,? (\d+) percent"
    )
    if adp is not None:
        funding["adp_contribution"] = adp[0]
        used.append(adp[1])
    if client is not None:
        funding["client_share_percent"] = client[0]
        used.append(client[1])
    if adp is None or client is None:
        default = manuals.policies("305.01")
        if default is not None and re.search(r"75%", default.body()):
            if adp is None:
                funding["adp_contribution"] = 75.0
            if client is None:
                funding["client_share_percent"] = 100.0 - float(funding["adp_contribution"] or 75.0)
            used.append(default)
    if funding["client_share_percent"]:
        funding["client_share_paid_by"] = "client"
    usual = (
        f"ADP pays {funding['adp_contribution']:g}% and the client {funding['client_share_percent']:g}%"
        if funding["adp_contribution"] is not None and funding["client_share_percent"] is not None
        else ""
    )
    if usual and adp is None and client is None:
        usual += " (the program-wide default: this manual sets no share of its own)"
    if not on_assistance:
        return funding, used, usual
    # Social-assistance recipients: the program funds 100% (Policies and Procedures
    # Manual 310.00) and the category's co-payment section says who pays the share.
    assisted: list[Section] = []
    core = manuals.policies("310.00")
    if core is not None:
        assisted.append(core)
    sa_sec = next((s for s in secs if s.section_id == "710" and s.rules), None)
    if sa_sec is not None:
        assisted.append(sa_sec)
    funding["adp_contribution"] = 100.0
    funding["client_share_percent"] = 0.0
    funding["client_share_paid_by"] = "social_assistance"
    words = "the program funds 100% and the client pays no co-payment"
    if usual:
        words += f" (for other clients {usual.replace('ADP pays', 'ADP would pay')})"
    return funding, assisted + used, words
