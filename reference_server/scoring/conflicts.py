"""Conflicts between sources: surfaced in every response, never hidden."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Conflict(BaseModel):
    field: str = Field(description="What the sources disagree on.")
    sql_value: Any = Field(default=None, description="What the structured (SQL) source says.")
    vector_value: Any = Field(default=None, description="What the passage (vector) source says.")
    resolution: str = Field(description="Which value the answer uses, and why.")


def compare(field: str, sql_value: Any, vector_value: Any, resolution: str) -> Conflict | None:
    """A conflict when both sides have a value and they differ (numbers compared to the cent)."""
    if sql_value is None or vector_value is None:
        return None
    if isinstance(sql_value, int | float) and isinstance(vector_value, int | float):
        if round(float(sql_value), 2) == round(float(vector_value), 2):
            return None
    elif str(sql_value).strip().lower() == str(vector_value).strip().lower():
        return None
    return Conflict(
        field=field, sql_value=sql_value, vector_value=vector_value, resolution=resolution
    )
