"""Confidence as the specs define it, in one place.

confidence = base + vector_boost + sql_boost - penalties
base        = 0.9 with an SQL hit, 0.6 with vector evidence only, 0.0 with nothing
vector_boost = 0.03 per corroborating vector passage, capped (0.15; schedule.get 0.09)
sql_boost    = 0.02 per additional SQL record, capped at 0.06 (Dr. OFF tools only)
penalties    = 0.1 per conflict between sources
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfidenceProfile:
    vector_cap: float = 0.15
    sql_record_cap: float = 0.0


OPA = ConfidenceProfile(vector_cap=0.15, sql_record_cap=0.0)
OFF = ConfidenceProfile(vector_cap=0.15, sql_record_cap=0.06)
SCHEDULE = ConfidenceProfile(vector_cap=0.09, sql_record_cap=0.06)


def calculate_confidence(
    num_sql_results: int,
    num_vector_results: int,
    num_conflicts: int = 0,
    profile: ConfidenceProfile = OPA,
) -> float:
    """Score 0.0-1.0 from how much evidence each path produced and how much it disagreed."""
    if num_sql_results > 0:
        base = 0.9
    elif num_vector_results > 0:
        base = 0.6
    else:
        return 0.0
    vector_boost = min(profile.vector_cap, 0.03 * num_vector_results)
    sql_boost = min(profile.sql_record_cap, 0.02 * max(0, num_sql_results - 1))
    score = base + vector_boost + sql_boost - 0.1 * num_conflicts
    return round(max(0.0, min(1.0, score)), 4)
