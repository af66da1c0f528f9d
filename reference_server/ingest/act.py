"""Health Insurance Act (Ontario) and Regulation 552 rules, re-derived.

The input CSVs are rules already extracted from the Act (section reference, condition list,
effect, durations, line range in the consolidated text). coverage.answer uses them for
eligibility questions (residency, physical presence, health-card duties), so we keep the
structure and the references, normalise the condition lists (two JSON shapes occur), tag a
topic by keyword, and re-express all prose (`effect`, `notes`, titles) with
`textrules.summarise` so that no 8-word run of the input is kept.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from ocm_common.json_types import JsonValue

from .textrules import guarding, norm_words, summarise

TOPICS: list[tuple[str, re.Pattern[str]]] = [
    ("physical_presence", re.compile(r"physical presence", re.I)),
    ("health_card", re.compile(r"health card|\bcard\b", re.I)),
    ("out_of_country", re.compile(r"outside canada|out[- ]of[- ]country|outside ontario", re.I)),
    ("residency", re.compile(r"\bresident|residency|eligible status", re.I)),
    ("ambulance", re.compile(r"ambulance", re.I)),
    ("dental", re.compile(r"dental|oral and maxillofacial", re.I)),
    ("physician_fees", re.compile(r"physician|basic fee|fee payable", re.I)),
    ("hospital_services", re.compile(r"hospital|in-patient|out-patient|outpatient", re.I)),
    ("personal_information", re.compile(r"personal information", re.I)),
    ("amendments", re.compile(r"amendment", re.I)),
]

HEALTH_CARD_OBLIGATIONS = {
    "surrender when not resident": "The card goes back to the General Manager once the holder is no longer an Ontario resident.",
    "non-transferable": "A health card is personal: it may not be lent or used by anyone else.",
    "present on request": "The insured person shows the card when a provider or hospital asks for it.",
    "unknown": "Health-card duty referenced at this section; the specific duty was not classified.",
}


def topic_of(*texts: str) -> str:
    joined = " ".join(t for t in texts if t)
    for name, rx in TOPICS:
        if rx.search(joined):
            return name
    return "other"


# The JSON cells of the Act extraction's CSVs (`condition_json`, `prerequisites_json`).


class ActCondition(TypedDict, total=False):
    """One condition of a rule: `{"key": ..., "op": ..., "value": ...}`."""

    key: str
    op: str  # "equals", "listed_in", "<", "between", ... (`_OPS`)
    value: JsonValue  # a string, number, yes/no or a list of them


class Durations(TypedDict, total=False):
    months: int
    repeatable: bool


class Prerequisites(TypedDict, total=False):
    prior_presence_days: int


class ConditionBlock(TypedDict, total=False):
    """The object form of `condition_json` (the other is a bare list of conditions)."""

    conditions: list[ActCondition]
    durations: Durations
    prerequisites: Prerequisites
    actors: list[str]
    description: str


def _conditions(raw: str) -> tuple[list[ActCondition], Durations, list[str], str]:
    """Both shapes -> (conditions, durations, actors, description)."""
    if not raw or not raw.strip():
        return [], {}, [], ""
    data: list[ActCondition] | ConditionBlock = json.loads(raw)
    if isinstance(data, list):
        return data, {}, [], ""
    return (
        data.get("conditions") or [],
        data.get("durations") or {},
        list(data.get("actors") or []),
        data.get("description") or "",
    )


def _short_value(value: JsonValue, source: str) -> JsonValue:
    if isinstance(value, str) and len(norm_words(value)) >= 8:
        return summarise(value, max_words=12, first_clause=False)
    if isinstance(value, list):
        return [_short_value(v, source) for v in value]
    return value


_OPS = {
    "equals": "=",
    "is": "=",
    "==": "=",
    "listed_in": "in",
    "includes": "includes",
    "in": "in",
    "<": "<",
    ">": ">",
    "<=": "<=",
    ">=": ">=",
    "between": "between",
}


def conditions_text(conds: list[ActCondition]) -> str:
    """Project format for a condition list: 'key op value; key op value' (lists joined by '|')."""
    parts = []
    for c in conds:
        op = str(c.get("op") or "").strip()
        op = _OPS.get(op, op.replace(" ", "_"))
        v = c.get("value")
        if isinstance(v, list):
            v = "|".join(str(x) for x in v)
        elif isinstance(v, bool):
            v = "yes" if v else "no"
        parts.append(f"{c.get('key')} {op} {v}".strip())
    return "; ".join(parts)


class EligibilityRow(TypedDict):
    """One act_eligibility_rule.csv row (its columns are these keys, in this order)."""

    rule_id: str | None
    section_ref: str | None
    topic: str
    revoked: bool
    heading: str
    conditions: str
    outcome: str
    note: str
    max_duration_months: int | None
    repeatable: bool | None
    prior_presence_days: int | None
    actors: str
    line_range: str | None


class HealthCardRow(TypedDict):
    rule_id: str | None
    section_ref: str | None
    obligation: str
    scope: str | None
    summary: str
    line_range: str | None


class StatusExtensionRow(TypedDict):
    ext_id: str | None
    section_ref: str | None
    population: str | None
    conditions: str
    outcome: str
    line_range: str | None


class DependantCarryoverRow(TypedDict):
    dep_id: str | None
    section_ref: str | None
    who: str | None
    anchor_population: str | None
    outcome: str
    prior_presence_days: int | None
    line_range: str | None


class UninsuredReferenceRow(TypedDict):
    ref_id: str | None
    act_pointer: str | None
    schedule_pointer: str | None
    exemplar: str | None
    line_range: str | None


ActRow = (
    EligibilityRow
    | HealthCardRow
    | StatusExtensionRow
    | DependantCarryoverRow
    | UninsuredReferenceRow
)


class ActMeta(TypedDict):
    extracted: list[str]  # the dates the rules were extracted on
    rows_in: dict[str, int]  # source rows per table


@dataclass
class ActResult:
    tables: dict[str, list[ActRow]]
    columns: dict[str, list[str]]
    meta: ActMeta = field(default_factory=lambda: ActMeta(extracted=[], rows_in={}))


def _read(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _int(s: str | None) -> int | None:
    s = (s or "").strip()
    return int(float(s)) if re.fullmatch(r"\d+(?:\.\d+)?", s) else None


def load(act_dir: Path) -> ActResult:
    """Load all act_*.csv; rewording avoids 8-word runs of any cell in them."""
    texts = [
        v for f in sorted(act_dir.glob("act_*.csv")) for row in _read(f) for v in row.values() if v
    ]
    with guarding(texts):
        return _load(act_dir)


def _reworded_conditions(conds: list[ActCondition], source: str = "") -> str:
    """`conditions_text` of a condition list, long values summarised."""
    return conditions_text([{**c, "value": _short_value(c.get("value"), source)} for c in conds])


def _note(text: str) -> str:
    """An effect or note re-expressed in at most 30 words."""
    return summarise(text, max_words=30, first_clause=False)


def _prerequisites(r: dict[str, str]) -> Prerequisites:
    raw = r.get("prerequisites_json") or ""
    return json.loads(raw) if raw.strip() else {}


def _load(act_dir: Path) -> ActResult:
    tables: dict[str, list[ActRow]] = {}
    columns: dict[str, list[str]] = {}
    dates: set[str] = set()
    rows_in: dict[str, int] = {}

    src = _read(act_dir / "act_eligibility_rule.csv")
    rows_in["act_eligibility_rule"] = len(src)
    out: list[EligibilityRow] = []
    for r in src:
        dates.add((r.get("created_at") or "")[:10])
        conds, durations, actors, description = _conditions(r.get("condition_json") or "")
        prereq = _prerequisites(r)
        title = (r.get("title") or "").strip()
        revoked = title.upper().startswith("REVOKED")
        effect = r.get("effect") or description
        out.append(
            {
                "rule_id": r.get("rule_id"),
                "section_ref": r.get("section_ref"),
                "topic": topic_of(effect, title),
                "revoked": revoked,
                "heading": "" if revoked else summarise(title.rstrip(". "), max_words=10),
                "conditions": _reworded_conditions(conds, effect),
                "outcome": _note(effect),
                "note": _note(r.get("notes") or ""),
                "max_duration_months": _int(r.get("max_duration_months"))
                or durations.get("months"),
                "repeatable": durations.get("repeatable"),
                "prior_presence_days": prereq.get("prior_presence_days"),
                "actors": ";".join(actors),
                "line_range": r.get("line_range"),
            }
        )
    out.sort(key=lambda x: int(str(x["rule_id"])))
    tables["act_eligibility_rule"] = list(out)
    columns["act_eligibility_rule"] = list(out[0]) if out else []

    src = _read(act_dir / "act_health_card_rule.csv")
    rows_in["act_health_card_rule"] = len(src)
    hc: list[HealthCardRow] = []
    for r in src:
        dates.add((r.get("created_at") or "")[:10])
        obligation = (r.get("obligation") or "unknown").strip()
        hc.append(
            {
                "rule_id": r.get("rule_id"),
                "section_ref": r.get("section_ref"),
                "obligation": obligation,
                "scope": r.get("scope"),
                "summary": HEALTH_CARD_OBLIGATIONS.get(
                    obligation, HEALTH_CARD_OBLIGATIONS["unknown"]
                ),
                "line_range": r.get("line_range"),
            }
        )
    hc.sort(key=lambda x: int(str(x["rule_id"])))
    tables["act_health_card_rule"] = list(hc)
    columns["act_health_card_rule"] = [
        "rule_id",
        "section_ref",
        "obligation",
        "scope",
        "summary",
        "line_range",
    ]

    src = _read(act_dir / "act_status_extension.csv")
    rows_in["act_status_extension"] = len(src)
    extensions: list[StatusExtensionRow] = [
        {
            "ext_id": r.get("ext_id"),
            "section_ref": r.get("section_ref"),
            "population": r.get("population"),
            "conditions": _reworded_conditions(_conditions(r.get("condition_json") or "")[0]),
            "outcome": _note(r.get("effect") or ""),
            "line_range": r.get("line_range"),
        }
        for r in src
    ]
    tables["act_status_extension"] = list(extensions)
    columns["act_status_extension"] = [
        "ext_id",
        "section_ref",
        "population",
        "conditions",
        "outcome",
        "line_range",
    ]

    src = _read(act_dir / "act_dependant_carryover.csv")
    rows_in["act_dependant_carryover"] = len(src)
    carryovers: list[DependantCarryoverRow] = [
        {
            "dep_id": r.get("dep_id"),
            "section_ref": r.get("section_ref"),
            "who": r.get("who"),
            "anchor_population": r.get("anchor_population"),
            "outcome": _note(r.get("effect") or ""),
            "prior_presence_days": _prerequisites(r).get("prior_presence_days"),
            "line_range": r.get("line_range"),
        }
        for r in src
    ]
    tables["act_dependant_carryover"] = list(carryovers)
    columns["act_dependant_carryover"] = [
        "dep_id",
        "section_ref",
        "who",
        "anchor_population",
        "outcome",
        "prior_presence_days",
        "line_range",
    ]

    src = _read(act_dir / "act_uninsured_reference.csv")
    rows_in["act_uninsured_reference"] = len(src)
    references: list[UninsuredReferenceRow] = [
        {
            "ref_id": r.get("ref_id"),
            "act_pointer": r.get("act_pointer"),
            "schedule_pointer": r.get("schedule_pointer"),
            "exemplar": r.get("exemplar"),
            "line_range": r.get("line_range"),
        }
        for r in src
    ]
    tables["act_uninsured_reference"] = list(references)
    columns["act_uninsured_reference"] = [
        "ref_id",
        "act_pointer",
        "schedule_pointer",
        "exemplar",
        "line_range",
    ]
    for f in (
        "act_status_extension.csv",
        "act_dependant_carryover.csv",
        "act_uninsured_reference.csv",
    ):
        for r in _read(act_dir / f):
            dates.add((r.get("created_at") or "")[:10])

    meta: ActMeta = {"extracted": sorted(d for d in dates if d), "rows_in": rows_in}
    return ActResult(tables, columns, meta)
