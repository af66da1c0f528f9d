"""The ADP exclusion vocabulary: the kinds of exclusion the manuals state, the pattern that
recognises each in a not-funded context, our own sentence for each, and the mapping from the
rule table's exclusion phrases.

`adp` matches these against the manual sentences and the exclusion CSV; a fixed vocabulary
keeps the exclusions comparable across the eleven manuals.
"""

from __future__ import annotations

import re
from typing import NotRequired, TypedDict

# exclusion key -> (pattern, our own description)
EXCLUSIONS: dict[str, tuple[re.Pattern[str], str]] = {
    "batteries": (
        re.compile(r"batter(?:y|ies)", re.I),
        "Replacement batteries are the client's cost; ADP does not pay for them.",
    ),
    "repairs_maintenance": (
        re.compile(r"\brepairs?\b|maintenance", re.I),
        "Repairs and upkeep of a funded device are not paid by ADP.",
    ),
    "education_work_recreation_only": (
        re.compile(
            r"(?:school|education|work|employment|sports?|recreation|leisure|social activit)[^.;]{0,60}\b(?:only|purpose)|one purpose such as|solely for (?:school|work|recreation|sport)",
            re.I,
        ),
        "A device needed only for school, a job, sport or leisure does not qualify.",
    ),
    "alternative_transport": (
        re.compile(
            r"alternat\w* (?:means of )?transport|car substitute|substitute for a car|outdoor use only|intermittent(?:ly)? use",
            re.I,
        ),
        "Devices meant to replace a car or used only now and then (e.g. outdoors) are not funded.",
    ),
    "backup_spare_duplicate": (
        re.compile(r"back-?up|spare|duplicate", re.I),
        "A second, spare or back-up device is not funded.",
    ),
    "cosmetic": (
        re.compile(r"cosmetic", re.I),
        "Items chosen for appearance rather than function are not funded.",
    ),
    "therapy_training_only": (
        re.compile(
            r"(?:training|exercise|therapy|therapeutic|treatment)\s+(?:purposes?\s+)?only|used for (?:treatment|therapy|exercise|training)|for treatment purposes",
            re.I,
        ),
        "Devices used only for therapy, exercise or training are outside ADP.",
    ),
    "bought_before_approval": (
        re.compile(
            r"(?:purchased|leased|bought|authorized)[^.;]{0,40}before[^.;]{0,40}(?:authori[sz]ed|approved)",
            re.I,
        ),
        "Devices bought or leased before ADP approval cannot be reimbursed.",
    ),
    "unregistered_supplier": (
        re.compile(r"not registered|out-of-province|outside (?:of )?ontario", re.I),
        "Devices from a supplier not registered with ADP, or outside Ontario, are not funded.",
    ),
    "warranty_fees": (
        re.compile(r"extended warrant|service plans?|handling fees?", re.I),
        "Extended warranties, service plans and handling fees are not covered.",
    ),
    "used_devices": (
        re.compile(r"used devices|previously used|rebuilt", re.I),
        "Used or rebuilt devices are not eligible for ADP funding.",
    ),
    "other_payer": (
        re.compile(
            r"WSIB|Workplace Safety|Veterans Affairs|National Defence|Non-Insured Health Benefits|Correctional",
            re.I,
        ),
        "Not funded when another payer (e.g. WSIB, Veterans Affairs, federal programs) is responsible.",
    ),
}
CSV_EXCLUSION_KEYS = {
    "education/work/recreation only": "education_work_recreation_only",
    "training/exercise/therapy only": "therapy_training_only",
    "alternative transport / intermittent use": "alternative_transport",
    "backup/spare/duplicate": "backup_spare_duplicate",
    "general": "general_not_funded",
}
GENERAL_NOT_FUNDED = "The section lists items that the ADP does not fund."
NOT_FUNDED = re.compile(
    r"not (?:be )?(?:funded|covered|eligible)|does not (?:provide|fund|cover)|will not (?:fund|pay|provide)|"
    r"no funding|not provide (?:any )?(?:adp )?(?:funding|coverage)|ineligible|non-eligible|excluded|exclusion",
    re.I,
)
NOT_FUNDED_TITLE = re.compile(
    r"not funded|ineligible|non-eligible|repairs/batteries|exclusion", re.I
)


class ExclusionRow(TypedDict):
    """One adp_exclusion.csv row (`exclusion_id` is given once all rows are sorted)."""

    adp_doc: str
    device_category: str
    section_ref: str
    policy_uid: str
    page_num: int | None
    exclusion: str
    description: str
    evidence: str
    exclusion_id: NotRequired[str]


EXCLUSION_COLUMNS = [
    "exclusion_id",
    "adp_doc",
    "device_category",
    "section_ref",
    "policy_uid",
    "page_num",
    "exclusion",
    "description",
    "evidence",
]
