"""Confidence as the specs define it, in one place, line by line against their wording.

The specs (seeds 000/001 for the seven opa.* tools, 002 for the five Dr. OFF tools) say:

  000/001 "Confidence Scoring" (opa.search_sections, used by every section-level opa.* tool):
    "Base 0.9 for SQL hits with vector corroboration"      -> OPA: base 0.9 needs >= 1 corroborated hit
    "Base 0.6 for vector-only results"                     -> OPA: base 0.6 without corroboration
    "+0.03 per additional corroborating passage"           -> OPA: 0.03 x (passages - 1), the first
                                                              passage earns the base, not the boost
    "-0.1 for conflicts between sources"                   -> 0.1 once when any conflict exists
  000/001 `utils/confidence.py`: `boost = min(0.15, ...)`,  -> OPA boost capped at 0.15,
    `penalty = 0.1 if has_conflicts else 0.0`,                penalty a flag, result <= 1.0
    `min(1.0, base + boost - penalty)`
  002 "Confidence Scoring Formula" (all Dr. OFF tools):
    "base_score = 0.9 (if SQL hit) or 0.6 (if vector only)" -> OFF: base 0.9 on any SQL hit
    "0.03 * num_vector_matches (max +0.15)"                 -> OFF: every corroborating passage counts
    "+ 0.02 * (num_sql_records - 1) (max +0.06)"            -> OFF: extra SQL records, capped
    "penalties = 0.1 * has_conflict"                        -> 0.1 once, however many conflicts
  002 schedule.get: "+0.03 per corroborating vector passage (max +0.09)" -> SCHEDULE cap 0.09
  002 odb.get: "0.0 if no data found at all"                -> 0.0 with no evidence (every profile)

Where the specs are silent we decide, and say so here:
  - OPA, SQL hit(s) with no vector corroboration: 000/001 give 0.9 only "with vector corroboration"
    and 002's error handling gives single-path answers "lower confidence", so the base is 0.6.
  - OPA without corroboration, "additional corroborating passages" are vector passages beyond the
    first (they agree with each other, not with SQL); SQL-only hits add nothing.
  - The result is clamped to [0.0, 1.0] and rounded to 4 places (conflicts can push it below 0).
"""

from __future__ import annotations

from dataclasses import dataclass

BASE_CORROBORATED = 0.9  # "Base 0.9 for SQL hits" (002) / "... with vector corroboration" (000/001)
BASE_SINGLE_PATH = 0.6  # "Base 0.6 for vector-only results"
PER_PASSAGE = 0.03  # "+0.03 per (additional) corroborating passage"
PER_SQL_RECORD = 0.02  # "0.02 * (num_sql_records - 1)" (002 only)
CONFLICT_PENALTY = 0.1  # "penalties = 0.1 * has_conflict"


@dataclass(frozen=True)
class ConfidenceProfile:
    """How one family of tools reads the formula (see the module docstring for the wording)."""

    name: str = "off"
    vector_cap: float = 0.15
    sql_record_cap: float = 0.0
    # OPA: the 0.9 base needs an SQL hit the vector path also found.
    base_needs_corroboration: bool = False
    # OPA: "+0.03 per *additional* corroborating passage" (the first one earned the base).
    boost_additional_only: bool = False


OPA = ConfidenceProfile(
    "opa",
    vector_cap=0.15,
    sql_record_cap=0.0,
    base_needs_corroboration=True,
    boost_additional_only=True,
)
OFF = ConfidenceProfile("off", vector_cap=0.15, sql_record_cap=0.06)
SCHEDULE = ConfidenceProfile("schedule", vector_cap=0.09, sql_record_cap=0.06)


def calculate_confidence(
    num_sql_results: int,
    num_vector_results: int,
    num_conflicts: int = 0,
    profile: ConfidenceProfile = OPA,
    *,
    num_corroborated: int | None = None,
) -> float:
    """Score 0.0-1.0 from how much evidence each path produced and whether the sources disagreed.

    `num_vector_results` counts the vector passages that corroborate the answer. For the OPA
    profile, `num_corroborated` is how many passages corroborate an SQL hit (found by both paths);
    when a caller leaves it out, its `num_vector_results` is taken to be that count (provided SQL
    hit at all), which is how the pre-profile call sites counted. `num_conflicts` only matters as zero / not
    zero: the specs penalise "conflicts" once, not per conflict.
    """
    if num_sql_results <= 0 and num_vector_results <= 0:
        return 0.0  # "0.0 if no data found at all"
    if profile.base_needs_corroboration:
        if num_sql_results <= 0:
            corroborated = 0  # nothing to corroborate
        elif num_corroborated is not None:
            corroborated = num_corroborated
        else:
            corroborated = num_vector_results
        if corroborated > 0:
            base, passages = BASE_CORROBORATED, corroborated
        else:
            base, passages = BASE_SINGLE_PATH, num_vector_results
    else:
        base = BASE_CORROBORATED if num_sql_results > 0 else BASE_SINGLE_PATH
        passages = num_vector_results
    counted = max(0, passages - 1) if profile.boost_additional_only else max(0, passages)
    passage_boost = min(profile.vector_cap, PER_PASSAGE * counted)
    sql_boost = min(profile.sql_record_cap, PER_SQL_RECORD * max(0, num_sql_results - 1))
    penalty = CONFLICT_PENALTY if num_conflicts > 0 else 0.0
    score = base + passage_boost + sql_boost - penalty
    return round(max(0.0, min(1.0, score)), 4)


@dataclass(frozen=True)
class Counts:
    """What the confidence formula reads (scoring/confidence.py): SQL records that answer,
    vector passages that corroborate, and for the OPA profile how many were found by both."""

    sql_records: int
    vector_passages: int
    profile: ConfidenceProfile = OPA
    corroborated: int | None = None
    # a tool's own deduction after the formula (an answer leading with an unverified fact)
    penalty: float = 0.0


def confidence_from(counts: Counts | None, conflicts: int) -> float:
    """The formula on a tool's counts (0.0 for a tool that publishes no confidence)."""
    if counts is None:
        return 0.0
    value = calculate_confidence(
        num_sql_results=counts.sql_records,
        num_vector_results=counts.vector_passages,
        num_conflicts=conflicts,
        profile=counts.profile,
        num_corroborated=counts.corroborated,
    )
    if counts.penalty and value:
        value = round(max(0.0, value - counts.penalty), 4)
    return value
