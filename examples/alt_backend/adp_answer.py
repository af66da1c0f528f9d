"""``adp.get`` answers: eligibility, exclusions, funding and the income check for the
client's share, each with the manual sections it comes from, and a summary in words.

The manuals' sections come from :class:`examples.alt_backend.adp.Manuals`; the question is read
by :mod:`examples.alt_backend.adp_terms`. The seeded defects ``section`` and ``slow`` act here.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from examples.alt_backend.adp import (
    CATEGORY_WORDS,
    CEP_ID,
    CEP_SOURCE,
    CEP_THRESHOLDS,
    Manuals,
    Section,
)
from examples.alt_backend.adp_funding import funding_terms
from examples.alt_backend.adp_terms import (
    CONCERNS,
    GENERIC_TERMS,
    find_device,
    find_household,
    find_income,
)
from examples.alt_backend.payloads import AdpResult, CepCheck, Citation, OtherCriteria
from examples.alt_backend.store import Passage, citation
from examples.alt_backend.text import terms

_NOT_FUNDED = re.compile(
    r"not (?:provide|be) fund|does not (?:provide|fund|pay)|not funded|no funding", re.I
)
_POLICY_Q = re.compile(
    r"\b(who (?:operates|runs|provides|supplies|repairs|pays)|operat(?:es|ed|or)|equipment pool|"
    r"lease|leasing|supplier|vendor|service agreement|co-?payment)\b",
    re.I,
)
_SA = (
    ("odsp", r"\bodsp\b|ontario disability support", "ODSP"),
    ("ontario_works", r"\bontario works\b|\bow\b", "Ontario Works"),
    ("acsd", r"\bacsd\b|assistance for children with severe disabilit", "ACSD"),
    ("social_assistance", r"social assistance|on welfare", "social assistance"),
)


def _neighbour(section_id: str) -> str:
    """The next section number (705 -> 710, 110.01 -> 115.01): the seeded 'section' defect."""
    head, _, tail = section_id.partition(".")
    bumped = str(int(head) + 5)
    return f"{bumped}.{tail}" if tail else bumped


@dataclass
class AdpRequest:
    query: str | None = None
    category: str | None = None
    device_type: str | None = None
    checks: list[str] | None = None
    patient_income: float | None = None
    social_assistance: str | None = None
    daily: bool | None = None
    location: str | None = None
    independent_transfer: bool | None = None


class AdpAnswer:
    def __init__(self, manuals: Manuals, defects: frozenset[str]):
        self.m = manuals
        self.defects = defects

    def _rule_loc(self, sec: Section) -> str:
        if "section" in self.defects:
            return f"{sec.title}, section {_neighbour(sec.section_id)}"
        return sec.loc

    def answer(self, req: AdpRequest) -> AdpResult:
        if "slow" in self.defects:
            time.sleep(0.3)
        text = " ".join(x for x in (req.query, req.device_type) if x)
        checks = set(req.checks or ["eligibility", "exclusions", "funding", "cep"])
        device, category = find_device(text)
        if req.category:
            category = req.category
        if device is None and req.device_type:
            device = req.device_type.strip()
        notes: dict[str, str] = {}
        cited: list[tuple[Section, str]] = []  # (section, loc)

        def cite(sec: Section | None, loc: str | None = None) -> None:
            if sec is not None and all(
                s.chunk_id != sec.chunk_id or where != (loc or sec.loc) for s, where in cited
            ):
                cited.append((sec, loc or sec.loc))

        specific = [t for t in terms(text) if t not in GENERIC_TERMS]
        if category is None and specific:
            hits = self.m.search(" ".join(specific), k=3)
            if hits and hits[0].category != "core_manual":
                category = hits[0].category
                notes["category"] = f"{category}, from the closest manual section ({hits[0].loc})"
        elif device:
            notes["category"] = f"{category} (device read as '{device}')"

        # social assistance, income, household
        sa_key, sa_name = None, None
        if req.social_assistance and req.social_assistance != "none":
            sa_key = req.social_assistance
            sa_name = {k: n for k, _, n in _SA}.get(sa_key, sa_key)
        elif req.social_assistance is None and req.query:
            for key, pat, name in _SA:
                if re.search(pat, req.query, re.I) and not (
                    key == "ontario_works" and "ow" not in req.query.lower().split()
                ):
                    sa_key, sa_name = key, name
                    break
        if sa_name:
            notes["social_assistance"] = f"client receives {sa_name}"
        income, income_words = (
            (req.patient_income, "patient_income")
            if req.patient_income is not None
            else find_income(req.query or "")
        )
        household, stated = find_household(req.query or "")
        if income is not None:
            notes["income"] = f"${income:,.0f} a year (from {income_words!r})"
            notes["household"] = household + (
                "" if stated else " (not stated; the single threshold applies)"
            )

        concerns = [c for c in CONCERNS if req.query and re.search(c[2], req.query, re.I)]
        policy_q = bool(req.query and _POLICY_Q.search(req.query))
        missing_topic = self._unmentioned_topic(req.query or "")
        if missing_topic:
            notes["not_in_manuals"] = (
                f"'{missing_topic}' is not mentioned in any ADP manual section here"
            )

        out: AdpResult = {
            "provenance": [],
            "confidence": 0.5,
            "summary": "",
            "interpretation_notes": notes,
            "context": "",
            "eligibility": None,
            "exclusions": [],
            "policy_rules": [],
            "funding": None,
            "cep": None,
            "lead": "device",
            "citations": [],
            "conflicts": [],
        }
        if category is None:
            out["lead"] = "unknown_device"
            out["summary"] = (
                "No ADP device or category recognised in the question; name the device "
                "(e.g. walker, hearing aid, CPAP) or pass device.category."
            )
            return out

        out["provenance"] = ["sql"]
        label = device or CATEGORY_WORDS.get(category, category)
        # device description sections
        for sec in self.m.search(f"{label} {text}", category, k=2):
            cite(sec)

        # ---- eligibility
        not_eligible = [c for c in concerns if c[0] in ("transport", "single_purpose")]
        basic: bool | None = None
        if category == "mobility":
            if not_eligible:
                basic = False
            elif req.daily or (req.query and re.search(r"\bdaily\b|every day", req.query, re.I)):
                basic = True
        elig_secs = [
            s
            for s in self.m.by_category[category]
            if re.search(r"basic .*requirement|eligib", s.heading, re.I)
        ]
        for sec in elig_secs[:1]:
            cite(sec)
        if "eligibility" in checks:
            other: OtherCriteria = {"category": category, "device": label}
            if req.location:
                other["location"] = req.location
            if req.independent_transfer is not None:
                other["independent_transfer"] = req.independent_transfer
            if concerns:
                other["concerns"] = [c[0] for c in concerns]
            out["eligibility"] = {
                "basic_mobility": basic,
                "ontario_resident": True
                if req.query and re.search(r"ontario resident|lives in ontario", req.query, re.I)
                else None,
                "valid_prescription": None,
                "other_criteria": other,
            }

        # ---- exclusions
        exclusion_lines: list[str] = []
        wanted = concerns or [c for c in CONCERNS if c[0] in ("batteries", "repairs")]
        for key, what, _, text_pat in wanted:
            refusing = self._refusing_section(category, text_pat)
            if refusing is None:
                continue
            exclusion_lines.append(f"{what}: ADP does not fund this ({refusing.loc}).")
            if key in {c[0] for c in concerns} or "exclusions" in checks:
                cite(refusing)
        if "exclusions" in checks:
            out["exclusions"] = exclusion_lines

        # ---- funding
        funding, used, funding_words = funding_terms(self.m, category, label, sa_key is not None)
        rule_secs = [s for s in used if s.rules]
        for sec in used:
            cite(sec, self._rule_loc(sec) if sec in rule_secs else None)
        repair_sec = self._refusing_section(category, r"repair")
        if funding is not None:
            funding["repair_coverage"] = (
                f"ADP pays nothing toward repairs or maintenance ({repair_sec.loc})"
                if repair_sec
                else None
            )
        cep: CepCheck | None = None
        if income is not None:
            threshold = CEP_THRESHOLDS[household]
            eligible = income <= threshold
            standard = 25.0
            share = funding["client_share_percent"] if funding is not None else None
            if share is not None and sa_key is None:
                standard = float(share)
            cep = {
                "income_threshold": threshold,
                "eligible": eligible,
                "client_share": 0.0 if eligible else standard,
            }
            if funding is not None and eligible and sa_key is None:
                funding["client_share_percent"] = 0.0
                funding["client_share_paid_by"] = None
        if "funding" in checks:
            out["funding"] = funding
        if "cep" in checks:
            out["cep"] = cep

        # ---- policy rules
        if policy_q:
            for sec, sentence in self._policy_rules(text, category):
                out["policy_rules"].append(f"{sentence} ({sec.loc})")
                cite(sec)

        # ---- lead and summary
        if not_eligible:
            out["lead"] = "not_eligible"
        elif policy_q and out["policy_rules"]:
            out["lead"] = "policy_rules"
        out["summary"] = self._summary(
            out,
            label,
            category,
            funding_words,
            sa_name,
            income,
            household,
            not_eligible,
            cited,
            missing_topic,
        )
        context = [f"{s.loc}: {s.body()[:400]}" for s, _ in cited[:4]]
        out["context"] = "\n".join(context)
        cites: list[Citation] = [citation(self._passage(s), loc) for s, loc in cited]
        if cep is not None:
            cites.append(
                {
                    "source": CEP_SOURCE,
                    "loc": "Dr. OFF MCP Tools Specification, adp.get step 7 (CEP income thresholds)",
                    "chunk_id": CEP_ID,
                    "page": None,
                }
            )
        out["citations"] = cites
        base = 0.9 if funding is not None and rule_secs else 0.75
        out["confidence"] = round(min(0.99, base + 0.03 * min(3, max(0, len(cited) - 1))), 2)
        return out

    def _passage(self, sec: Section) -> Passage:
        return Passage(sec.chunk_id, sec.body(), f"ADP {sec.title}", sec.section_id, sec.page)

    def _refusing_section(self, category: str, text_pat: str) -> Section | None:
        """The category's section with a not-funded sentence about the thing."""
        for sec in self.m.by_category[category]:
            body = f"{sec.heading}. {sec.body()}"
            for sentence in re.split(r"(?<=[.;:])\s+", body):
                if _NOT_FUNDED.search(sentence) and re.search(text_pat, sentence, re.I):
                    return sec
        return None

    def _policy_rules(self, text: str, category: str | None) -> list[tuple[Section, str]]:
        out: list[tuple[Section, str]] = []
        q = terms(text)
        scored = []
        for sec in self.m.by_category.get(category or "", []) or self.m.all:
            for r in sec.rules:
                overlap = len(set(q) & set(terms(r["details"])))
                if overlap:
                    scored.append((overlap, sec, r["details"]))
        scored.sort(key=lambda x: -x[0])
        top = scored[0][0] if scored else 0
        for overlap, sec, details in scored:
            sentence = details.split(" • ")[0].rstrip(".")
            if overlap < top or len(sentence.split()) < 6 or sentence.upper().startswith("NOTE"):
                continue  # weaker matches, page-header fragments and cross-references
            out.append((sec, sentence))
            if len(out) == 3:
                break
        return out

    def _unmentioned_topic(self, query: str) -> str | None:
        """What 'is there a X' asks about, when no manual section mentions X."""
        m = re.search(r"\bis there (?:an? |any )?([a-z][\w\-]*(?: [a-z][\w\-]*)?)", query, re.I)
        if not m:
            return None
        topic = m.group(1).lower()
        topic = re.sub(r"\s+(for|to|in|on|of|with)$", "", topic)
        first = topic.split()[0]
        if first in {"funding", "coverage", "a", "an"} or self.m.mentions(topic):
            return None
        return topic

    def _summary(
        self,
        out: AdpResult,
        label: str,
        category: str,
        funding_words: str,
        sa_name: str | None,
        income: float | None,
        household: str,
        not_eligible: list[tuple[str, str, str, str]],
        cited: list[tuple[Section, str]],
        missing_topic: str | None,
    ) -> str:
        if out["lead"] == "not_eligible":
            sec = self._refusing_section(category, not_eligible[0][3])
            where = f" ({sec.loc})" if sec else ""
            use = not_eligible[0][1][0].lower() + not_eligible[0][1][1:]
            return (
                f"Not fundable as asked: ADP does not pay for a {label} meant for "
                f"{use.removeprefix('use ')}{where}; funding needs a basic daily mobility need."
                if category == "mobility"
                else f"Not fundable as asked: ADP does not pay for a {label} meant for "
                f"{use.removeprefix('use ')}{where}."
            )
        if out["lead"] == "policy_rules":
            return out["policy_rules"][0]
        bits = [f"{label[0].upper()}{label[1:]} ({CATEGORY_WORDS.get(category, category)})"]
        if out["funding"] is None and not funding_words:
            bits.append(
                "the manual sections in this extract give no funding share or amount for it"
            )
        if funding_words and sa_name:
            bits.append(f"for a client on {sa_name}, {funding_words}")
        elif funding_words:
            bits.append(funding_words)
        cep = out.get("cep")
        if cep is not None and income is not None:
            if cep["eligible"]:
                bits.append(
                    f"with an income of ${income:,.0f} ({household}), at or under the "
                    f"${cep['income_threshold']:,.0f} threshold, the client's share drops to 0%"
                )
            else:
                bits.append(
                    f"an income of ${income:,.0f} ({household}) is above the "
                    f"${cep['income_threshold']:,.0f} threshold, so the usual share stays"
                )
        refused = [line.split(":")[0].lower() for line in out["exclusions"]][:2]
        eligibility = out["eligibility"]
        concerns = eligibility["other_criteria"].get("concerns", []) if eligibility else []
        if refused and any(c in concerns for c in ("batteries", "repairs")):
            bits.append("not funded: " + " and ".join(refused))
        if missing_topic:
            bits.append(
                f"the manuals here say nothing about a {missing_topic}: they describe only the "
                "standard assessment and application steps"
            )
        return "; ".join(bits) + "."
