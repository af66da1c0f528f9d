"""ODB eligibility from the patient context coverage.answer is given (age, setting, plan).

The rules are the structured part of corpus/off/odb_policy.yaml chunk 'Who the ODB program
covers' (65 and over; under 25 through OHIP+ without a private plan; long-term care residents),
read once from the committed corpus and cited by its chunk id.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from reference_server.catalog import odb_policy_id
from reference_server.config import CORPUS_DIR
from reference_server.retrieval.derived import PROCESS


@dataclass(frozen=True)
class EligibilityRules:
    """ODB eligibility by age and setting (corpus/off/odb_policy.yaml, 'eligibility')."""

    chunk_id: str
    title: str
    min_age: int
    ohip_plus_below_age: int
    settings: frozenset[str]


def eligibility_rules() -> EligibilityRules | None:
    """Read once from the committed corpus (like the formulary edition odb.get cites)."""
    return PROCESS.get("odb_eligibility_rules", _eligibility_rules)


def _eligibility_rules() -> EligibilityRules | None:
    try:
        data = yaml.safe_load((CORPUS_DIR / "off" / "odb_policy.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    for chunk in (data or {}).get("chunks") or []:
        rules = chunk.get("eligibility")
        if rules:
            return EligibilityRules(
                chunk_id=odb_policy_id(chunk["n"]),
                title=chunk["title"],
                min_age=int(rules["min_age"]),
                ohip_plus_below_age=int(rules["ohip_plus_below_age"]),
                settings=frozenset(rules.get("settings") or ()),
            )
    return None


def odb_eligible(
    age: int | None, setting: str | None, plan: str | None
) -> tuple[bool | None, str | None]:
    """Whether ODB pays for this patient at all (None: not known from the request), and why."""
    rules = eligibility_rules()
    if rules is None or plan == "ODB":
        return (True if plan == "ODB" else None), None
    if setting in rules.settings:
        return True, "ODB-eligible: residents of long-term care homes are covered."
    if age is None:
        return None, None
    if age >= rules.min_age:
        return True, f"ODB-eligible by age ({rules.min_age} or over)."
    if age < rules.ohip_plus_below_age:
        if plan == "private":
            return False, (
                f"Under {rules.ohip_plus_below_age} with a private drug plan: OHIP+ does not "
                "apply, the private plan pays."
            )
        if plan == "none":
            return True, (
                f"ODB-eligible through OHIP+ (under {rules.ohip_plus_below_age}, no private plan)."
            )
        return None, (
            f"Under {rules.ohip_plus_below_age}: ODB pays through OHIP+ only if the patient has no "
            "private drug plan."
        )
    return False, (
        f"Aged {age}: not ODB-eligible by age; between {rules.ohip_plus_below_age} and "
        f"{rules.min_age - 1} ODB pays only through Ontario Works/ODSP, the Trillium Drug Program, "
        "home and community care or a long-term care home."
    )
