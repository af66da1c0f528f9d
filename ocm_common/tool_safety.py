"""Whether a tool may be called by a run that must not change anything: a tool is taken at
its annotations' word, and one that omits them is treated as one that may change state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def write_risk(annotations: Mapping[str, Any] | None) -> str | None:
    """Why a tool with these annotations may change state, or None when it says it cannot."""
    annotations = annotations or {}
    if annotations.get("destructiveHint") is True:
        return "destructiveHint: true (may destroy data)"
    if annotations.get("readOnlyHint") is not True:
        return "no readOnlyHint: true (may change state)"
    return None
